"""What each format carries, for the simulator (:data:`FORMAT_PROFILES`, derived from each
format's :class:`~anycdc.formats.base.Capabilities`), and how a column and its values
become what that format delivers."""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import cache, lru_cache
from typing import Any, Final

from anycdc.event import Column
from anycdc.values import LogicalType, epoch_micros, format_time


# --------------------------------------------------------------------------- what each format carries
@dataclass(frozen=True)
class FormatProfile:
    """What one format can carry and the pipeline can apply, as the simulator uses it.

    Derived (:func:`derive_profile`) from the format's own declaration,
    :class:`~anycdc.formats.base.Capabilities` (``ddl``, ``truncate``,
    ``tx_markers``, ``heartbeats``, ``snapshots``, ``key_names``,
    ``partial_updates``, ``owner_as_schema``, ``documents``, ``value_typed`` and
    the first ``notes``), and from what only the simulator knows
    (:data:`SIMULATION`: ``types``, ``binlog_position``, ``gaps``, further ``notes``).

    ``types`` names the value mapping (:func:`adapt_column`): ``exact`` (every
    logical type as is), ``debezium`` (BIGINT UNSIGNED as Connect's
    DECIMAL(20,0)), ``mysql`` (Canal: BOOLEAN is TINYINT(1), a TIMESTAMP arrives
    zone-less in UTC wall time), ``dts-avro`` (BOOLEAN is TINY; no BIGINT UNSIGNED,
    see :data:`PIPELINE_GAPS`), ``naive-instants`` (TIMESTAMP WITH TIME ZONE
    arrives zone-less, in UTC), ``dataworks`` (six types: LONG, DOUBLE as an exact
    decimal, STRING, BOOLEAN, DATE as epoch ms, BYTES) or ``text`` (no types at
    all: the pipeline stores the vendor's text; every format whose capabilities
    say ``TypeInfo.NONE``).

    ``value_typed``: the message types a column by its value (DTS Avro), so a NULL
    DECIMAL arrives without its precision. ``gaps`` names the :data:`PIPELINE_GAPS`
    this format runs into; a :class:`Workload` avoids them unless told otherwise.
    """

    types: str = "exact"
    ddl: bool = True
    truncate: bool = True
    tx_markers: bool = True
    heartbeats: bool = True
    snapshots: bool = True  # a full-load op distinct from insert
    key_names: bool = True  # messages name the key columns
    partial_updates: bool = False  # updates carry the changed columns only (SharePlex)
    owner_as_schema: bool = False  # the database is named as a schema (OWNER.TABLE: SharePlex, OGG)
    documents: bool = False  # MongoDB documents instead of rows
    value_typed: bool = False
    binlog_position: bool = False  # positions as MySQL binlog (file 1, offset n, record 0)
    gaps: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Simulation:
    """What only the simulator knows of a format (the rest is its ``Capabilities``)."""

    types: str | None = None  # the simulated type family; None: ``text`` if untyped, else exact
    binlog_position: bool = False  # positions as MySQL binlog (DTS Avro: no bare sequence)
    gaps: tuple[str, ...] = ()  # the PIPELINE_GAPS the format runs into
    notes: tuple[str, ...] = ()  # after the format's own notes


_UNTYPED_DDL_NOTE: Final = (
    "no DDL (gap untyped-ddl: a typed ALTER TABLE on a table of text columns)"
)
SIMULATION: Final[dict[str, Simulation]] = {
    "debezium-json": Simulation(types="debezium"),
    "debezium-avro": Simulation(types="debezium"),
    "canal-json": Simulation(types="mysql"),
    "dts-canal-json": Simulation(types="mysql"),
    "dts-avro": Simulation(
        types="dts-avro",
        binlog_position=True,
        gaps=("dts-avro-unsigned", "precisionless-decimal"),
        notes=(
            "no TRUNCATE: deletes of every row instead",
            "types by value: BIGINT UNSIGNED is int64 below 2^63 (gap dts-avro-unsigned: "
            "the column is left out), a NULL DECIMAL has no precision (gap "
            "precisionless-decimal: the target column may become DECIMAL(38,18))",
        ),
    ),
    "drs-json-c": Simulation(types="naive-instants"),
    "dataworks-json": Simulation(
        types="dataworks",
        gaps=("precisionless-decimal",),
        notes=(
            "no DDL (gap precisionless-decimal: MODIFY ... DECIMAL(p,s) over precision-less "
            "row types gives a batch-dependent column type)",
        ),
    ),
    "oms-json": Simulation(gaps=("untyped-ddl",), notes=(_UNTYPED_DDL_NOTE,)),
    "maxwell-json": Simulation(gaps=("untyped-ddl",), notes=(_UNTYPED_DDL_NOTE,)),
}


def derive_profile(format_id: str) -> FormatProfile:
    """The simulator's profile of ``format_id``: its capabilities + :data:`SIMULATION`.

    >>> p = derive_profile("shareplex-json")
    >>> p.types, p.key_names, p.partial_updates, p.ddl
    ('text', False, True, False)
    """
    from anycdc.formats import format_class
    from anycdc.formats.base import TypeInfo

    caps = format_class(format_id).capabilities
    sim = SIMULATION.get(format_id, Simulation())
    return FormatProfile(
        types=sim.types or ("text" if caps.types is TypeInfo.NONE else "exact"),
        ddl=caps.ddl and not caps.documents,  # a document stream has no DDL statements
        truncate=caps.truncate,
        tx_markers=caps.tx_markers,
        heartbeats=caps.heartbeats,
        snapshots=caps.snapshots,
        key_names=caps.key_names,
        partial_updates=caps.partial_updates,
        owner_as_schema=caps.owner_as_schema,
        documents=caps.documents,
        value_typed=caps.value_typed,
        binlog_position=sim.binlog_position,
        gaps=sim.gaps,
        notes=caps.notes + sim.notes,
    )


class _Profiles(Mapping[str, FormatProfile]):
    """Every format the simulator can write (those with an encoder) -> its profile, derived
    on first use from the format registry (importing this module imports no format)."""

    @staticmethod
    @cache
    def _all() -> dict[str, FormatProfile]:
        from anycdc.formats import format_class, format_ids

        return {f: derive_profile(f) for f in format_ids() if format_class(f).can_encode}

    def __getitem__(self, format_id: str) -> FormatProfile:
        return self._all()[format_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __repr__(self) -> str:
        return f"FORMAT_PROFILES({self._all()!r})"


FORMAT_PROFILES: Final[Mapping[str, FormatProfile]] = _Profiles()
"""Format id -> :class:`FormatProfile`, for every format with an encoder (derived lazily)."""

PIPELINE_GAPS: Final[dict[str, str]] = {
    # Where the pipeline's result differs from what the simulator's truth models. A Workload
    # avoids each (avoid_gaps=True, the default) so that the truth stays the truth; each
    # names its test. Fixed and gone: keyless-schema-change, mongo-set-typed. untyped-ddl
    # and dts-avro-unsigned are applied now (their tests are regression tests); they stay
    # because the truth types those columns without the DDL / by the declared type.
    "keyless-duplicates": "identical rows of a table without a key collapse into one "
    "(documented: README, Semantics: Keys); Workload(keyless_duplicates=True) makes them "
    "(tests/pipeline/test_sim_found_keyless_duplicates.py pins the behaviour)",
    "untyped-ddl": "ALTER TABLE on a table of an untyped format (oms-json, maxwell-json) types "
    "the column from the DDL while its values are text: STRING vs BIGINT is incompatible and the "
    "table's events are dead-lettered: no DDL for untyped formats "
    "(tests/pipeline/test_sim_found_untyped_ddl.py)",
    "dts-avro-unsigned": "DTS Avro types BIGINT UNSIGNED by value (LONGLONG: int64 below "
    "2^63, uint64 above) and the pipeline cannot widen BIGINT to DECIMAL(20,0): the column "
    "is left out for dts-avro (tests/pipeline/test_sim_found_bigint_to_unsigned.py)",
    "precisionless-decimal": "a DECIMAL without precision (DataWorks rows, a NULL in DTS "
    "Avro) keeps a DECIMAL(p,s) column as it is but types a new column DECIMAL(38,18) "
    "(decimal_default), and a later DECIMAL(p,s) with more integer digits than 20 cannot "
    "widen that; DDL on DataWorks tables types the columns it adds exactly, which the truth "
    "does not model: no DDL for dataworks-json; dts-avro's DECIMAL columns may end as "
    "DECIMAL(38,18) (tests/pipeline/test_sim_found_precisionless_decimal.py, "
    "tests/unit/test_plans.py)",
}


def format_profile(format_id: str) -> FormatProfile:
    """What the simulator generates for ``format_id`` (ValueError for formats it cannot write)."""
    try:
        return FORMAT_PROFILES[format_id]
    except KeyError:
        raise ValueError(
            f"the simulator cannot write {format_id!r} (no encoder, or no simulation profile)"
        ) from None


@lru_cache(maxsize=4096)
def adapt_column(format_id: str, column: Column, avoid_gaps: bool = True) -> Column | None:
    """The column as ``format_id`` delivers it to the pipeline; None when it cannot carry
    it (or, with ``avoid_gaps``, when the pipeline cannot apply it: :data:`PIPELINE_GAPS`)."""
    kind = format_profile(format_id).types
    ltype = column.type
    name = ltype.name
    if kind == "text":
        return Column(LogicalType("string"), column.vendor_type)
    if kind == "debezium" and name == "uint64":
        return Column(LogicalType("decimal", 20, 0), column.vendor_type)
    if kind in ("mysql", "dts-avro") and name == "boolean":
        return Column(LogicalType("int8"), "tinyint(1)")
    if kind == "dts-avro" and name == "uint64" and avoid_gaps:
        return None
    if kind in ("mysql", "naive-instants") and name == "timestamptz":
        return Column(LogicalType("timestamp"), column.vendor_type)
    if kind == "dataworks":
        return _dataworks_column(column)
    return column


def _dataworks_column(column: Column) -> Column | None:
    ltype = column.type
    name = ltype.name
    if name == "uint64":
        return None  # LONG is signed 64-bit: values above 2^63 cannot be written
    if name in ("int8", "int16", "int32", "int64"):
        return Column(LogicalType("int64"), column.vendor_type)
    if name == "decimal":
        # no precision on the wire: the pipeline's default DECIMAL(38,18) must hold it
        whole = (ltype.precision or 0) - (ltype.scale or 0)
        if ltype.precision is not None and (whole > 20 or (ltype.scale or 0) > 18):
            return None
        return Column(LogicalType("decimal"), column.vendor_type)
    if name in ("float32", "float64"):
        return Column(LogicalType("decimal"), column.vendor_type)
    if name in ("date", "timestamp", "timestamptz"):
        return Column(LogicalType("timestamptz"), column.vendor_type)
    if name in ("time", "json"):
        return Column(LogicalType("string"), column.vendor_type)
    return column


def adapt_value(format_id: str, column: Column, value: Any) -> Any:
    """A canonical value as ``format_id`` delivers it (``column`` is the canonical column)."""
    convert = value_converter(format_id, column)
    return value if value is None or convert is None else convert(value)


@lru_cache(maxsize=4096)
def value_converter(format_id: str, column: Column) -> Callable[[Any], Any] | None:
    """How a non-NULL value of ``column`` changes on its way through ``format_id`` (None:
    it does not)."""
    kind = format_profile(format_id).types
    name = column.type.name
    if kind == "text":
        return untyped_text
    if kind == "debezium" and name == "uint64":
        return Decimal
    if kind in ("mysql", "dts-avro") and name == "boolean":
        return int
    if kind in ("mysql", "naive-instants") and name == "timestamptz":
        return _utc_wall_time
    if kind == "dataworks":
        return _DATAWORKS_VALUES.get(name)
    return None


def _utc_wall_time(value: dt.datetime) -> dt.datetime:
    return value.astimezone(dt.UTC).replace(tzinfo=None)


def _epoch_ms(value: dt.datetime) -> dt.datetime:
    # epoch milliseconds on the wire; a zone-less value is read as UTC
    aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
    return aware.replace(microsecond=aware.microsecond // 1000 * 1000)


_DATAWORKS_VALUES: Final[dict[str, Callable[[Any], Any]]] = {
    "float32": lambda v: Decimal(repr(v)),
    "float64": lambda v: Decimal(repr(v)),
    "date": lambda v: dt.datetime(v.year, v.month, v.day, tzinfo=dt.UTC),
    "timestamp": _epoch_ms,
    "timestamptz": _epoch_ms,
    "time": format_time,
}


def untyped_text(value: Any) -> str:
    """The text an untyped format (OMS ``Default``, SharePlex) carries, as the pipeline stores it.

    OceanBase's text rules: BOOLEAN 1/0, binary as base64, DATETIME
    ``YYYY-MM-DD HH:mm:ss[.f]`` (fraction without trailing zeros), an instant as
    epoch seconds, TIME ``HH:mm:ss[.f]``; numbers as their exact digits.

    >>> untyped_text(True), untyped_text(dt.datetime(2024, 5, 1, 8, 0, 0, 120000))
    ('1', '2024-05-01 08:00:00.12')
    >>> untyped_text(dt.datetime(1971, 1, 1, 0, 0, 0, 5, tzinfo=dt.UTC))
    '31536000.000005'
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, Decimal)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            seconds, micros = divmod(epoch_micros(value), 1_000_000)
            return f"{seconds}{_fraction(micros)}"
        return value.strftime("%Y-%m-%d %H:%M:%S") + _fraction(value.microsecond)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.strftime("%H:%M:%S") + _fraction(value.microsecond)
    raise TypeError(f"no untyped text for {type(value).__name__}")


def _fraction(micros: int) -> str:
    return f".{micros:06d}".rstrip("0") if micros else ""
