"""What a micro-batch's changelog rows say, counted where they are decoded.

Where it sits: source -> **decode (+ tally)** -> changelog -> plan -> apply. The single-pass
ingest (``ingest_engine: single-pass``, :mod:`anycdc.spark.ingest`) decodes a batch and
appends it to the changelog in one Spark job, with no cached copy to count or plan from.
So each decode task counts its own rows as it hands them to Arrow: a :class:`BatchTally`
holds the batch's counts (rows, dead letters, messages, bytes, skips, newest times, the
formats seen) and, per table, the :class:`~anycdc.spark.plan.TableSummary` the plan job
(:func:`~anycdc.spark.plan.summarize`) gives for the same rows. The task's tally leaves it
as one marker row (op :data:`TALLY_OP`, the tally as JSON in ``raw``) that an observation
of the write collects and the write itself filters out; the driver merges the tasks'
tallies (:meth:`BatchTally.merge`).

The cached ingest (``ingest_engine: cached``) counts and plans with Spark aggregates over a
cached copy of the batch: the reference this tally is compared with
(``tests/pipeline/test_single_pass_ingest.py``, ``tests/unit/test_tally.py``).

>>> from anycdc.changelog import CHANGELOG_NAMES
>>> def row(**values):
...     return tuple(values.get(name) for name in CHANGELOG_NAMES)
>>> tally = BatchTally()
>>> tally.see(row(op="insert", table="orders", database="shop", event_index=0, raw=b"{}",
...               after={"id": "1"}, position="0007", ts_ms=5))
>>> tally.see(row(error="bad JSON", event_index=0, raw=b"x", source="t", partition=0, offset=9))
>>> merged = BatchTally.merge([BatchTally.from_json(tally.to_json())])
>>> merged.rows, merged.errors, merged.messages, merged.bytes, merged.bad
(2, 1, 2, 3, [('t', 0, 9)])
>>> [(s.table, s.rows, s.image_columns) for s in merged.summaries()]
[('orders', 1, ('id',))]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from anycdc import event
from anycdc.changelog import CHANGELOG_NAMES, ChangelogValues
from anycdc.spark.plan import TableSummary, first_sightings

TALLY_OP: Final = "_tally"
"""The op of a decode task's tally row: never a changelog row (the write filters it out)."""

_AT: Final = {name: at for at, name in enumerate(CHANGELOG_NAMES)}
_SOURCE, _PARTITION, _OFFSET = _AT["source"], _AT["partition"], _AT["offset"]
_INDEX, _RAW, _FORMAT, _OP = _AT["event_index"], _AT["raw"], _AT["format"], _AT["op"]
_DATABASE, _SCHEMA, _TABLE, _KEY = _AT["database"], _AT["schema"], _AT["table"], _AT["key"]
_BEFORE, _AFTER, _COLUMNS = _AT["before"], _AT["after"], _AT["columns"]
_POSITION, _TS, _DDL, _ROW_ID = _AT["position"], _AT["ts_ms"], _AT["ddl"], _AT["row_id"]
_ERROR, _PRODUCED = _AT["error"], _AT["produced_ms"]

_CONTROL: Final = frozenset(op.value for op in event.CONTROL_OPS)
_ROWS: Final = frozenset(op.value for op in event.ROW_OPS)
_PENDING: Final = frozenset(op.value for op in event.TABLE_OPS)
_TRUNCATE: Final = event.Op.TRUNCATE.value
_DDL_OP: Final = event.Op.DDL.value

Columns = tuple[tuple[str, str], ...]
"""A row's column list as the plan reads it: (name, logical type)."""


@dataclass
class _Group:
    """One table's rows of one column list (the plan job's first stage)."""

    rows: int = 0
    position: str | None = None
    images: dict[str, None] = field(default_factory=dict)
    key: tuple[str, ...] | None = None
    has_row_id: bool = False
    truncate: str | None = None
    has_rows: bool = False
    produced_ms: int | None = None
    ddl: list[tuple[str, str]] = field(default_factory=list)


def _newer(a: Any, b: Any) -> Any:
    """The greater of two values, a None being neither (SQL's ``max``)."""
    return b if a is None else a if b is None else max(a, b)


def _older(a: Any, b: Any) -> Any:
    """The lesser of two values, a None being neither (SQL's ``min``)."""
    return b if a is None else a if b is None else min(a, b)


class BatchTally:
    """The counts and table summaries of changelog rows (see the module docstring)."""

    def __init__(self) -> None:
        self.rows = 0
        self.errors = 0
        self.messages = 0
        self.bytes = 0
        self.control = 0
        """Rows of a control op (heartbeat, transaction begin/commit): skipped."""
        self.no_table = 0
        """Rows that decoded without naming a table: skipped."""
        self.heartbeat_ts_ms: int | None = None
        self.source_ts_ms: int | None = None
        self.formats: dict[tuple[str | None, str | None], None] = {}
        """(source, format) of the messages that decoded, first seen first."""
        self.bad: list[tuple[str | None, int | None, int | None]] = []
        """The coordinates (source, partition, offset) of the dead letters."""
        self._groups: dict[tuple[Any, ...], _Group] = {}
        self._parsed: dict[int, tuple[Any, Columns]] = {}  # id(columns) -> (them, the key)
        self._summaries: list[TableSummary] | None = None  # merged ones (merge)

    def see(self, values: ChangelogValues) -> None:
        """Count one changelog row (what the plan job and the ingest counts read of it)."""
        self.rows += 1
        first = values[_INDEX] == 0
        if first:
            self.messages += 1
            raw = values[_RAW]
            if raw is not None:
                self.bytes += len(raw)
        if values[_ERROR] is not None:
            self.errors += 1
            self.bad.append((values[_SOURCE], values[_PARTITION], values[_OFFSET]))
            return
        op = values[_OP]
        if first:
            self.formats[(values[_SOURCE], values[_FORMAT])] = None
        if op in _CONTROL:
            self.control += 1
            self.heartbeat_ts_ms = _newer(self.heartbeat_ts_ms, values[_TS])
        elif op in _ROWS:
            self.source_ts_ms = _newer(self.source_ts_ms, values[_TS])
        table = values[_TABLE]
        if not table:
            if op not in _CONTROL:
                self.no_table += 1
            return
        if op not in _PENDING:
            return
        columns = self._columns(values[_COLUMNS])
        ident = (values[_DATABASE], values[_SCHEMA], table, columns)
        group = self._groups.get(ident)
        if group is None:
            group = self._groups[ident] = _Group()
        group.rows += 1
        position = values[_POSITION]
        sort_position = position if position is not None else ""
        if group.position is None or sort_position < group.position:
            group.position = sort_position
        for image in (values[_AFTER], values[_BEFORE]):
            if image and not group.images.keys() >= image.keys():
                group.images.update(dict.fromkeys(image))
        key = values[_KEY]
        if key is not None:
            group.key = _newer(group.key, tuple(key))
        if values[_ROW_ID] is not None:
            group.has_row_id = True
        if op in _ROWS:
            group.has_rows = True
        elif op == _TRUNCATE:
            group.truncate = _newer(group.truncate, position)
        elif op == _DDL_OP and values[_DDL]:
            group.ddl.append((position or "", values[_DDL]))
        group.produced_ms = _older(group.produced_ms, values[_PRODUCED])

    def _columns(self, columns: Sequence[dict[str, Any]] | None) -> Columns:
        """The (name, type) key of a row's column list; rows of one schema share the list."""
        if not columns:
            return ()
        hit = self._parsed.get(id(columns))
        if hit is not None and hit[0] is columns:
            return hit[1]
        parsed = tuple((c["name"], c["type"]) for c in columns)
        self._parsed[id(columns)] = (columns, parsed)
        return parsed

    def summaries(self) -> list[TableSummary]:
        """One summary per table of its rows (what :func:`~anycdc.spark.plan.summarize`
        gives for them), in the order the tables came."""
        if self._summaries is not None:
            return list(self._summaries)
        tables: dict[tuple[Any, ...], list[tuple[Columns, _Group]]] = {}
        for (database, schema, table, columns), group in self._groups.items():
            tables.setdefault((database, schema, table), []).append((columns, group))
        summaries = []
        for (database, schema, table), groups in tables.items():
            keys = [g.key for _, g in groups if g.key]
            truncates = [g.truncate for _, g in groups if g.truncate is not None]
            produced = [g.produced_ms for _, g in groups if g.produced_ms is not None]
            summaries.append(
                TableSummary(
                    database,
                    schema,
                    table,
                    rows=sum(g.rows for _, g in groups),
                    sightings=first_sightings(
                        (g.position or "", columns) for columns, g in groups if columns
                    ),
                    ddl=tuple(d for _, g in groups for d in g.ddl),
                    image_columns=tuple(dict.fromkeys(c for _, g in groups for c in g.images)),
                    key=max(keys) if keys else None,
                    has_row_id=any(g.has_row_id for _, g in groups),
                    truncate_position=max(truncates) if truncates else None,
                    has_rows=any(g.has_rows for _, g in groups),
                    produced_ms=min(produced) if produced else None,
                )
            )
        return summaries

    # ------------------------------------------------------------------ to the driver
    def to_json(self) -> bytes:
        """The tally as JSON (the payload of its :data:`TALLY_OP` row)."""
        return json.dumps(
            {
                "rows": self.rows, "errors": self.errors, "messages": self.messages,
                "bytes": self.bytes, "control": self.control, "no_table": self.no_table,
                "hb": self.heartbeat_ts_ms, "ts": self.source_ts_ms,
                "formats": list(self.formats), "bad": self.bad,
                "tables": [_summary_json(s) for s in self.summaries()],
            },
            separators=(",", ":"),
        ).encode()  # fmt: skip

    @classmethod
    def from_json(cls, payload: bytes | str) -> BatchTally:
        """A tally from :meth:`to_json`."""
        data = json.loads(payload)
        tally = cls()
        tally.rows, tally.errors = int(data["rows"]), int(data["errors"])
        tally.messages, tally.bytes = int(data["messages"]), int(data["bytes"])
        tally.control, tally.no_table = int(data["control"]), int(data["no_table"])
        tally.heartbeat_ts_ms, tally.source_ts_ms = data["hb"], data["ts"]
        tally.formats = {(s, f): None for s, f in data["formats"]}
        tally.bad = [(s, p, o) for s, p, o in data["bad"]]
        tally._summaries = [_summary_of(s) for s in data["tables"]]
        return tally

    @classmethod
    def merge(cls, parts: Iterable[BatchTally]) -> BatchTally:
        """The tally of all the parts' rows (each table's summaries combined with
        :meth:`~anycdc.spark.plan.TableSummary.combine`)."""
        merged = cls()
        per_table: dict[tuple[Any, ...], list[TableSummary]] = {}
        for part in parts:
            merged.rows += part.rows
            merged.errors += part.errors
            merged.messages += part.messages
            merged.bytes += part.bytes
            merged.control += part.control
            merged.no_table += part.no_table
            merged.heartbeat_ts_ms = _newer(merged.heartbeat_ts_ms, part.heartbeat_ts_ms)
            merged.source_ts_ms = _newer(merged.source_ts_ms, part.source_ts_ms)
            merged.formats.update(part.formats)
            merged.bad += part.bad
            for summary in part.summaries():
                per_table.setdefault(summary.ident, []).append(summary)
        merged._summaries = [TableSummary.combine(parts) for parts in per_table.values()]
        return merged

    def marker(self) -> ChangelogValues:
        """The tally as its task's :data:`TALLY_OP` row (every other column NULL)."""
        values: list[Any] = [None] * len(CHANGELOG_NAMES)
        values[_OP] = TALLY_OP
        values[_RAW] = self.to_json()
        return tuple(values)


def _summary_json(summary: TableSummary) -> dict[str, Any]:
    return {
        "database": summary.database, "schema": summary.schema, "table": summary.table,
        "rows": summary.rows,
        "sightings": [[p, [list(c) for c in cols]] for p, cols in summary.sightings],
        "ddl": [list(d) for d in summary.ddl], "image_columns": list(summary.image_columns),
        "key": list(summary.key) if summary.key is not None else None,
        "has_row_id": summary.has_row_id, "truncate": summary.truncate_position,
        "has_rows": summary.has_rows, "produced_ms": summary.produced_ms,
    }  # fmt: skip


def _summary_of(data: dict[str, Any]) -> TableSummary:
    return TableSummary(
        data["database"],
        data["schema"],
        data["table"],
        rows=int(data["rows"]),
        sightings=tuple((p, tuple((n, t) for n, t in cols)) for p, cols in data["sightings"]),
        ddl=tuple((p, d) for p, d in data["ddl"]),
        image_columns=tuple(data["image_columns"]),
        key=tuple(data["key"]) if data["key"] is not None else None,
        has_row_id=bool(data["has_row_id"]),
        truncate_position=data["truncate"],
        has_rows=bool(data["has_rows"]),
        produced_ms=data["produced_ms"],
    )
