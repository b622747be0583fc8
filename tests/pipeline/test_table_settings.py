"""``tables:``: two tables of one stream get their own mode, key, properties, layout and
excluded/masked columns; read back with delta-rs, the excluded values are nowhere: not in
the tables, the changelog, the dead letters or the log. One module-scoped pair of runs (the
second changes a clustering) that every test reads."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.values import LogicalType
from tests.pipeline.helpers import encode_all, run, write_messages

pytestmark = pytest.mark.spark

SSNS = ("123-45-6789", "987-65-4321", "555-12-3456")
PHONES = ("+1-202-555-0101", "+1-202-555-0102")
EMAILS = ("ada@example.org", "bob@example.org")
SECRETS = (*SSNS, *PHONES, *EMAILS)
USERS = {
    "id": Column(LogicalType("int64"), "bigint"),
    "name": Column(LogicalType("string"), "varchar(20)"),
    "ssn": Column(LogicalType("string"), "char(11)"),
    "phone": Column(LogicalType("string"), "varchar(20)"),
    "region": Column(LogicalType("string"), "varchar(4)"),
    "age": Column(LogicalType("int32"), "int"),
}
ORDERS = {
    "id": Column(LogicalType("int64"), "bigint"),
    "customer_id": Column(LogicalType("int64"), "bigint"),
    "email": Column(LogicalType("string"), "varchar(80)"),
    "amount": Column(LogicalType("decimal", 12, 2), "decimal(12,2)"),
}
TABLES: dict[str, Any] = {
    "shop.orders": {
        "mode": "scd2",
        "cluster_by": ["customer_id"],
        "mask_columns": {"email": "sha256"},
        "table_properties": {"delta.enableChangeDataFeed": True},
    },
    "shop.*": {  # users: the run's scd1, its key from here (the messages name none)
        "primary_key": ["id"],
        "partition_by": ["region"],
        "exclude_columns": ["ssn"],
        "mask_columns": {"phone": None},
    },
}


def _event(
    table: str, op: str, pos: int, row: dict[str, Any], before: dict[str, Any] | None = None
) -> ChangeEvent:
    users = table == "users"
    return ChangeEvent(
        op=Op(op), format="canal-json", database="shop", table=table,
        key=None if users else ("id",), before=before, after=row,
        columns=USERS if users else ORDERS, ts_ms=1_700_000_000_000 + pos,
        position=Position((pos,)),
    )  # fmt: skip


def _user(n: int, name: str, region: str, age: int = 30) -> dict[str, Any]:
    return {"id": n, "name": name, "ssn": SSNS[n - 1], "phone": PHONES[min(n, 2) - 1],
            "region": region, "age": age}  # fmt: skip


def _order(n: int, customer: int, amount: str) -> dict[str, Any]:
    return {"id": n, "customer_id": customer, "email": EMAILS[n - 1], "amount": Decimal(amount)}


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture(scope="module")
def lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    src, out = tmp_path_factory.mktemp("in"), tmp_path_factory.mktemp("out")
    messages = encode_all("canal-json", [
        _event("users", "insert", 1, _user(1, "ada", "eu")),
        _event("users", "insert", 2, _user(2, "bob", "us")),
        _event("orders", "insert", 3, _order(1, 7, "10.00")),
        _event("users", "update", 4, _user(1, "ada2", "eu"), before=_user(1, "ada", "eu")),
        _event("orders", "update", 5, _order(1, 7, "12.50"), before=_order(1, 7, "10.00")),
        _event("users", "insert", 6, _user(3, "cy", "us", age=41)),
    ])  # fmt: skip
    # user 3's age cannot be an INT: a dead letter of its table (the apply's cast)
    messages[-1] = messages[-1].replace(b'"age":"41"', b'"age":"forty-one"')
    assert b"forty-one" in messages[-1]
    messages.append(b"{not json " + SSNS[0].encode())  # no table: a decode failure, raw kept
    write_messages(src, "000.jsonl", messages)
    handler = _Records()
    logger = logging.getLogger("anycdc")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        run(spark, src, out, tables=TABLES)
        detail = spark.sql(f"DESCRIBE DETAIL delta.`{out / 'shop' / 'orders'}`").first()
        first_clustering = list(detail["clusteringColumns"])
        # the clustering changed between runs: the existing table is altered, then written
        write_messages(src, "001.jsonl", encode_all("canal-json", [
            _event("orders", "insert", 7, _order(2, 8, "3.00")),
        ]))  # fmt: skip
        changed = {**TABLES, "shop.orders": {**TABLES["shop.orders"], "cluster_by": ["id"]}}
        run(spark, src, out, tables=changed)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    yield {"out": out, "first_clustering": first_clustering, "log": handler.lines}


def _read(path: Path) -> list[dict[str, Any]]:
    from deltalake import DeltaTable

    return list(DeltaTable(str(path)).to_pyarrow_table().to_pylist())


def test_each_table_gets_its_own_mode_and_key(lake: dict[str, Any]) -> None:
    out = lake["out"]
    users = sorted(_read(out / "shop" / "users"), key=lambda r: r["id"])
    # scd1 (the run's mode), keyed by the entry's primary_key: one row per id, the last wins
    assert [(r["id"], r["name"]) for r in users] == [(1, "ada2"), (2, "bob")]
    assert not any(name.startswith("_cdc_is") for name in users[0])
    orders = sorted(_read(out / "shop" / "orders"), key=lambda r: (r["id"], r["_cdc_valid_from"]))
    # scd2 (its entry's): every version, the last current
    assert [(r["id"], r["amount"], r["_cdc_is_current"]) for r in orders] == [
        (1, Decimal("10.00"), False), (1, Decimal("12.50"), True), (2, Decimal("3.00"), True),
    ]  # fmt: skip


def test_excluded_columns_are_not_written_and_masked_ones_are_hashed_or_null(
    lake: dict[str, Any],
) -> None:
    out = lake["out"]
    users = _read(out / "shop" / "users")
    assert "ssn" not in users[0]
    assert {r["phone"] for r in users} == {None}
    orders = _read(out / "shop" / "orders")
    assert {r["email"] for r in orders} == {
        hashlib.sha256(email.encode()).hexdigest() for email in EMAILS
    }


def test_the_excluded_values_appear_nowhere(lake: dict[str, Any]) -> None:
    """Every Delta table under the target (the two tables, the changelog, the dead letters,
    the SCD2 end markers ...) read whole with delta-rs, raw messages decoded; and the log."""
    out = lake["out"]
    tables = sorted(p.parent for p in out.rglob("_delta_log"))
    names = {str(p.relative_to(out)) for p in tables}
    assert {"shop/users", "shop/orders", "_anycdc/changelog", "_anycdc/dead_letter"} <= names
    # the changelog holds the redacted tables' events (what is searched below), without raw
    logged = [r for r in _read(out / "_anycdc" / "changelog") if r["table"] in ("users", "orders")]
    assert len(logged) == 7 and {r["raw"] for r in logged} == {None}
    assert {r["after"] and dict(r["after"]).get("phone", "gone") for r in logged} >= {None}
    for table in tables:
        for row in _read(table):
            text = repr({k: v.decode("utf-8", "replace") if isinstance(v, bytes) else v
                         for k, v in row.items()})  # fmt: skip
            if table.name == "dead_letter" and row["error"] and "shop.users" not in row["error"]:
                # the decode failure: its table is not known, its raw message is kept
                assert row["raw"] == b"{not json " + SSNS[0].encode()
                continue
            found = [secret for secret in SECRETS if secret in text]
            assert not found, (table, found, text)
    assert lake["log"], "the run logged nothing: the check below would prove nothing"
    assert not [line for line in lake["log"] if any(s in line for s in SECRETS)]


def test_a_bad_value_of_a_redacted_table_is_a_dead_letter_without_its_message(
    lake: dict[str, Any],
) -> None:
    dead = _read(lake["out"] / "_anycdc" / "dead_letter")
    (users,) = [r for r in dead if r["error"] and r["error"].startswith("shop.users")]
    assert "age: cannot cast forty-one to INT" in users["error"]
    assert users["raw"] is None and users["kafka_key"] is None
    assert users["offset"] is not None  # where to find it at the source


def test_layout_and_properties_per_table(spark: Any, lake: dict[str, Any]) -> None:
    from deltalake import DeltaTable

    out = lake["out"]
    users, orders = (
        DeltaTable(str(out / "shop" / "users")),
        DeltaTable(str(out / "shop" / "orders")),
    )
    assert users.metadata().partition_columns == ["region"]
    assert orders.metadata().partition_columns == []
    assert orders.metadata().configuration.get("delta.enableChangeDataFeed") == "true"
    assert "delta.enableChangeDataFeed" not in users.metadata().configuration
    # liquid clustering: given at creation, then changed by the second run's entry
    assert lake["first_clustering"] == ["customer_id"]
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{out / 'shop' / 'orders'}`").first()
    assert list(detail["clusteringColumns"]) == ["id"]


def test_replay_leaves_a_dead_letter_without_its_message(spark: Any, lake: dict[str, Any]) -> None:
    """Its ``raw`` NULL would decode as a Kafka tombstone (no event): a replay must not take
    that for a fix and delete it."""
    from anycdc.config import PipelineConfig
    from anycdc.spark.pipeline import replay_dead_letters

    out = lake["out"]
    config = PipelineConfig.from_mapping(
        {"source_dir": str(out.parent), "target": str(out), "tables": TABLES}
    )
    before = _read(out / "_anycdc" / "dead_letter")
    assert replay_dead_letters(spark, config) == (0, len(before)) and len(before) == 2
    assert len(_read(out / "_anycdc" / "dead_letter")) == 2
