"""Compare target tables with a ground truth: rows, values and schema.

Values are compared by their meaning under the column's logical type, not
their Python spelling: integers and decimals by value (``1.10`` equals
``1.1``, an unsigned BIGINT read back as DECIMAL(20,0) equals the int),
FLOAT by its 32-bit value, instants by the instant (Spark hands back local
wall time), zone-less datetimes by wall time, TIME by its text as stored,
binary by its bytes. A text value where the truth has a typed one (a column a
format sent untyped) is read as that type first.

Rows are matched by primary key; a table without one is a multiset: a row
twice in the truth must be twice in the target. The schema is compared too:
columns missing or extra (``_cdc_`` metadata aside) and, per column, the
Spark type the truth's logical type maps to versus the target's type.

>>> from decimal import Decimal
>>> same_value(Decimal("1.10"), Decimal("1.1")), same_value(1, 2)
(True, False)
>>> d = compare_rows("t", (), [{"a": 1}, {"a": 1}], [{"a": 1}], {"a": "int64"})
>>> d.missing, d.extra
([(1,)], [])
"""

from __future__ import annotations

import datetime as dt
import math
import struct
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from anycdc.formats.codecs.text import KIND_VALUE, ValueText, render_value
from anycdc.values import LogicalType

META_PREFIX = "_cdc_"  # pipeline metadata columns (position, op, row identity ...)


def normalize(value: Any) -> Any:
    """A comparable form of a typed value when its logical type is not known."""
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


def _logical(ltype: LogicalType | str | None) -> LogicalType | None:
    if ltype is None or isinstance(ltype, LogicalType):
        return ltype
    return LogicalType.parse(ltype)


def comparable(value: Any, ltype: LogicalType | str | None = None) -> Any:
    """The form two values of ``ltype`` are compared in (hashable).

    Without a type, :func:`normalize` decides by the Python type. A value that
    cannot be read as ``ltype`` stays as it is (and so differs from any typed value).
    """
    lt = _logical(ltype)
    if value is None or lt is None or lt.name == "unknown":
        return normalize(value)
    try:
        return _typed(value, lt)
    except (ValueError, TypeError, ArithmeticError, InvalidOperation, OverflowError):
        return ("unreadable", repr(value))


def _typed(value: Any, lt: LogicalType) -> Any:
    from anycdc.values import parse_bool, parse_datetime, parse_decimal, parse_int

    name = lt.name
    if name in ("string", "json"):
        # a text column holds text: 1 is not "1" (a typed value where text belongs is a bug)
        return value if isinstance(value, str) else ("not text", repr(value))
    if name in ("int8", "int16", "int32", "int64", "uint64", "integer"):
        return parse_int(value) if not isinstance(value, float) else _exact_int(value)
    if name == "decimal":
        if isinstance(value, float):
            raise TypeError("a DECIMAL read back as a float")
        return parse_decimal(value)
    if name in ("float32", "float64"):
        number = float(value)
        if math.isnan(number):
            return "NaN"
        if name == "float32":
            return struct.unpack("<f", struct.pack("<f", number))[0]
        return number
    if name == "boolean":
        return parse_bool(value)
    if name == "binary":
        if isinstance(value, str):
            import base64

            return base64.b64decode(value, validate=True)
        return bytes(value)
    if name == "date":
        if isinstance(value, dt.datetime):
            raise TypeError("a DATE read back as a datetime")
        return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))
    if name == "time":
        return value if isinstance(value, dt.time) else dt.time.fromisoformat(str(value))
    if name == "timestamp":
        stamp = value if isinstance(value, dt.datetime) else parse_datetime(str(value))
        return stamp.astimezone(dt.UTC).replace(tzinfo=None) if stamp.tzinfo else stamp
    if name == "timestamptz":
        stamp = value if isinstance(value, dt.datetime) else parse_datetime(str(value))
        # PySpark returns TIMESTAMP values as naive local wall time: astimezone() reads
        # a naive datetime as local time, which is exactly that
        return stamp.astimezone(dt.UTC)
    return normalize(value)


def _exact_int(value: float) -> int:
    if not value.is_integer():
        raise ValueError(f"{value!r} is not an integer")
    return int(value)


def same_value(expected: Any, actual: Any, ltype: LogicalType | str | None = None) -> bool:
    """Equal by meaning under ``ltype``. Without a type, a text ``actual`` (a column a
    format sent untyped) is read as the expected value's type before comparing."""
    if ltype is None and isinstance(actual, str) and expected is not None:
        if not isinstance(expected, str):
            try:
                actual = _as_type_of(expected, actual)
            except (ValueError, ArithmeticError):
                return False
    return bool(comparable(expected, ltype) == comparable(actual, ltype))


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
    if isinstance(expected, dt.time):
        return dt.time.fromisoformat(text)
    return text


@dataclass
class TableDiff:
    """Differences between one target table and its truth.

    ``missing``/``extra`` hold key values (keyed tables) or whole rows as value
    tuples in ``columns`` order (tables without a key; a row counted twice appears
    twice). ``different``: (key, column, expected, actual). ``schema``: (column,
    expected Spark type or None when extra, actual Spark type or None when missing).
    """

    table: str
    expected_rows: int
    actual_rows: int
    missing: list[tuple[Any, ...]] = field(default_factory=list)
    extra: list[tuple[Any, ...]] = field(default_factory=list)
    different: list[tuple[tuple[Any, ...], str, Any, Any]] = field(default_factory=list)
    schema: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    key: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.different or self.schema)

    @property
    def multiset(self) -> bool:
        """True when rows were matched as a multiset (the table has no key)."""
        return not self.key


def compare_rows(
    table: str,
    key: Sequence[str],
    expected: Iterable[Mapping[str, Any]],
    actual: Iterable[Mapping[str, Any]],
    types: Mapping[str, LogicalType | str] | None = None,
) -> TableDiff:
    """Diff two row sets: by ``key``, or as multisets when ``key`` is empty.

    Every column of the expected rows is compared (under its logical type from
    ``types`` when given); other columns of the actual rows are ignored.
    """
    types = dict(types or {})
    want_rows, have_rows = list(expected), list(actual)
    if not key:
        return _compare_multiset(table, want_rows, have_rows, types)

    def index(rows: list[Mapping[str, Any]]) -> dict[tuple[Any, ...], Mapping[str, Any]]:
        # keys compare as text of their comparable form: an untyped format's "1" is 1
        return {tuple(str(comparable(r.get(k), types.get(k))) for k in key): r for r in rows}

    want, have = index(want_rows), index(have_rows)
    diff = TableDiff(table, len(want_rows), len(have_rows), key=tuple(key))
    diff.missing = sorted((k for k in want if k not in have), key=repr)
    diff.extra = sorted((k for k in have if k not in want), key=repr)
    for k in sorted(want.keys() & have.keys(), key=repr):
        for column, value in want[k].items():
            got = have[k].get(column)
            if not same_value(value, got, types.get(column)):
                diff.different.append((k, column, value, got))
    return diff


def _compare_multiset(
    table: str,
    want_rows: list[Mapping[str, Any]],
    have_rows: list[Mapping[str, Any]],
    types: Mapping[str, LogicalType | str],
) -> TableDiff:
    columns = tuple(dict.fromkeys(c for r in want_rows for c in r)) or tuple(types)

    def fingerprint(row: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(comparable(row.get(c), types.get(c)) for c in columns)

    shown: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for row in [*want_rows, *have_rows]:
        shown.setdefault(fingerprint(row), tuple(row.get(c) for c in columns))
    want = Counter(fingerprint(r) for r in want_rows)
    have = Counter(fingerprint(r) for r in have_rows)
    diff = TableDiff(table, len(want_rows), len(have_rows), columns=columns)
    diff.missing = sorted((shown[f] for f, n in (want - have).items() for _ in range(n)), key=repr)
    diff.extra = sorted((shown[f] for f, n in (have - want).items() for _ in range(n)), key=repr)
    return diff


def compare_schema(
    expected: Mapping[str, LogicalType | str],
    actual: Mapping[str, str],
    decimal_default: tuple[int, int] = (38, 18),
) -> list[tuple[str, str | None, str | None]]:
    """Columns missing, extra or of another type: (column, expected, actual) Spark types.

    ``expected`` maps columns to logical types (the truth), ``actual`` to Spark SQL
    type names as the target has them (``simpleString`` or DDL spelling; case and
    Spark's aliases do not matter). ``_cdc_`` metadata columns are ignored.
    """
    from anycdc.spark.sql_types import spark_type

    want = {n: spark_type(str(_logical(t)), decimal_default) for n, t in expected.items()}
    have = {
        n: _spark_name(t)
        for n, t in actual.items()
        if n in want or not n.startswith(META_PREFIX)  # a source's own _cdc_ column counts
    }
    out: list[tuple[str, str | None, str | None]] = []
    for name, wanted in want.items():
        got = have.get(name)
        if got != wanted:
            out.append((name, wanted, got))
    out += [(name, None, got) for name, got in have.items() if name not in want]
    return out


_SPARK_ALIASES = {"INTEGER": "INT", "BYTE": "TINYINT", "SHORT": "SMALLINT", "LONG": "BIGINT"}


def _spark_name(simple: str) -> str:
    text = simple.upper().replace(" ", "")
    return _SPARK_ALIASES.get(text, text)


def compare_table(
    table: str,
    key: Sequence[str],
    types: Mapping[str, LogicalType | str],
    expected: Iterable[Mapping[str, Any]],
    actual: Iterable[Mapping[str, Any]],
    actual_schema: Mapping[str, str] | None = None,
    decimal_default: tuple[int, int] = (38, 18),
) -> TableDiff:
    """Rows (:func:`compare_rows`) and, when ``actual_schema`` is given, the schema."""
    diff = compare_rows(table, key, expected, actual, types)
    if actual_schema is not None:
        diff.schema = compare_schema(types, actual_schema, decimal_default)
    return diff


def _hex(data: bytes, kind: str) -> str:
    return "0x" + data.hex()


REPORT_TEXT: Final = ValueText(
    true="True",
    false="False",
    integer=str,
    decimal=str,
    floating=str,
    binary=_hex,
    datetime=lambda value, kind: value.isoformat(),
    date=dt.date.isoformat,
    time=dt.time.isoformat,
    other=str,
)
"""How a report writes a value (:func:`describe`): Python's text, ISO dates, bytes in hex."""


def describe(value: Any, limit: int = 60) -> str:
    """A short readable form of a value for reports.

    >>> describe(b"\\x01\\xff"), describe(dt.date(2024, 5, 1)), describe("x"), describe(None)
    ('0x01ff', '2024-05-01', "'x'", 'None')
    """
    if isinstance(value, tuple):
        text = "(" + ", ".join(describe(v, limit) for v in value) + ")"
        return text if len(text) <= limit * 2 else text[: limit * 2 - 1] + "…"
    if value is None or isinstance(value, str):
        text = repr(value)
    else:
        text = render_value(value, KIND_VALUE, REPORT_TEXT)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class TruthTable:
    """One table of a ground truth: its key (empty: a multiset), logical types and rows."""

    database: str
    table: str
    key: list[str]
    rows: list[dict[str, Any]]
    types: dict[str, str] = field(default_factory=dict)

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.table}"


def load_truth(folder: str) -> tuple[list[TruthTable], int]:
    """Read what :func:`anycdc.simulate.write_truth` wrote: tables with typed rows, and
    the expected dead-letter count."""
    import json
    from pathlib import Path

    from anycdc.event import value_from_json

    root = Path(folder)
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    tables = []
    for spec in manifest["tables"]:
        types = {name: LogicalType.parse(t) for name, t in spec["columns"].items()}
        rows = []
        text = (root / spec["rows"]).read_text(encoding="utf-8")
        # split on newlines only: str.splitlines() also splits inside values (U+2028, \x1c ...)
        for line in filter(None, text.split("\n")):
            raw = json.loads(line)
            rows.append({k: value_from_json(v, types[k]) for k, v in raw.items()})
        tables.append(
            TruthTable(
                spec["database"],
                spec["table"],
                spec["key"],
                rows,
                {name: str(t) for name, t in types.items()},
            )
        )
    return tables, int(manifest.get("expected_dead_letters", 0))
