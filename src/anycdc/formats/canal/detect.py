"""Detection of Canal-shaped messages, shared by the family: the shape every member
reads, DTS' certain marks and DRS' evidence (:func:`drs_evidence`), which DRS reads to
claim a message and its siblings to step aside."""

from __future__ import annotations

import re
from typing import Any, Final

from anycdc.formats.base import SNIFF_PASS, Cache
from anycdc.formats.canal.wire import (
    F_COLUMN_TYPE,
    F_DATA,
    F_DATA_SOURCE_NAME,
    F_DATABASE,
    F_ES,
    F_ID,
    F_IS_DDL,
    F_IS_HEARTBEAT,
    F_MYSQL_TYPE,
    F_OLD,
    F_OP_TYPE,
    F_PK_NAMES,
    F_SERVER_ID,
    F_SQL_TYPE,
    F_TABLE,
    F_TS,
    F_TYPE,
    FULL_LOAD_FIELDS,
    OP_DELETE,
    OP_INIT_DDL,
    OPS,
    ROW_TYPES,
)
from anycdc.values import EPOCH_TEXT

# --------------------------------------------------------------------------- detection
# sets: detection reads them for every message of an auto-detected stream (C, not a loop)
_SHAPE_FIELDS: Final = frozenset((F_DATA, F_OLD, F_IS_DDL, F_MYSQL_TYPE, F_SQL_TYPE, F_PK_NAMES))
DATAARTS_FIELDS: Final = (F_SERVER_ID, F_DATA_SOURCE_NAME, F_IS_HEARTBEAT)
_FIRST_WORD: Final = re.compile(r"[\s(\[]")
_DML_DTS_FIELDS: Final = frozenset((F_DATABASE, F_TABLE, F_ES, F_ID, F_TS))
_CANAL_DDL_FIELDS: Final = frozenset((F_MYSQL_TYPE, F_SQL_TYPE, F_PK_NAMES, F_DATA, F_OLD))


def type_word(name: str) -> str:
    """The first word of a vendor type name, lower case (``varbinary(16)`` -> ``varbinary``)."""
    return _FIRST_WORD.split(name.strip().lower(), maxsplit=1)[0]


def is_canal_shaped(msg: Any) -> bool:
    """A Canal-like flat message: a known ``type``, row arrays (or none) and Canal fields."""
    if not isinstance(msg, dict):
        return False
    kind = msg.get(F_TYPE)
    if not isinstance(kind, str) or kind not in OPS:
        return False
    for field in (F_DATA, F_OLD):
        rows = msg.get(field)
        if rows is not None and not isinstance(rows, list):
            return False  # Maxwell / SharePlex put one object here
    return not _SHAPE_FIELDS.isdisjoint(msg)


def is_dts_certain(msg: dict[str, Any]) -> bool:
    """Only Alibaba DTS writes these (seed 001 examples), open-source Canal never does:

    * a DML message with DTS' header fields (``database``/``table``/``es``/``id``/
      ``ts``) but without the ``data`` or the ``old`` key (Canal always writes
      both, null when empty);
    * a DDL message without any of ``mysqlType``/``sqlType``/``pkNames``/``data``/
      ``old`` (Canal writes them as null).
    """
    if not msg.keys() >= _DML_DTS_FIELDS:
        return False
    if msg.get(F_IS_DDL) is True:
        return _CANAL_DDL_FIELDS.isdisjoint(msg)
    return msg.get(F_TYPE) in ROW_TYPES and (F_DATA not in msg or F_OLD not in msg)


# --------------------------------------------------------------------------- DRS' evidence
# DRS' rule, read by every Canal-shaped sniffer: DRS' to claim a message, canal-json's and
# dts-canal-json's to step aside
_DRS_FIELDS: Final = frozenset({F_COLUMN_TYPE, F_OP_TYPE, *FULL_LOAD_FIELDS})
_BINARY_NAMES: Final = ("binary", "varbinary", "blob", "tinyblob", "mediumblob", "longblob")
_MAX_CACHED_MAPS: Final = 4096
_BYTE_LIST_TEXT: Final = re.compile(r"\[(?:-?\d{1,3}(?:, ?-?\d{1,3})*)?\]")
_DATETIME_TEXT: Final = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}")

# how much of Huawei DRS a message shows (:func:`drs_evidence`)
NOT_FLAT: Final = 0  #: not a flat message DRS could write (no type map field ...)
FLAT: Final = 1  #: a flat message with nothing of DRS
DRS_LIKE: Final = 2  #: a sign of DRS that proves nothing: Canal-shaped vendors step aside
DRS_ONLY: Final = 3  #: what only DRS writes: DRS claims the message


def drs_evidence(message: Any) -> tuple[int, int]:
    """:func:`read_drs_evidence`, read once per detection pass (four sniffers ask for it:
    :class:`~anycdc.formats.base.SniffPass`)."""
    return SNIFF_PASS.shared(message, read_drs_evidence)


def read_drs_evidence(message: Any) -> tuple[int, int]:
    """How much of Huawei DRS' JSON a flat message shows, and which DRS variant it proves:
    the one rule every Canal-shaped sniffer reads (DRS' to claim, the others to step aside).

    Returns ``(strength, variant)``. ``strength`` is :data:`DRS_ONLY` when every row
    value is text (DRS writes nothing else; Canal by OMS/DataArts does) and the message
    has a sign of DRS: a GaussDB-flavour field (``columnType``/``opType``), a full-load
    field (``jobId`` ...), ``INIT_DDL``, DRS' field order (``mysqlType``/``columnType``
    first; the others start with ``data`` or ``database``) or a binary column written as
    a byte list (``"[106, 103]"``). It is :data:`DRS_LIKE` for such a sign beside a value
    that is not text or outside DRS' shape, and for a MySQL ``TIMESTAMP`` in epoch
    seconds beside an ``id`` (DRS JSON's rendering; OMS, the other epoch writer, has no
    ``id``) without other sign; :data:`FLAT` for a flat message with none of these and
    :data:`NOT_FLAT` for anything else. ``variant`` is +1 when the message proves JSON-C
    (a DELETE row in ``data``, a MySQL TIMESTAMP as datetime text), -1 when it proves
    JSON (a DELETE row in ``old``, an epoch-seconds TIMESTAMP, the GaussDB flavour that
    JSON-C does not support), 0 when one message cannot tell.

    >>> read_drs_evidence({"mysqlType": {"b": "varbinary"}, "type": "INSERT", "data": [{"b": "[1]"}]})
    (3, 0)
    >>> read_drs_evidence({"data": [{"b": "[1]"}], "type": "DELETE", "mysqlType": {"b": "blob"}})
    (3, 1)
    >>> read_drs_evidence({"data": [{"b": "x"}], "type": "INSERT", "mysqlType": {"b": "blob"}})
    (1, 0)
    """
    if not isinstance(message, dict) or not isinstance(message.get(F_TYPE), str):
        return NOT_FLAT, 0
    signed = (
        not _DRS_FIELDS.isdisjoint(message)
        or next(iter(message)) in (F_MYSQL_TYPE, F_COLUMN_TYPE)
        or message.get(F_TYPE) == OP_INIT_DDL
    )
    types = message.get(F_MYSQL_TYPE, message.get(F_COLUMN_TYPE, False))
    data, old = message.get(F_DATA), message.get(F_OLD)
    if (
        types is False
        or (types is not None and not isinstance(types, dict))
        or not isinstance(data, (list, type(None)))
        or not isinstance(old, (list, type(None)))
    ):
        return (DRS_LIKE if signed else NOT_FLAT), 0
    if not signed and (not types or _plain_types(types)):
        return FLAT, 0  # the common flat message, told by its type names alone
    binary, stamps = _evidence_columns(types, types is message.get(F_MYSQL_TYPE))
    if not (signed or binary or stamps):
        # nothing below can sign it or show an epoch beside an id: the common flat
        # message (Canal's, DTS'), told without a look at its rows
        return FLAT, 0
    rows = [r for r in (data or [])[:4] + (old or [])[:4] if isinstance(r, dict)]
    proofs: set[int] = set()
    if F_COLUMN_TYPE in message or F_OP_TYPE in message:
        proofs.add(-1)  # JSON-C exists for MySQL/TaurusDB sources only
    if message.get(F_TYPE) == OP_DELETE:
        if data and not old:
            proofs.add(1)
        elif old and not data:
            proofs.add(-1)
    epoch_with_id = False
    heads = [r[0] for r in (data, old) if r]  # the first rows: an epoch there is DRS-like
    for name in binary:
        if any(_is_byte_list(r.get(name)) for r in rows):
            signed = True
    for name, bare in stamps:
        for row in rows:
            value = row.get(name)
            if isinstance(value, str):
                if EPOCH_TEXT.fullmatch(value):
                    proofs.add(-1)
                    if bare and F_ID in message and any(row is h for h in heads):
                        epoch_with_id = True
                elif _DATETIME_TEXT.match(value):
                    proofs.add(1)
    if signed and _all_text(rows):  # read last: only a signed message needs it
        return DRS_ONLY, next(iter(proofs)) if len(proofs) == 1 else 0
    return (DRS_LIKE if signed or epoch_with_id else FLAT), 0


_EvidenceColumns = tuple[tuple[str, ...], tuple[tuple[str, bool], ...]]
_EVIDENCE_COLUMNS: Final[Cache[tuple[bool, tuple[tuple[str, Any], ...]], _EvidenceColumns]] = Cache(
    _MAX_CACHED_MAPS
)


def _evidence_columns(types: dict[str, Any] | None, mysql: bool) -> _EvidenceColumns:
    """The columns of a type map whose values can show DRS: the binary ones (a byte list)
    and, in a ``mysqlType`` map, the TIMESTAMP ones, each with whether its type is bare
    (not ``timestamp with ...``). Kept by the map's content: a topic repeats a few maps,
    and reading the type names is most of a detection's cost (auto-detecting every
    message of a stream)."""
    if not types:
        return (), ()
    try:
        key = (mysql, tuple(types.items()))
        found = _EVIDENCE_COLUMNS.get(key)
    except TypeError:  # a type that is a list or an object: not kept (and not read)
        return _read_evidence_columns(types, mysql)
    if found is None:
        found = _EVIDENCE_COLUMNS.put(key, _read_evidence_columns(types, mysql))
    return found


def _read_evidence_columns(types: dict[str, Any], mysql: bool) -> _EvidenceColumns:
    binary: list[str] = []
    stamps: list[tuple[str, bool]] = []
    for name, vendor in types.items():
        if not isinstance(vendor, str):
            continue
        word = type_word(vendor)
        if word in _BINARY_NAMES:
            binary.append(name)
        elif word == "timestamp":
            if mysql:  # not "timestamp with ..."
                stamps.append((name, vendor.split("(", 1)[0].strip().lower() == word))
        elif len(_PLAIN_TYPES) < _MAX_CACHED_MAPS:
            _PLAIN_TYPES.add(vendor)
    return tuple(binary), tuple(stamps)


_PLAIN_TYPES: Final[set[str]] = set()
"""Type names read by :func:`_read_evidence_columns` that name neither a binary type nor a
TIMESTAMP, in either map: a map of these alone has no column that can show DRS."""


def _plain_types(types: dict[str, Any]) -> bool:
    """Every type name of ``types`` is one of :data:`_PLAIN_TYPES` (a set test in C: most
    messages' whole evidence, where :func:`_evidence_columns` would key its cache by the
    map's content).

    >>> _read_evidence_columns({"id": "bigint", "b": "blob"}, True)
    (('b',), ())
    >>> _plain_types({"id": "bigint"}), _plain_types({"id": "bigint", "b": "blob"})
    (True, False)
    """
    try:
        return _PLAIN_TYPES.issuperset(types.values())
    except TypeError:  # a type that is a list or an object (unhashable): read in full
        return False


def _all_text(rows: list[dict[str, Any]]) -> bool:
    """Every value of ``rows`` is text or null (DRS writes nothing else)."""
    for row in rows:
        for value in row.values():
            if value is not None and not isinstance(value, str):
                return False
    return True


def _is_byte_list(value: Any) -> bool:
    return isinstance(value, str) and _BYTE_LIST_TEXT.fullmatch(value) is not None
