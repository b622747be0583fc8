"""What an encoder's wire cannot carry: the losses a target format forces, per (format, type).

``anycdc convert`` reports each loss once per column (:class:`LossReport`); the round-trip
property test (``tests/parametric/test_convert_fidelity.py``) asserts that whatever does
not come back exactly was reported. A loss is a property of the vendor's wire (the seeds
in ``spec/``), not of a message: DataWorks JSON v1 types a column only as BOOLEAN, DOUBLE,
DATE (epoch milliseconds), BYTES, LONG or STRING; the SharePlex, OGG and DataWorks op codes
have no full-load row; a FLOAT column of debezium-avro is an Avro ``float`` (32 bits).

>>> from anycdc.event import ChangeEvent, Column, Op
>>> from anycdc.values import DATE
>>> import datetime as dt
>>> report = LossReport("dataworks-json")
>>> event = ChangeEvent(op=Op.SNAPSHOT, format="canal-json", table="orders",
...     after={"d": dt.date(2021, 6, 25)}, columns={"d": Column(DATE)})
>>> report.check(event); report.check(event)
>>> report.lines()
['dataworks-json has no snapshot op: orders rows written as insert', \
'dataworks-json cannot carry a date: orders.d written as its midnight UTC instant']
"""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from anycdc.event import ChangeEvent, Op

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Loss:
    """One thing a format's wire cannot carry: the values it applies to, and what happens
    to them (``{column}``: the column, qualified by its table)."""

    applies: Callable[[Any], bool]
    effect: str


def _always(value: Any) -> bool:
    return True


def _sub_millisecond(value: Any) -> bool:
    return isinstance(value, (dt.datetime, dt.time)) and value.microsecond % 1000 != 0


def _outside_int64(value: Any) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and not INT64_MIN <= value <= INT64_MAX
    )


def _not_float32(value: Any) -> bool:
    """A value an Avro ``float`` (an IEEE single) does not hold exactly: it comes back as
    the nearest single (``5.18`` -> ``5.179999828338623``)."""
    try:
        double = float(value)
        single: float = struct.unpack("<f", struct.pack("<f", double))[0]
        return single != double
    except (TypeError, ValueError, OverflowError):
        return False


NO_SNAPSHOT: Final = "has no snapshot op: {table} rows written as insert"
OP_LOSSES: Final[dict[str, dict[Op, str]]] = {
    "dataworks-json": {Op.SNAPSHOT: NO_SNAPSHOT},
    "dataworks2-json": {Op.SNAPSHOT: NO_SNAPSHOT},
    "shareplex-json": {Op.SNAPSHOT: NO_SNAPSHOT},
    "ogg-json": {Op.SNAPSHOT: NO_SNAPSHOT},
}
"""The ops a format's op codes cannot say, and what it writes instead."""

KEY_IN_KAFKA_KEY: Final = frozenset({"debezium-json", "debezium-avro"})
"""Formats whose value names no key columns: the row's key travels in the Kafka key."""
NO_KAFKA_KEY: Final = (
    "carries the row key only in the Kafka key: {table} written without it "
    "(its rows decode with no key)"
)

UNTYPED: Final = (
    "an untyped column",
    Loss(_always, "{column} comes back as the text written, not as its type"),
)
UNTYPED_KINDS: Final = ("boolean", "binary", "date", "time", "timestamp", "timestamptz", "json")
"""The types whose values a format that sends no column types gives back as text (numbers
and strings read back as they were): SharePlex and OGG messages name no column types."""

INVALID: Final = "{column} comes back invalid"
BOOLEAN_AS_INTEGER: Final = (
    "a BOOLEAN",
    Loss(_always, "{column} comes back as the integer 1 or 0"),
)

TYPE_LOSSES: Final[dict[str, dict[str, tuple[tuple[str, Loss], ...]]]] = {
    "dataworks-json": {
        "timestamp": (
            (
                "a zone-less timestamp",
                Loss(_always, "{column} written as a UTC instant (its DATE is epoch ms)"),
            ),
            ("sub-millisecond time", Loss(_sub_millisecond, "{column} cut to milliseconds")),
        ),
        "timestamptz": (
            ("sub-millisecond time", Loss(_sub_millisecond, "{column} cut to milliseconds")),
        ),
        "date": (("a date", Loss(_always, "{column} written as its midnight UTC instant")),),
        **dict.fromkeys(
            ("uint64", "integer"),
            (("an integer outside a signed 64-bit LONG", Loss(_outside_int64, INVALID)),),
        ),
    },
    "shareplex-json": dict.fromkeys(UNTYPED_KINDS, (UNTYPED,)),
    "maxwell-json": dict.fromkeys(("time", "timestamp", "timestamptz"), (UNTYPED,)),
    "oms-json": {
        "boolean": (BOOLEAN_AS_INTEGER,),  # OceanBase: BOOL as 1/0
        **dict.fromkeys(("time", "timestamp", "timestamptz"), (UNTYPED,)),
    },
    "aws-dms-json": dict.fromkeys(("boolean", "time", "timestamp", "timestamptz"), (UNTYPED,)),
    "dts-avro": {"boolean": (BOOLEAN_AS_INTEGER,)},  # DTS Avro has no boolean: an Integer
    "drs-json-c": {
        "timestamptz": (
            ("a zone on a timestamp", Loss(_always, "{column} written as local text")),
        ),  # JSON-C renders timestamps as yyyy-mm-dd hh:mm:ss
    },
    "ogg-json": dict.fromkeys(UNTYPED_KINDS, (UNTYPED,)),
    "debezium-avro": {
        "float32": (
            (
                "a FLOAT that a 32-bit float does not hold",
                Loss(_not_float32, "{column} comes back as the nearest 32-bit float"),
            ),
        ),
    },
}
"""Per format, per logical type name: what its wire cannot carry of such values."""


class LossReport:
    """The losses seen while encoding into ``format_id``: each (kind, column) once."""

    def __init__(self, format_id: str) -> None:
        self.format_id = format_id
        self._ops = OP_LOSSES.get(format_id, {})
        self._types = TYPE_LOSSES.get(format_id, {})
        self._seen: dict[tuple[str, str], str] = {}

    @property
    def count(self) -> int:
        """How many (kind, column or table) losses were seen."""
        return len(self._seen)

    def check(self, event: ChangeEvent, *, keys_written: bool = True) -> None:
        """Record what encoding ``event`` into the format loses (``keys_written``: the
        Kafka key is written beside the value)."""
        table = event.qualified_table or "(no table)"
        effect = self._ops.get(event.op)
        if effect is not None:
            self._note(f"op {event.op}", table, f"{self.format_id} {effect.format(table=table)}")
        if not keys_written and event.key and self.format_id in KEY_IN_KAFKA_KEY:
            self._note("key", table, f"{self.format_id} {NO_KAFKA_KEY.format(table=table)}")
        if not self._types or not event.columns:
            return
        for name, column in event.columns.items():
            losses = self._types.get(column.type.name)
            if not losses:
                continue
            values = [
                image[name]
                for image in (event.before, event.after)
                if image is not None and image.get(name) is not None
            ]
            for kind, loss in losses:
                if any(loss.applies(v) for v in values):
                    qualified = f"{table}.{name}"
                    effect = loss.effect.format(column=qualified)
                    self._note(kind, qualified, f"{self.format_id} cannot carry {kind}: {effect}")

    @property
    def lost_keys(self) -> bool:
        """Whether a row key was left out for want of the Kafka key."""
        return any(kind == "key" for kind, _ in self._seen)

    def lost(self, where: str) -> bool:
        """Whether a loss of ``where`` was seen: a ``table.column``, or a table (its op)."""
        return any(seen == where for _, seen in self._seen)

    def lines(self) -> list[str]:
        """One line per loss, in the order first seen."""
        return list(self._seen.values())

    def _note(self, kind: str, where: str, line: str) -> None:
        self._seen.setdefault((kind, where), line)
