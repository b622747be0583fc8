"""Simulated source databases: realistic change streams with a known final state.

A :class:`Workload` plays a small shop database: a snapshot (full load) of
every table, then incremental inserts, updates (some changing only a few
columns), deletes and primary-key changes, with hot keys updated many times,
heartbeats, and a strictly increasing source position. It keeps the ground
truth — the final rows of every table — so a pipeline's output can be
checked. The events are canonical; any encoder turns them into vendor
messages.

>>> w = Workload(seed=1, rows=5, events=20)
>>> events = list(w.events("canal-json"))
>>> events[0].op.value, len(w.truth["shop.customers"]) > 0
('snapshot', True)
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.values import LogicalType

FIRST_NAMES = ("Ana", "Bo", "Chen", "Dmitri", "Eşref", "Fatima", "Günter", "Hana", "Ígor", "李雷")
STATUSES = ("new", "paid", "shipped", "delivered", "returned")


def _col(
    logical: str, vendor: str, precision: int | None = None, scale: int | None = None
) -> Column:
    if logical == "decimal":
        return Column(LogicalType("decimal", precision, scale), vendor)
    return Column(LogicalType.parse(logical), vendor)


@dataclass(frozen=True)
class TableSpec:
    """A simulated table: its columns (in order) and primary key."""

    database: str
    name: str
    columns: dict[str, Column]
    key: tuple[str, ...]

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.name}"


def shop_tables(database: str = "shop") -> list[TableSpec]:
    """Three tables with the types most vendor formats carry."""
    return [
        TableSpec(
            database,
            "customers",
            {
                "id": _col("int64", "bigint"),
                "name": _col("string", "varchar(64)"),
                "email": _col("string", "varchar(128)"),
                "balance": _col("decimal", "decimal(12,2)", 12, 2),
                "vip": _col("boolean", "tinyint(1)"),
                "created_at": _col("timestamp", "datetime"),
            },
            ("id",),
        ),
        TableSpec(
            database,
            "orders",
            {
                "id": _col("int64", "bigint"),
                "customer_id": _col("int64", "bigint"),
                "total": _col("decimal", "decimal(14,2)", 14, 2),
                "status": _col("string", "varchar(16)"),
                "placed_at": _col("timestamp", "datetime"),
                "note": _col("string", "text"),
            },
            ("id",),
        ),
        TableSpec(
            database,
            "products",
            {
                "sku": _col("string", "varchar(16)"),
                "title": _col("string", "varchar(128)"),
                "price": _col("decimal", "decimal(10,2)", 10, 2),
                "stock": _col("int32", "int"),
            },
            ("sku",),
        ),
    ]


class Workload:
    """A deterministic change stream over :func:`shop_tables` and its ground truth.

    Parameters
    ----------
    seed: random seed (same seed, same stream).
    rows: rows per table in the snapshot.
    events: incremental change events after the snapshot.
    database: the source database name.
    """

    def __init__(
        self, seed: int = 0, rows: int = 20, events: int = 200, database: str = "shop"
    ) -> None:
        self.random = random.Random(seed)
        self.tables = shop_tables(database)
        self.rows = rows
        self.event_count = events
        self.truth: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {
            t.qualified: {} for t in self.tables
        }
        self._position = 0
        self._next_id = 1
        self._clock = dt.datetime(2024, 5, 1, 8, 0, 0)

    # ------------------------------------------------------------------ rows
    def _row(self, table: TableSpec, key: Any = None) -> dict[str, Any]:
        r = self.random
        self._next_id += 1
        if table.name == "customers":
            name = r.choice(FIRST_NAMES)
            return {
                "id": key if key is not None else self._next_id,
                "name": name,
                "email": f"{name.lower()}.{self._next_id}@example.com",
                "balance": Decimal(r.randint(-5_000, 1_000_000)).scaleb(-2),
                "vip": r.random() < 0.2,
                "created_at": self._clock.replace(microsecond=r.randint(0, 999) * 1000),
            }
        if table.name == "orders":
            return {
                "id": key if key is not None else self._next_id,
                "customer_id": r.randint(1, max(self.rows, 2)),
                "total": Decimal(r.randint(100, 9_999_999)).scaleb(-2),
                "status": "new",
                "placed_at": self._clock,
                "note": None if r.random() < 0.7 else r.choice(["gift", "urgent", 'say "hi"\n']),
            }
        return {
            "sku": key if key is not None else f"SKU-{self._next_id:06d}",
            "title": r.choice(["Tea", "Mug", "Kettle", "Spoon"]) + f" #{self._next_id}",
            "price": Decimal(r.randint(99, 99_999)).scaleb(-2),
            "stock": r.randint(0, 500),
        }

    def _event(
        self, format_id: str, table: TableSpec, op: Op, before: Any, after: Any
    ) -> ChangeEvent:
        self._position += 1
        self._clock += dt.timedelta(seconds=1)
        return ChangeEvent(
            op=op,
            format=format_id,
            database=table.database,
            table=table.name,
            key=table.key,
            before=before,
            after=after,
            columns=table.columns,
            ts_ms=int(self._clock.replace(tzinfo=dt.UTC).timestamp() * 1000),
            position=Position((self._position,)),
        )

    def _key(self, table: TableSpec, row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(row[k] for k in table.key)

    # ------------------------------------------------------------------ stream
    def events(self, format_id: str) -> Iterator[ChangeEvent]:
        """The whole stream: snapshot, then incremental changes (updates the truth)."""
        for table in self.tables:
            for _ in range(self.rows):
                row = self._row(table)
                self.truth[table.qualified][self._key(table, row)] = row
                yield self._event(format_id, table, Op.SNAPSHOT, None, row)
        for _ in range(self.event_count):
            yield self._change(format_id)

    def _change(self, format_id: str) -> ChangeEvent:
        r = self.random
        table = r.choice(self.tables)
        state = self.truth[table.qualified]
        roll = r.random()
        if not state or roll < 0.25:
            row = self._row(table)
            state[self._key(table, row)] = row
            return self._event(format_id, table, Op.INSERT, None, row)
        keys = sorted(state, key=repr)
        # hot keys: a fifth of the rows take most updates
        key = r.choice(keys[: max(1, len(keys) // 5)] if r.random() < 0.6 else keys)
        old = state[key]
        if roll < 0.35:
            del state[key]
            return self._event(format_id, table, Op.DELETE, old, None)
        new = dict(old)
        if roll < 0.38 and table.name == "orders":
            del state[key]
            self._next_id += 1
            new["id"] = self._next_id  # a primary-key change
        elif table.name == "customers":
            new["balance"] = old["balance"] + Decimal(r.randint(-500, 500)).scaleb(-2)
            new["vip"] = not old["vip"] if r.random() < 0.1 else old["vip"]
        elif table.name == "orders":
            new["status"] = r.choice(STATUSES)
        else:
            new["stock"] = max(0, old["stock"] + r.randint(-5, 5))
            new["price"] = old["price"] if r.random() < 0.8 else old["price"] + Decimal("1.00")
        state[self._key(table, new)] = new
        return self._event(format_id, table, Op.UPDATE, old, new)
