"""Compare target tables with a ground truth, value by value.

Values are compared by their canonical meaning, not their Python spelling:
decimals by value, instants by the instant, zone-less datetimes by wall
time, so a row read back from Delta equals the row the simulator wrote.

>>> from decimal import Decimal
>>> same_value(Decimal("1.10"), Decimal("1.1")), same_value(1, 2)
(True, False)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any


def normalize(value: Any) -> Any:
    """A comparable form of a typed value."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, Decimal)):
        return Decimal(value).normalize() if not isinstance(value, int) else Decimal(value)
    if isinstance(value, float):
        return value
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            return value.astimezone(dt.UTC).replace(tzinfo=None)
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    return value


def same_value(expected: Any, actual: Any) -> bool:
    """Equal by meaning. A text value (a column a format sent untyped) is read as the
    expected value's type before comparing."""
    if isinstance(actual, str) and expected is not None and not isinstance(expected, str):
        try:
            actual = _as_type_of(expected, actual)
        except (ValueError, ArithmeticError):
            return False
    return bool(normalize(expected) == normalize(actual))


def _as_type_of(expected: Any, text: str) -> Any:
    from anycdc.values import parse_bool, parse_datetime, parse_decimal, parse_int

    if isinstance(expected, bool):
        return parse_bool(text)
    if isinstance(expected, int):
        return parse_int(text)
    if isinstance(expected, Decimal):
        return parse_decimal(text)
    if isinstance(expected, float):
        return float(text)
    if isinstance(expected, dt.datetime):
        return parse_datetime(text)
    if isinstance(expected, dt.date):
        return dt.date.fromisoformat(text)
    return text


@dataclass
class TableDiff:
    """Differences between one target table and its truth."""

    table: str
    expected_rows: int
    actual_rows: int
    missing: list[tuple[Any, ...]] = field(default_factory=list)
    extra: list[tuple[Any, ...]] = field(default_factory=list)
    different: list[tuple[tuple[Any, ...], str, Any, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.different)


def compare_rows(
    table: str,
    key: Sequence[str],
    expected: Iterable[Mapping[str, Any]],
    actual: Iterable[Mapping[str, Any]],
) -> TableDiff:
    """Diff two row sets keyed by ``key`` (every expected column is compared)."""

    def index(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[Any, ...], Mapping[str, Any]]:
        # keys compare as text: an untyped format's "1" is the same key as 1
        return {tuple(str(normalize(r[k])) for k in key): r for r in rows}

    want, have = index(expected), index(actual)
    diff = TableDiff(table, len(want), len(have))
    diff.missing = sorted((k for k in want if k not in have), key=repr)
    diff.extra = sorted((k for k in have if k not in want), key=repr)
    for k in sorted(want.keys() & have.keys(), key=repr):
        for column, value in want[k].items():
            if not same_value(value, have[k].get(column)):
                diff.different.append((k, column, value, have[k].get(column)))
    return diff


@dataclass
class TruthTable:
    database: str
    table: str
    key: list[str]
    rows: list[dict[str, Any]]


def load_truth(folder: str) -> tuple[list[TruthTable], int]:
    """Read what :func:`anycdc.simulate.write_truth` wrote: tables with typed rows, and
    the expected dead-letter count."""
    import json
    from pathlib import Path

    from anycdc.event import value_from_json
    from anycdc.values import LogicalType

    root = Path(folder)
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    tables = []
    for spec in manifest["tables"]:
        types = {name: LogicalType.parse(t) for name, t in spec["columns"].items()}
        rows = []
        for line in (root / spec["rows"]).read_text(encoding="utf-8").splitlines():
            raw = json.loads(line)
            rows.append({k: value_from_json(v, types[k]) for k, v in raw.items()})
        tables.append(TruthTable(spec["database"], spec["table"], spec["key"], rows))
    return tables, int(manifest.get("expected_dead_letters", 0))
