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
from pathlib import Path
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


def many_tables(database: str, count: int) -> list[TableSpec]:
    """``count`` tables: the shop's three shapes, numbered after the first round."""
    base = shop_tables(database)
    out = []
    for index in range(count):
        spec = base[index % len(base)]
        suffix = "" if index < len(base) else f"_{index // len(base) + 1}"
        out.append(TableSpec(spec.database, spec.name + suffix, spec.columns, spec.key))
    return out


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
        self,
        seed: int = 0,
        rows: int = 20,
        events: int = 200,
        database: str = "shop",
        tables: int = 3,
    ) -> None:
        self.random = random.Random(seed)
        self.tables = many_tables(database, tables)
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
        shape = table.name.split("_")[0]
        if shape == "customers":
            name = r.choice(FIRST_NAMES)
            return {
                "id": key if key is not None else self._next_id,
                "name": name,
                "email": f"{name.lower()}.{self._next_id}@example.com",
                "balance": Decimal(r.randint(-5_000, 1_000_000)).scaleb(-2),
                "vip": r.random() < 0.2,
                "created_at": self._clock.replace(microsecond=r.randint(0, 999) * 1000),
            }
        if shape == "orders":
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
        shape = table.name.split("_")[0]
        if roll < 0.38 and shape == "orders":
            del state[key]
            self._next_id += 1
            new["id"] = self._next_id  # a primary-key change
        elif shape == "customers":
            new["balance"] = old["balance"] + Decimal(r.randint(-500, 500)).scaleb(-2)
            new["vip"] = not old["vip"] if r.random() < 0.1 else old["vip"]
        elif shape == "orders":
            new["status"] = r.choice(STATUSES)
        else:
            new["stock"] = max(0, old["stock"] + r.randint(-5, 5))
            new["price"] = old["price"] if r.random() < 0.8 else old["price"] + Decimal("1.00")
        state[self._key(table, new)] = new
        return self._event(format_id, table, Op.UPDATE, old, new)


# --------------------------------------------------------------------------- streams with faults
@dataclass
class Stream:
    """Encoded messages (per Kafka partition) and what a correct pipeline must end with."""

    partitions: list[list[tuple[bytes | None, bytes]]]
    truth: dict[str, dict[tuple[Any, ...], dict[str, Any]]]
    tables: list[TableSpec]
    expected_dead_letters: int
    duplicates: int
    reordered: int


def build_stream(
    workload: Workload,
    format_id: str,
    *,
    partitions: int = 1,
    duplicates: float = 0.0,
    reorder: float = 0.0,
    malformed: float = 0.0,
    options: dict[str, str] | None = None,
) -> Stream:
    """Encode a workload as a vendor would write it, keyed by primary key over
    ``partitions``, then inject faults: re-deliveries of earlier messages
    (``duplicates``), swaps of nearby messages (``reorder``), corrupt messages
    (``malformed``: each one must end in the dead-letter table)."""
    from anycdc.formats import get_format

    fmt = get_format(format_id, options)
    rng = random.Random(workload.random.random())
    parts: list[list[tuple[bytes | None, bytes]]] = [[] for _ in range(max(1, partitions))]
    dupes = swaps = bad = 0
    for event in workload.events(format_id):
        key = fmt.encode_key(event)
        index = _partition_of(key, len(parts))
        for message in fmt.encode(event):
            parts[index].append((key, message))
            if duplicates and rng.random() < duplicates:
                earlier = rng.choice(parts[index])
                parts[index].append(earlier)
                dupes += 1
            if malformed and rng.random() < malformed:
                parts[index].append((key, _corrupt(message, rng)))
                bad += 1
    for part in parts:
        for i in range(len(part) - 1):
            if reorder and rng.random() < reorder:
                j = min(len(part) - 1, i + rng.randint(1, 3))
                part[i], part[j] = part[j], part[i]
                swaps += 1
    return Stream(parts, workload.truth, workload.tables, bad, dupes, swaps)


def _partition_of(key: bytes | None, count: int) -> int:
    if count == 1 or key is None:
        return 0
    import zlib

    return zlib.crc32(key) % count


def _corrupt(message: bytes, rng: random.Random) -> bytes:
    """A message no decoder accepts: cut short, or not JSON/Avro at all."""
    kind = rng.randrange(3)
    if kind == 0:
        return message[: max(1, len(message) // 3)].rstrip(b"}") + b'"'
    if kind == 1:
        return b"\x00\xff\xfe garbage " + bytes([rng.randrange(256) for _ in range(8)])
    return b'{"hello": "not a change message"}'


# --------------------------------------------------------------------------- ground truth files
TRUTH_MANIFEST = "manifest.json"


def write_truth(stream: Stream, folder: str | Path, format_id: str) -> Path:
    """Write the expected final tables: ``manifest.json`` + one JSON Lines file per table.

    The manifest lists every table (database, name, key, column logical types)
    and the expected dead-letter count; each ``<database>.<table>.jsonl`` holds
    the table's rows in canonical JSON value form.
    """
    import json

    from anycdc.event import dumps, value_to_json

    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    manifest = {
        "format": format_id,
        "expected_dead_letters": stream.expected_dead_letters,
        "tables": [
            {
                "database": t.database,
                "table": t.name,
                "key": list(t.key),
                "columns": {n: str(c.type) for n, c in t.columns.items()},
                "rows": f"{t.qualified}.jsonl",
            }
            for t in stream.tables
        ],
    }
    (root / TRUTH_MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    for table in stream.tables:
        rows = stream.truth[table.qualified].values()
        text = "".join(dumps(value_to_json(row)) + "\n" for row in rows)
        (root / f"{table.qualified}.jsonl").write_text(text, encoding="utf-8")
    return root
