"""Reading a target's dead letters (``<target>/_anycdc/dead_letter``) without Spark.

``anycdc dead-letters`` (:mod:`anycdc.cli.dead_letters`) lists them. The table is read with
delta-rs (``deltalake``), so listing needs no JVM; its rows are
:data:`anycdc.spark.system_tables.DEAD_LETTER_COLUMNS` and ``failed_at``. The batch of a dead
letter is not a column: it is the ``txnVersion`` of the commit that added its file
(:class:`anycdc.spark.ledger.WriteId`), read from the table's JSON commits (:func:`file_writers`).
A file whose commit is only in a checkpoint any more (old commits cleaned up) or that Delta's
auto compaction rewrote has no batch (None).

The formatting helpers are pure:

>>> coordinates("file:/data/in/001.jsonl", 0, 3)
'/data/in/001.jsonl:3'
>>> coordinates("orders_topic", 2, 1041)
'orders_topic[2]@1041'
>>> raw_text(b'{"id": 1,\\n "x": "\\xc3\\xa9"}')
'{"id": 1,\\\\n "x": "é"}'
>>> raw_text(b"\\x00\\xff garbage")
'hex:00ff2067617262616765'
>>> raw_text(b"a" * 200, 10)
'aaaaaaaaa…'
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

TABLE_RAW_CHARS: Final = 120
"""How much of a raw message the table view shows."""
JSON_RAW_CHARS: Final = 1000
"""How much of a raw message ``--json``'s ``raw_text`` holds (``raw`` is all of it)."""
NOT_KEPT: Final = "(not kept)"
"""What the raw column shows for a dead letter without its message (``raw`` NULL: a table
whose ``tables:`` entry excludes or masks columns)."""
NOT_A_BATCH_APPS: Final = (":flush", "-replay")
"""Writers whose ``txnVersion`` is a time in ms, not an ingest batch: an apply outside a
batch (``QUERY:flush``) and ``replay-dead-letters`` (``QUERY-replay``)."""
_ESCAPES: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


class NotATarget(Exception):
    """The folder is not a target of ``anycdc run`` (no ``_anycdc`` under it)."""


@dataclass(frozen=True)
class DeadLetter:
    """One row of ``_anycdc/dead_letter`` and the commit that wrote it."""

    source: str | None
    partition: int | None
    offset: int | None
    event_index: int | None
    table: str | None
    kafka_key: bytes | None
    raw: bytes | None
    format: str | None
    error: str | None
    failed_at: datetime | None
    batch: int | None
    writer: str | None

    @property
    def where(self) -> str:
        return coordinates(self.source, self.partition, self.offset)

    def as_json(self) -> dict[str, Any]:
        """The ``--json`` object: bytes as base64 (``raw``, ``kafka_key``), a safe text
        prefix of the message (``raw_text``), the time in ISO 8601 UTC."""
        return {
            "failed_at": _iso(self.failed_at),
            "table": self.table,
            "error": self.error,
            "format": self.format,
            "source": self.source,
            "partition": self.partition,
            "offset": self.offset,
            "coordinates": self.where,
            "event_index": self.event_index,
            "batch": self.batch,
            "writer": self.writer,
            "kafka_key": _b64(self.kafka_key),
            "raw": _b64(self.raw),
            "raw_text": raw_text(self.raw, JSON_RAW_CHARS),
            "raw_bytes": None if self.raw is None else len(self.raw),
        }

    def as_row(self) -> list[str]:
        """The table view's cells (:data:`TABLE_HEADERS`)."""
        return [
            _when(self.failed_at),
            self.table or "",
            self.where,
            "" if self.batch is None else str(self.batch),
            self.format or "",
            self.error or "",
            raw_text(self.raw, TABLE_RAW_CHARS),
        ]


TABLE_HEADERS: Final = ("failed at", "table", "coordinates", "batch", "format", "error", "raw")


def coordinates(source: str | None, partition: int | None, offset: int | None) -> str:
    """Where the message came from: ``PATH:LINE`` for a file (a source with a ``/``; Kafka
    topic names cannot hold one), ``TOPIC[PARTITION]@OFFSET`` for a Kafka record."""
    if source is None:
        return ""
    if "/" in source:
        path = source[len("file:") :] if source.startswith("file:") else source
        return f"{path}:{offset}"
    return f"{source}[{partition}]@{offset}"


def raw_text(raw: bytes | None, limit: int = TABLE_RAW_CHARS) -> str:
    """A message shown safely: its UTF-8 text with control characters escaped, else
    ``hex:`` and its bytes in hex; cut to ``limit`` characters (``…`` marks the cut)."""
    if raw is None:
        return NOT_KEPT
    chunk = raw[: limit * 4]  # enough bytes for ``limit`` characters of any UTF-8
    try:
        decoded = chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(raw) > len(chunk) and exc.start >= len(chunk) - 3:
            decoded = chunk[: exc.start].decode("utf-8")  # the cut split a character
        else:
            decoded = None
    if decoded is None:
        text = "hex:" + raw[: limit // 2 + 1].hex()
    else:
        text = "".join(_escaped(c) for c in decoded)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _escaped(char: str) -> str:
    if char in _ESCAPES:
        return _ESCAPES[char]
    if char.isprintable() or char == " ":
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def file_writers(table_path: str) -> dict[str, tuple[str, int]]:
    """Per data file of a Delta table (its path as the log names it): the ``txn`` (app id,
    version) of the JSON commit that added it. Files of commits without a ``txn`` (an
    OPTIMIZE, a DELETE) or whose JSON commit is gone are not in it."""
    log = os.path.join(table_path, "_delta_log")
    out: dict[str, tuple[str, int]] = {}
    try:
        names = sorted(n for n in os.listdir(log) if n.endswith(".json") and n[:20].isdigit())
    except FileNotFoundError:
        return out
    for name in names:
        txn: tuple[str, int] | None = None
        added: list[str] = []
        with open(os.path.join(log, name), encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                action = json.loads(line)
                if "txn" in action:
                    txn = (str(action["txn"]["appId"]), int(action["txn"]["version"]))
                elif "add" in action:
                    added.append(str(action["add"]["path"]))
        if txn is not None:
            out.update(dict.fromkeys(added, txn))
    return out


def batch_of(writer: tuple[str, int] | None) -> int | None:
    """The ingest batch a writer's version is (None for a flush's or a replay's version,
    which are times).

    >>> batch_of(("anycdc", 7)), batch_of(("anycdc:apply:dead:/t/x", 7))
    (7, 7)
    >>> batch_of(("anycdc-replay", 1796168065585)), batch_of(None)
    (None, None)
    """
    if writer is None:
        return None
    app, version = writer
    if any(mark in app for mark in NOT_A_BATCH_APPS):
        return None
    return version


def read(target: str) -> list[DeadLetter] | None:
    """The target's dead letters, newest first; None when it has no dead-letter table.

    Raises :class:`NotATarget` for a folder without ``_anycdc``."""
    from deltalake import DeltaTable

    root = target.rstrip("/") or "/"
    if not os.path.isdir(root):
        raise NotATarget(f"{target}: no such folder")
    system = os.path.join(root, "_anycdc")
    if not os.path.isdir(system):
        raise NotATarget(
            f"{target} is not an anycdc target (no _anycdc folder: give the --target of "
            "`anycdc run`)"
        )
    path = os.path.join(system, "dead_letter")
    if not DeltaTable.is_deltatable(path):
        return None
    table = DeltaTable(path)
    writers = file_writers(path)
    rows: list[tuple[dict[str, Any], tuple[str, int] | None]] = []
    if _needs_sql_reader(table):
        import pyarrow as pa
        from deltalake import QueryBuilder

        frame = QueryBuilder().register("d", table).execute("SELECT * FROM d").read_all()
        rows = [(r, None) for r in pa.table(frame).to_pylist()]
    else:
        dataset = table.to_pyarrow_dataset()
        for fragment in dataset.get_fragments():
            writer = writers.get(_log_path(fragment.path, path))
            part = fragment.to_table(schema=dataset.schema)
            rows += [(r, writer) for r in part.to_pylist()]
    letters = [_letter(row, writer) for row, writer in rows]
    letters.sort(key=_order, reverse=True)
    return letters


def _needs_sql_reader(table: Any) -> bool:
    """Whether the Arrow dataset reader would misread the table (column mapping: every
    column NULL; deletion vectors): then DataFusion reads it (no batch per row)."""
    config = table.metadata().configuration
    mapped = config.get("delta.columnMapping.mode", "none") not in ("none", "")
    features = table.protocol().reader_features or []
    return mapped or "deletionVectors" in features


def _log_path(fragment: str, table_path: str) -> str:
    """A dataset fragment's path as the log's ``add`` names it (relative to the table)."""
    for prefix in (table_path.rstrip("/") + "/", "file://" + table_path.rstrip("/") + "/"):
        if fragment.startswith(prefix):
            return fragment[len(prefix) :]
    return fragment


def _letter(row: Mapping[str, Any], writer: tuple[str, int] | None) -> DeadLetter:
    return DeadLetter(
        source=row.get("source"),
        partition=row.get("partition"),
        offset=row.get("offset"),
        event_index=row.get("event_index"),
        table=row.get("table"),
        kafka_key=row.get("kafka_key"),
        raw=row.get("raw"),
        format=row.get("format"),
        error=row.get("error"),
        failed_at=row.get("failed_at"),
        batch=batch_of(writer),
        writer=None if writer is None else writer[0],
    )


def _order(letter: DeadLetter) -> tuple[Any, ...]:
    at = letter.failed_at.timestamp() if letter.failed_at else 0.0
    return (at, letter.source or "", letter.partition or 0, letter.offset or 0,
            letter.event_index or 0)  # fmt: skip


def select(
    letters: Iterable[DeadLetter], table: str | None, limit: int
) -> tuple[list[DeadLetter], int]:
    """The first ``limit`` (0: all) of ``letters`` of ``table`` (all when None), and how
    many matched."""
    matched = [d for d in letters if table is None or d.table == table]
    return (matched[:limit] if limit else matched), len(matched)


def tables_named(letters: Sequence[DeadLetter]) -> str:
    """The tables that have dead letters, for a ``--table`` that matched none.

    >>> from datetime import datetime
    >>> d = DeadLetter(*[None] * 12)
    >>> tables_named([d, d.__class__(**{**d.__dict__, "table": "shop.orders"})])
    'shop.orders; 1 of no table (did not decode)'
    """
    named = sorted({d.table for d in letters if d.table})
    unnamed = sum(1 for d in letters if not d.table)
    parts = ["; ".join(named)] if named else []
    if unnamed:
        parts.append(f"{unnamed} of no table (did not decode)")
    return "; ".join(parts) or "none"


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _when(at: datetime | None) -> str:
    return "" if at is None else at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
