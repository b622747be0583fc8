"""The simulator without Spark: its streams decode back, its truth follows from its events,
and a seed gives one source history whatever the format."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.changelog import value_text
from anycdc.event import ChangeEvent, Op, event_to_json
from anycdc.formats import format_class, format_ids, get_format
from anycdc.pairing import SplitUpdatePairer
from anycdc.patch import patch_as_partial_update
from anycdc.simulate import (
    FORMAT_PROFILES,
    MONGO_FORMAT,
    Workload,
    adapt_column,
    adapt_value,
    build_stream,
    format_profile,
    untyped_text,
    write_truth,
)
from anycdc.verify import compare_rows, load_truth

SIMULATED = sorted(FORMAT_PROFILES)
ROW_OPS = (Op.INSERT, Op.UPDATE, Op.DELETE, Op.SNAPSHOT)


def rich(seed: int = 7, events: int = 150, **kw: Any) -> Workload:
    return Workload(seed=seed, rows=5, events=events, profile="rich", **kw)


def test_every_encodable_format_has_a_simulation_profile() -> None:
    encodable = {f for f in format_ids() if format_class(f).can_encode}
    assert set(FORMAT_PROFILES) == encodable
    with pytest.raises(ValueError, match="drs-avro"):
        format_profile("drs-avro")


# --------------------------------------------------------------------------- round trip
def _decode_all(format_id: str, event: ChangeEvent) -> list[ChangeEvent]:
    fmt = get_format(format_id)
    pairer = SplitUpdatePairer()  # DataWorks may split updates in two messages
    out = [x for m in fmt.encode(event) for d in fmt.decode(m) for x in pairer.push(d)]
    return out + pairer.flush()


def _value_problems(format_id: str, sent: ChangeEvent, got: ChangeEvent, image: str) -> list[str]:
    profile = format_profile(format_id)
    want, have = getattr(sent, image), getattr(got, image)
    if want is None or have is None:
        return [] if want is have else [f"{image}: {want!r} -> {have!r}"]
    problems = []
    for name, value in have.items():
        if name not in want:
            problems.append(f"{image}.{name}: not sent")
            continue
        # untyped formats: compare the text the pipeline stores
        if profile.types == "text" and value is not None:
            value = value_text(value)
        expected = want[name]
        if value != expected or type(value) is not type(expected):
            problems.append(f"{image}.{name}: {expected!r} -> {value!r}")
    # SharePlex updates carry the changed columns only (the pipeline overlays them)
    if not (profile.partial_updates and sent.op is Op.UPDATE and image == "after"):
        problems += [f"{image}.{name}: lost" for name in set(want) - set(have)]
    return problems


def _type_problems(format_id: str, sent: ChangeEvent, got: ChangeEvent) -> list[str]:
    profile = format_profile(format_id)
    if profile.types == "text":
        return [] if got.columns is None else ["an untyped format returned column types"]
    problems = []
    image = {**(sent.before or {}), **(sent.after or {})}
    for name, column in (got.columns or {}).items():
        want = (sent.columns or {}).get(name)
        if want is None or want.type == column.type:
            continue
        # DTS Avro types by value: a NULL DECIMAL carries no precision, an unsigned BIGINT
        # below 2^63 is a LONGLONG (PIPELINE_GAPS: precisionless-decimal, dts-avro-unsigned)
        if profile.value_typed and image.get(name) is None and column.type.name == "decimal":
            continue
        small = (
            image.get(name) is None or image[name] < 2**63 if want.type.name == "uint64" else False
        )
        if profile.value_typed and small and column.type.name == "int64":
            continue
        problems.append(f"type {name}: {want.type} -> {column.type}")
    return problems


@pytest.mark.parametrize("avoid_gaps", [True, False], ids=["gaps-avoided", "all"])
@pytest.mark.parametrize("format_id", SIMULATED)
def test_every_event_decodes_back_as_simulated(format_id: str, avoid_gaps: bool) -> None:
    """What the simulator claims a format carries is what its decoder returns."""
    profile = format_profile(format_id)
    problems: Counter[str] = Counter()
    for seed in (1, 2):
        for event in rich(seed, avoid_gaps=avoid_gaps).events(format_id):
            decoded = _decode_all(format_id, event)
            assert len(decoded) == 1, (event.op, decoded)
            got = decoded[0]
            found = []
            if got.op is not event.op:
                found.append(f"op {event.op} -> {got.op}")
            if event.op is Op.DDL and got.ddl != event.ddl:
                found.append(f"ddl {got.ddl!r}")
            if event.table is not None:
                where = (
                    (None, event.database) if profile.owner_as_schema else (event.database, None)
                )
                if (got.database, got.schema, got.table) != (*where, event.table):
                    found.append(f"table {got.qualified_table}")
            if event.op in ROW_OPS:
                if got.key != (event.key if profile.key_names else None):
                    found.append(f"key {got.key}")
                if got.patch != event.patch:
                    found.append(f"patch {got.patch}")
                found += _value_problems(format_id, event, got, "before")
                found += _value_problems(format_id, event, got, "after")
                found += _type_problems(format_id, event, got)
            problems.update(f"{event.op.value}: {p}" for p in found)
    assert not problems, problems.most_common(10)


def test_the_rich_stream_has_the_whole_mix() -> None:
    """Snapshot, row changes, key changes, markers, heartbeats, DDL, TRUNCATE; NULLs and
    the extreme values of every type."""
    w = rich(3, events=300)
    events = list(w.events("canonical-json"))
    ops = Counter(e.op for e in events)
    assert all(ops[op] for op in Op), ops
    key_changes = [
        e for e in events
        if e.op is Op.UPDATE and e.key and e.before and e.after
        and [e.before[k] for k in e.key] != [e.after[k] for k in e.key]
    ]  # fmt: skip
    assert key_changes
    ddl = [e.ddl for e in events if e.op is Op.DDL]
    assert any("ADD COLUMN" in (d or "") for d in ddl)
    assert any("MODIFY COLUMN `qty` bigint" in (d or "") for d in ddl)
    values = [v for e in events for img in (e.before, e.after) if img for v in img.values()]
    assert None in values
    assert any(isinstance(v, int) and v > 2**63 for v in values)  # unsigned BIGINT
    assert any(isinstance(v, Decimal) and len(v.as_tuple().digits) > 30 for v in values)
    assert any(isinstance(v, str) and "\x01" in v for v in values)
    assert any(isinstance(v, str) and "😀" in v for v in values)
    assert any(isinstance(v, bytes) for v in values)
    assert any(isinstance(v, dt.time) for v in values)
    assert any(isinstance(v, dt.datetime) and v.tzinfo is not None for v in values)
    # rows of the new shape follow each schema change
    lines = [e for e in events if e.table == "order_lines" and e.op in ROW_OPS]
    assert any(
        isinstance((e.after or {}).get("qty"), int) and e.after["qty"] >= 2**31 for e in lines
    )
    # hot keys: some row is updated many times
    updated = Counter((e.table, e.key_values()) for e in events if e.op is Op.UPDATE)
    assert updated.most_common(1)[0][1] >= 5
    # a transaction's changes carry its id between its markers
    begin = next(i for i, e in enumerate(events) if e.op is Op.BEGIN)
    assert events[begin + 1].tx == events[begin].tx is not None


@pytest.mark.parametrize("format_id", SIMULATED)
def test_the_format_gets_only_what_it_can_carry(format_id: str) -> None:
    w = rich(4, events=200)
    profile = w.format_profile(format_id)
    ops = Counter(e.op for e in w.events(format_id))
    assert bool(ops[Op.TRUNCATE]) == (profile.truncate and not profile.documents)
    assert bool(ops[Op.BEGIN]) == profile.tx_markers
    assert bool(ops[Op.DDL]) == (profile.ddl and not profile.documents)
    assert bool(ops[Op.SNAPSHOT]) == profile.snapshots


# --------------------------------------------------------------------------- truth
def _apply(
    events: Iterable[ChangeEvent], tables: Mapping[str, Any]
) -> dict[str, list[dict[str, Any]]]:
    """A small reference applier: the pipeline's semantics on a dict model (keys from the
    table specs, because some formats name no key). Partial after images overlay the
    current row; a key change removes the old key; TRUNCATE empties the table."""
    keyed: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {}
    multi: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        if event.op not in (*ROW_OPS, Op.TRUNCATE):
            continue
        event = patch_as_partial_update(event)  # MongoDB $set/$unset, typed
        name = f"{event.database or event.schema}.{event.table}"
        spec = tables[name]
        overlay = "after" in event.partial
        if event.op is Op.TRUNCATE:
            keyed.pop(name, None)
            multi.pop(name, None)
        elif not spec.key:
            rows = multi.setdefault(name, [])
            before = _full(event.before, spec) if event.before is not None else None
            if before is not None:
                rows.remove(before)
            if event.after is not None:
                rows.append(
                    _full({**(before or {}), **event.after} if overlay else event.after, spec)
                )
        else:
            state = keyed.setdefault(name, {})
            if event.before is not None and (event.op is Op.DELETE or event.after is not None):
                old = tuple(event.before[k] for k in spec.key)
                new = tuple(event.after[k] for k in spec.key) if event.after is not None else None
                if old != new:
                    state.pop(old, None)
            if event.after is not None:
                new = tuple(event.after[k] for k in spec.key)
                base = state.get(new, {}) if overlay else {}
                state[new] = _full({**base, **event.after}, spec)
    out = {name: list(rows.values()) for name, rows in keyed.items()}
    out.update(multi)
    return out


def _full(row: Mapping[str, Any], spec: Any) -> dict[str, Any]:
    return {name: row.get(name) for name in spec.columns}


@pytest.mark.parametrize("avoid_gaps", [True, False], ids=["gaps-avoided", "all"])
@pytest.mark.parametrize("format_id", SIMULATED)
@pytest.mark.parametrize("seed", [1, 9])
def test_truth_is_what_the_events_add_up_to(format_id: str, seed: int, avoid_gaps: bool) -> None:
    w = rich(seed, events=200, avoid_gaps=avoid_gaps)
    events = list(w.events(format_id))
    if format_id == "shareplex-json":
        # the encoder writes the changed columns only; the model overlays them like the pipeline
        events = [_shareplex_view(e) for e in events]
    tables = {t.qualified: t for t in w.tables}
    model = _apply(events, tables)
    for name, spec in tables.items():
        expected = list(w.truth[name].values())
        diff = compare_rows(name, spec.key, expected, model.get(name, []),
                            {c: col.type for c, col in spec.columns.items()})  # fmt: skip
        assert diff.ok, (name, diff)


def _shareplex_view(event: ChangeEvent) -> ChangeEvent:
    [decoded] = _decode_all("shareplex-json", event)
    if event.op is not Op.UPDATE:
        return event
    changed = set(decoded.after or {})
    after = {k: v for k, v in (event.after or {}).items() if k in changed}
    return event.with_changes(after=after, partial=("after",))


def _most_copies(w: Workload) -> int:
    """The most copies of one row the keyless table held at any point of the stream."""
    most = 0
    for event in w.events("canonical-json"):
        if event.table == "audit_log" and event.op is Op.INSERT:
            rows = Counter(repr(sorted(r.items())) for r in w.truth["shop.audit_log"].values())
            most = max(most, *rows.values())
    return most


def test_keyless_truth_is_a_multiset_when_duplicates_are_asked_for() -> None:
    assert _most_copies(rich(5, events=300, keyless_duplicates=True)) >= 2
    assert _most_copies(rich(5, events=300)) == 1


# --------------------------------------------------------------------------- determinism
def _stream_text(w: Workload, format_id: str) -> list[str]:
    return [event_to_json(e) for e in w.events(format_id)]


def test_same_seed_same_stream_and_a_rerun_starts_afresh() -> None:
    a, b = rich(11), rich(11)
    first = _stream_text(a, "debezium-json")
    assert first == _stream_text(b, "debezium-json")
    assert first == _stream_text(a, "debezium-json")  # events() again: the same history
    assert first != _stream_text(rich(12), "debezium-json")


def test_one_seed_one_source_history_in_every_format() -> None:
    """Each format's truth is the canonical truth as that format delivers it."""
    reference = rich(13)
    list(reference.events("canonical-json"))
    for format_id in SIMULATED:
        if format_id == MONGO_FORMAT:
            continue
        w = rich(13)
        list(w.events(format_id))
        assert [t.name for t in w.tables] == [t.name for t in reference.tables]
        for source in reference.tables:
            carried = {n: c for n, c in source.columns.items() if adapt_column(format_id, c)}
            want = sorted(
                repr({n: adapt_value(format_id, c, row[n]) for n, c in carried.items()})
                for row in reference.truth[source.qualified].values()
            )
            got = sorted(repr(row) for row in w.truth[source.qualified].values())
            assert got == want, (format_id, source.name)


def test_gaps_are_avoided_unless_asked_for() -> None:
    """PIPELINE_GAPS: what the pipeline cannot apply yet is generated only on request."""
    for avoid in (True, False):
        w = rich(3, events=200, avoid_gaps=avoid)
        # keyless tables get their ADD COLUMN either way: the pipeline applies it
        assert [e for e in w.events("canonical-json") if e.op is Op.DDL and e.table == "audit_log"]
        assert bool([e for e in w.events("oms-json") if e.op is Op.DDL]) is not avoid
        assert bool([e for e in w.events("dataworks-json") if e.op is Op.DDL]) is not avoid
        list(w.events("dts-avro"))
        assert ("c_ubigint" in w.tables[0].columns) is not avoid
        sets = [
            set(e.patch["$set"]) for e in w.events(MONGO_FORMAT) if e.patch and "$set" in e.patch
        ]
        assert set().union(*sets) & {"joined", "balance", "avatar"}  # typed $set either way


def test_mongo_stream_is_a_collection_of_documents() -> None:
    w = rich(2, events=120)
    events = list(w.events(MONGO_FORMAT))
    assert {t.name for t in w.tables} == {"profiles", "profiles_2", "profiles_3"}
    patches = [e for e in events if e.patch is not None]
    assert patches and any("$unset" in (e.patch or {}) for e in patches)
    assert any(e.op is Op.UPDATE and e.patch is None for e in events)  # replacements
    assert all(e.position is not None and len(e.position.parts) == 2 for e in events)


# --------------------------------------------------------------------------- truth files
@pytest.mark.parametrize("format_id", ["canal-json", "oms-json", "dataworks-json", MONGO_FORMAT])
def test_truth_files_read_back_as_the_truth(format_id: str, tmp_path: Path) -> None:
    w = rich(6)
    stream = build_stream(w, format_id, partitions=3, duplicates=0.1, malformed=0.05)
    write_truth(stream, tmp_path, format_id)
    tables, dead = load_truth(str(tmp_path))
    assert dead == stream.expected_dead_letters
    assert [t.table for t in tables] == [t.name for t in w.tables]
    for table, spec in zip(tables, w.tables, strict=True):
        assert table.key == list(spec.key)
        assert table.types == {n: str(c.type) for n, c in spec.columns.items()}
        expected = list(w.truth[spec.qualified].values())
        assert compare_rows(spec.qualified, spec.key, expected, table.rows, table.types).ok


def test_build_stream_faults_do_not_change_the_history() -> None:
    clean = build_stream(rich(8), "canal-json")
    faulty = build_stream(rich(8), "canal-json", partitions=3, duplicates=0.2, reorder=0.2)
    assert clean.truth == faulty.truth
    assert faulty.duplicates and faulty.reordered
    assert sum(map(len, faulty.partitions)) == sum(map(len, clean.partitions)) + faulty.duplicates


def test_untyped_text_follows_the_oceanbase_rules() -> None:
    assert untyped_text(False) == "0"
    assert untyped_text(b"\x00\xff") == "AP8="
    assert untyped_text(dt.time(1, 2, 3, 500000)) == "01:02:03.5"
    assert untyped_text(dt.datetime(2024, 5, 1)) == "2024-05-01 00:00:00"
    assert untyped_text(dt.datetime(1970, 1, 2, tzinfo=dt.UTC)) == "86400"
    assert untyped_text(Decimal("-12.50")) == "-12.50"
    assert untyped_text(2**64 - 1) == "18446744073709551615"


def test_shop_profile_is_the_demo_shop() -> None:
    w = Workload(seed=1, rows=3, events=30)
    events = list(w.events("canal-json"))
    assert [t.name for t in w.tables] == ["customers", "orders", "products"]
    assert {e.op for e in events} <= set(ROW_OPS)
    with pytest.raises(ValueError, match="profile"):
        Workload(profile="huge")


def _linked_orphans(rows: Mapping[str, dict[Any, Any]]) -> list[tuple[str, Any]]:
    """Lines whose order is missing and orders whose customer is, per table suffix."""
    out = []
    for name, table in rows.items():
        suffix = name.rsplit(".", 1)[1].removeprefix("order_lines").removeprefix("orders")
        if name.split(".")[1].startswith("order_lines"):
            orders = rows.get(f"shop.orders{suffix}", {})
            out += [(name, k) for k in table if (k[0],) not in orders]
        elif name.split(".")[1].startswith("orders"):
            customers = rows.get(f"shop.customers{suffix}", {})
            out += [(name, k) for k, r in table.items() if (r["customer_id"],) not in customers]
    return out


@pytest.mark.parametrize("tables", [3, 4, 6])
def test_linked_profile_keeps_its_foreign_keys_at_every_commit(tables: int) -> None:
    w = Workload(seed=4, rows=4, events=120, tables=tables, profile="linked")
    events = list(w.events("canonical-json"))
    rows: dict[str, dict[Any, Any]] = {}
    open_tx: str | None = None
    kinds: Counter[str] = Counter()
    changes: list[tuple[str, str | None]] = []
    for event in events:
        if event.op is Op.BEGIN:
            assert open_tx is None and event.tx
            open_tx, changes = event.tx, []
        elif event.op is Op.COMMIT:
            assert event.tx == open_tx and changes
            assert not _linked_orphans(rows), event.tx
            open_tx = None
            kinds[" ".join(f"{op}:{table}" for op, table in dict.fromkeys(changes))] += 1
        else:
            assert event.op in ROW_OPS and event.key
            # the snapshot before any transaction, every later change inside one
            assert event.tx == open_tx and (event.op is Op.SNAPSHOT) == (open_tx is None)
            table = rows.setdefault(f"{event.database}.{event.table}", {})
            if event.before is not None:
                del table[tuple(event.before[k] for k in event.key)]
            if event.after is not None:
                table[tuple(event.after[k] for k in event.key)] = event.after
            changes.append((event.op.value, event.table))
    assert open_tx is None and sum(kinds.values()) > 20
    assert {name: set(r) for name, r in w.truth.items()} == {
        name: set(rows.get(name, {})) for name in w.truth
    }
    # (a) an order placed with its lines, (b) an order and a line amended, (c) an order
    # cancelled: its lines deleted first, then the order
    assert kinds["insert:orders insert:order_lines"] > 0
    assert kinds["update:orders update:order_lines"] > 0
    assert kinds["delete:order_lines delete:orders"] > 0


@pytest.mark.parametrize("format_id", SIMULATED)
def test_linked_profile_in_every_format(format_id: str) -> None:
    """Each format gets the rows (markers only where it has them) and its truth."""
    w = Workload(seed=2, rows=3, events=60, profile="linked")
    events = list(w.events(format_id))
    if format_id == "shareplex-json":
        events = [_shareplex_view(e) for e in events]
    markers = {e.op for e in events} & {Op.BEGIN, Op.COMMIT}
    assert markers == ({Op.BEGIN, Op.COMMIT} if format_profile(format_id).tx_markers else set())
    tables = {t.qualified: t for t in w.tables}
    model = _apply(events, tables)
    for name, spec in tables.items():
        diff = compare_rows(name, spec.key, list(w.truth[name].values()), model.get(name, []),
                            {c: col.type for c, col in spec.columns.items()})  # fmt: skip
        assert diff.ok, (name, diff)


def test_cli_writes_messages_and_truth(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from anycdc.cli import main as cli

    code = cli(["simulate", "--format", "shareplex-json", "--rows", "3", "--events", "40",
                "--seed", "4", "--partitions", "2", "--out", str(tmp_path)])  # fmt: skip
    assert code == 0
    err = capsys.readouterr().err
    assert "--primary-key shop.all_types=id" in err and "untyped" in err
    assert sorted(p.name for p in (tmp_path / "messages").iterdir()) == ["p000.jsonl", "p001.jsonl"]
    tables, dead = load_truth(str(tmp_path / "truth"))
    assert [t.table for t in tables] == ["all_types", "order_lines", "audit_log"] and dead == 0
    assert tables[2].key == [] and set(tables[0].types.values()) == {"string"}
    shop = tmp_path / "shop"
    assert cli(["simulate", "--format", "canal-json", "--profile", "shop", "--out", str(shop)]) == 0
    assert [t.table for t in load_truth(str(shop / "truth"))[0]] == [
        "customers",
        "orders",
        "products",
    ]


def test_expected_dead_letters_count_every_corrupt_delivery() -> None:
    """A re-delivered corrupt message is one more dead letter (seed 11 re-delivers one)."""
    fmt = get_format("canal-json")
    for seed in (11, 12, 13):
        w = Workload(seed, 5, 120, "shop", 4, profile="rich")
        # the fault suite's settings (tests/faults): seed 11 re-delivers a corrupt message
        stream = build_stream(
            w, "canal-json", partitions=3, duplicates=0.1, reorder=0.1, malformed=0.03
        )
        undecodable = 0
        for part in stream.partitions:
            for _, message in part:
                try:
                    fmt.decode(message)
                except Exception:
                    undecodable += 1
        assert undecodable == stream.expected_dead_letters, seed
