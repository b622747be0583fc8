"""``anycdc.verify`` without Spark: values per logical type, multisets, schema differences."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from anycdc.verify import compare_rows, compare_schema, compare_table, describe, same_value

UTC = dt.UTC


@pytest.mark.parametrize(
    ("expected", "actual", "ltype"),
    [
        (Decimal("1.10"), Decimal("1.1000"), "decimal(18,4)"),
        (2**64 - 1, Decimal("18446744073709551615"), "uint64"),  # DECIMAL(20,0) read back
        (1.1, 1.100000023841858, "float32"),  # FLOAT holds 32 bits
        (0.1, 0.1, "float64"),
        (dt.time(1, 2, 3, 400000), "01:02:03.400000", "time"),  # TIME is stored as text
        (b"\x00\xff", bytearray(b"\x00\xff"), "binary"),
        (dt.date(1950, 3, 4), dt.date(1950, 3, 4), "date"),
        (dt.datetime(2024, 5, 1, 8, 0, 0, 5), dt.datetime(2024, 5, 1, 8, 0, 0, 5), "timestamp"),
        ('{"a": 1}', '{"a": 1}', "json"),
        ("7", "7", "string"),
        (True, True, "boolean"),
        (1, 1, "int8"),
    ],
)
def test_equal_by_meaning_under_the_logical_type(
    expected: object, actual: object, ltype: str
) -> None:
    assert same_value(expected, actual, ltype)


@pytest.mark.parametrize(
    ("expected", "actual", "ltype"),
    [
        (Decimal("1.10"), Decimal("1.11"), "decimal(18,4)"),
        (0.1, 0.10000000149011612, "float64"),  # a DOUBLE that went through a FLOAT
        (dt.time(1, 2, 3), "01:02:04", "time"),
        (b"\x00", b"", "binary"),
        (dt.date(2024, 1, 1), dt.datetime(2024, 1, 1), "date"),
        ("1", 1, "string"),  # a text column holds text
        ("", None, "string"),  # an empty string is not NULL
        (Decimal("1.5"), 1.5, "decimal(10,1)"),  # a DECIMAL must not come back as a float
        (True, 1, "string"),
    ],
)
def test_different_values_are_told_apart(expected: object, actual: object, ltype: str) -> None:
    assert not same_value(expected, actual, ltype)


def test_instants_compare_as_instants_whatever_the_local_zone() -> None:
    instant = dt.datetime(2024, 5, 1, 8, 0, 0, 654321, tzinfo=UTC)
    # PySpark hands a TIMESTAMP back as naive local wall time
    local = instant.astimezone().replace(tzinfo=None)
    assert same_value(instant, local, "timestamptz")
    assert not same_value(instant, local + dt.timedelta(microseconds=1), "timestamptz")


def test_untyped_text_is_read_as_the_expected_type_without_types() -> None:
    # the old truths (no types given): the target's text is read as the truth's type
    assert same_value(Decimal("12.50"), "12.5")
    assert same_value(7, "7")
    assert not same_value(7, "8")


def test_keyed_rows_missing_extra_and_different() -> None:
    expected = [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}]
    actual = [{"id": 1, "v": "a"}, {"id": 2, "v": "B", "_cdc_op": "update"}, {"id": 4, "v": "d"}]
    diff = compare_rows("db.t", ["id"], expected, actual, {"id": "int64", "v": "string"})
    assert diff.missing == [("3",)] and diff.extra == [("4",)]
    assert diff.different == [(("2",), "v", "b", "B")]
    assert not diff.ok


def test_composite_keys_match_across_spellings() -> None:
    expected = [{"a": 1, "b": 2, "v": Decimal("1.50")}]
    actual = [{"a": Decimal(1), "b": 2, "v": Decimal("1.5")}]
    types = {"a": "int64", "b": "int32", "v": "decimal(5,2)"}
    assert compare_rows("t", ("a", "b"), expected, actual, types).ok


def test_rows_without_a_key_are_a_multiset() -> None:
    types = {"at": "timestamp", "who": "string"}
    row = {"at": dt.datetime(2024, 1, 1), "who": "ana"}
    other = {"at": dt.datetime(2024, 1, 2), "who": "bo"}
    twice = compare_rows("log", (), [row, row, other], [row, other], types)
    assert twice.multiset and twice.missing == [(row["at"], "ana")] and not twice.extra
    assert twice.columns == ("at", "who")
    extra = compare_rows("log", (), [row], [row, row, {**other, "_cdc_row_key": "x"}], types)
    assert sorted(extra.extra) == sorted([(row["at"], "ana"), (other["at"], "bo")])
    assert compare_rows("log", (), [row, other], [other, row], types).ok


def test_schema_differences_name_columns_and_types() -> None:
    expected = {"id": "int64", "qty": "int64", "price": "decimal(18,4)", "t": "time", "u": "uint64"}
    actual = {
        "id": "bigint", "qty": "int", "price": "decimal(18,4)", "u": "decimal(20,0)",
        "extra": "string", "_cdc_position": "string", "_cdc_row_key": "string",
    }  # fmt: skip
    assert compare_schema(expected, actual) == [
        ("qty", "BIGINT", "INT"),
        ("t", "STRING", None),
        ("extra", None, "STRING"),
    ]
    assert compare_schema({"d": "decimal"}, {"d": "decimal(38,18)"}) == []
    assert (
        compare_schema(
            {"d": "timestamp", "z": "timestamptz"}, {"d": "timestamp_ntz", "z": "timestamp"}
        )
        == []
    )


def test_compare_table_adds_the_schema_to_the_rows() -> None:
    diff = compare_table("t", ["id"], {"id": "int64"}, [{"id": 1}], [{"id": 1}], {"id": "int"})
    assert diff.schema == [("id", "BIGINT", "INT")] and not diff.ok
    assert compare_table("t", ["id"], {"id": "int64"}, [{"id": 1}], [{"id": 1}]).ok


def test_describe_keeps_reports_short_and_readable() -> None:
    assert describe(b"\x00\xff") == "0x00ff"
    assert describe("x" * 100, 10) == "'xxxxxxxx…"
    assert describe((1, "a")) == "(1, 'a')"


def test_the_cli_report_is_one_line_per_table_then_the_differences(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from anycdc.cli.verify import print_report

    result = {
        "ok": False, "dead_letters": 1, "expected_dead_letters": 1,
        "tables": [
            {"table": "shop.orders", "key": ["id"], "expected_rows": 2, "rows": 2, "exists": True,
             "missing": [], "extra": [], "different": [[[7], "qty", "5", "6"]],
             "schema": [["qty", "BIGINT", "INT"], ["note", None, "STRING"]], "columns": []},
            {"table": "shop.log", "key": [], "expected_rows": 2, "rows": 1, "exists": True,
             "missing": [["2024-01-01T00:00:00", "ana"]], "extra": [], "different": [],
             "schema": [], "columns": ["at", "who"]},
            {"table": "shop.gone", "key": ["id"], "expected_rows": 1, "rows": 0, "exists": False,
             "missing": [["1"]], "extra": [], "different": [], "schema": [], "columns": []},
        ],
    }  # fmt: skip
    print_report(result)
    out = capsys.readouterr().out
    assert "shop.orders schema: qty is INT, expected BIGINT" in out
    assert "shop.orders schema: extra column note (STRING)" in out
    assert "shop.orders key=[7] qty: expected 5, got 6" in out
    assert "shop.log missing row: at='2024-01-01T00:00:00', who='ana'" in out
    assert "no table" in out and "(none)" in out
    assert out.rstrip().endswith("verify: DIFFERENCES")
