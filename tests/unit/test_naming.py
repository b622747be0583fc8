"""The naming rules (:mod:`anycdc.naming`): folders that stay inside the target and fit a
file system, columns Delta can hold side by side — pure, no Spark."""

from __future__ import annotations

import posixpath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anycdc.config import PipelineConfig
from anycdc.naming import (
    DELTA_INVALID,
    MAX_SEGMENT_BYTES,
    assign_columns,
    is_portable,
    is_reserved,
    needs_column_mapping,
    path_segment,
    portable_name,
    sha_hex,
    shortened,
    source_comment,
    source_of,
)

FOLDERS = [
    # (source name, folder)
    ("orders", "orders"),
    ("..", "_.."),
    (".", "_."),
    ("../../etc", "_.._.._etc"),
    ("a/b", "a_b"),
    ("a\\b", "a_b"),
    (".hidden", "_.hidden"),
    ("_anycdc", "__anycdc"),
    ("_anycdc_x", "__anycdc_x"),
    ("nul\0byte", "nul_byte"),
    ("select", "select"),
    ("quote'\"back`tick", "quote'\"back`tick"),
    ("emoji 😀", "emoji 😀"),
    ("a*b?[c]{d}", "a*b?[c]{d}"),
    ("表", "表"),
]


@pytest.mark.parametrize(("name", "folder"), FOLDERS)
def test_folder_names(name: str, folder: str) -> None:
    assert path_segment(name) == folder


def test_a_name_too_long_for_a_folder_is_cut_with_a_hash() -> None:
    name = "表" * 128  # a 128-character SQL Server / Oracle name: 384 bytes of UTF-8
    folder = path_segment(name)
    assert len(folder.encode()) <= MAX_SEGMENT_BYTES
    assert folder.startswith("表" * 79) and folder.endswith("~" + sha_hex(name, 16))
    assert shortened(name) and not shortened("表" * 85)  # 255 bytes fit
    # one character more is another folder; the same name always the same one
    assert path_segment(name + "表") != folder and path_segment(name) == folder


@given(st.lists(st.text(min_size=1, max_size=200), min_size=1, max_size=3))
def test_no_table_path_leaves_the_target(parts: list[str]) -> None:
    config = PipelineConfig(target="/lake/out")
    path = config.table_path(*([None] * (3 - len(parts))), *parts)  # type: ignore[arg-type]
    assert posixpath.normpath(path).startswith("/lake/out/")
    relative = path.removeprefix("/lake/out/").split("/")
    assert len(relative) == len(parts)
    for segment in relative:
        assert segment not in ("", ".", "..") and not segment.startswith((".", "_anycdc"))
        assert len(segment.encode("utf-8", "surrogatepass")) <= MAX_SEGMENT_BYTES


def test_columns_delta_rejects_need_column_mapping() -> None:
    for name in ["Order Date", "a.b", "x,y", "a;b", "{p}", "(q)", "k=v", "tab\t", "new\nline"]:
        assert needs_column_mapping(name), name
    for name in ["id", "名前", "emoji😀", "quote'\"", "back`tick", "select", "Name"]:
        assert not needs_column_mapping(name), name


def test_collisions_get_a_hashed_name_the_first_keeps_its_own() -> None:
    names = assign_columns(["id", "Name", "name", "NAME", "_cdc_op", "_CDC_Position"], {})
    assert names == {
        "id": "id",
        "Name": "Name",
        "name": f"name__{sha_hex('name', 8)}",
        "NAME": f"NAME__{sha_hex('NAME', 8)}",
        "_cdc_op": f"_cdc_op__{sha_hex('_cdc_op', 8)}",
        "_CDC_Position": f"_CDC_Position__{sha_hex('_CDC_Position', 8)}",
    }
    assert len({t.lower() for t in names.values()}) == len(names)
    assert is_reserved("_Cdc_x") and not is_reserved("cdc_x")


def test_assignments_are_kept_across_batches() -> None:
    first = assign_columns(["Name"], {})
    later = assign_columns(["name", "Name", "other"], first)
    assert later == {"Name": "Name", "name": f"name__{sha_hex('name', 8)}", "other": "other"}
    # the table's order, not the batch's: 'name' arrived second, whatever the batch says
    assert assign_columns(["name", "Name"], {"Name": "Name"})["Name"] == "Name"


def test_a_hashed_name_that_is_taken_gets_more_digits() -> None:
    taken = f"name__{sha_hex('name', 8)}"
    names = assign_columns(["Name", taken, "name"], {})
    assert names["name"] == f"name__{sha_hex('name', 12)}"


@given(st.lists(st.text(min_size=1, max_size=12), max_size=12))
def test_assigned_names_never_collide(sources: list[str]) -> None:
    names = assign_columns(sources, {})
    targets = [t.lower() for t in names.values()]
    assert len(targets) == len(set(targets))
    # anycdc's namespace is anycdc's: a source name in it never keeps its name
    assert all(t != s for s, t in names.items() if is_reserved(s))


PORTABLE = [
    # (source name, its portable name)
    ("id", "id"),
    ("Order_ID", "Order_ID"),
    ("_private", "_private"),
    ("2fa", "2fa"),
    ("Order Date", f"Order_Date__{sha_hex('Order Date', 8)}"),
    ("a.b", f"a_b__{sha_hex('a.b', 8)}"),
    ("x,y;z", f"x_y_z__{sha_hex('x,y;z', 8)}"),
    ("{p}(q)", f"p_q__{sha_hex('{p}(q)', 8)}"),
    ("tab\there", "tab_here__" + sha_hex("tab\there", 8)),
    ("名前", f"col__{sha_hex('名前', 8)}"),
    ("prix€", f"prix__{sha_hex('prix€', 8)}"),
    ("emoji😀", f"emoji__{sha_hex('emoji😀', 8)}"),
    ("select", "select"),
    ("_cdc_op", f"cdc_op__{sha_hex('_cdc_op', 8)}"),
    ("_CDC_TS", f"CDC_TS__{sha_hex('_CDC_TS', 8)}"),
    ("", f"col__{sha_hex('', 8)}"),
]


@pytest.mark.parametrize(("source", "target"), PORTABLE)
def test_portable_names_are_plain_ascii_and_hashed_when_changed(source: str, target: str) -> None:
    assert portable_name(source) == target
    assert is_portable(target) and not needs_column_mapping(target)


@given(st.text(max_size=20))
def test_a_portable_name_is_valid_deterministic_and_idempotent(source: str) -> None:
    target = portable_name(source)
    assert target == portable_name(source)  # no state, no salt: every run, every batch
    assert portable_name(target) == target
    assert target.isascii() and target and not is_reserved(target)
    assert not any(c in DELTA_INVALID or c == "." for c in target)
    assert (target == source) == is_portable(source)


@given(st.lists(st.text(max_size=12), max_size=16, unique=True))
def test_portable_assignments_are_injective_portable_and_stable(sources: list[str]) -> None:
    names = assign_columns(sources, {}, "portable")
    targets = [t.lower() for t in names.values()]
    assert len(targets) == len(set(targets))  # injective, ignoring case as Delta does
    assert all(is_portable(t) for t in names.values())
    # a column added later gets the name it would have got in the first batch, and the
    # columns named before keep theirs
    half = len(sources) // 2
    first = assign_columns(sources[:half], {}, "portable")
    assert assign_columns(sources, first, "portable") == names
    # assigned again over the table's own names: nothing changes
    assert assign_columns(sources, names, "portable") == names


def test_portable_collisions_are_resolved_as_exact_ones() -> None:
    spaced = portable_name("a b")
    names = assign_columns(["Name", "name", "a b", spaced, "_cdc_op"], {}, "portable")
    assert names == {
        "Name": "Name",
        "name": f"name__{sha_hex('name', 8)}",
        "a b": spaced,
        spaced: f"{spaced}__{sha_hex(spaced, 8)}",  # a source already named like a target
        "_cdc_op": f"cdc_op__{sha_hex('_cdc_op', 8)}",
    }


def test_a_table_keeps_its_names_when_the_scheme_changes() -> None:
    exact = assign_columns(["id", "Order Date"], {})
    assert exact == {"id": "id", "Order Date": "Order Date"}
    later = assign_columns(["id", "Order Date", "Ship Date"], exact, "portable")
    assert later["Order Date"] == "Order Date"  # kept: the table has it so
    assert later["Ship Date"] == portable_name("Ship Date")
    back = assign_columns(["Ship Date", "Due Date"], later, "exact")
    assert back["Ship Date"] == portable_name("Ship Date") and back["Due Date"] == "Due Date"


def test_an_unknown_scheme_is_refused() -> None:
    with pytest.raises(ValueError, match="column_names must be exact or portable"):
        assign_columns(["a"], {}, "loose")  # type: ignore[arg-type]


def test_the_source_name_rides_in_the_comment() -> None:
    odd = "name\n'`😀"
    assert source_of(f"x__{sha_hex(odd, 8)}", source_comment(odd)) == odd
    assert source_of("plain", "a comment of the user's") == "plain"


def test_partition_values_fit_a_folder_name() -> None:
    from anycdc.naming import partition_value

    short = "shop/orders"
    assert partition_value(short, "table") == short
    # a table folder of 254 bytes under its database: the partition folder would not fit
    long = "shop/" + path_segment("表" * 128)
    assert partition_value(long, "table") == "~" + sha_hex(long, 32)
    # escaped characters count three bytes each, as Spark writes them
    assert partition_value("/" * 83, "table") == "/" * 83  # 6 + 249 bytes
    assert partition_value("/" * 84, "table").startswith("~")
