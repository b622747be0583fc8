"""Detection of Canal-shaped messages, shared by the family (DRS' own evidence lives
in :mod:`anycdc.formats.drs`)."""

from __future__ import annotations

import re
from typing import Any, Final

from anycdc.formats.canal.wire import (
    F_DATA,
    F_DATA_SOURCE_NAME,
    F_DATABASE,
    F_ES,
    F_ID,
    F_IS_DDL,
    F_IS_HEARTBEAT,
    F_MYSQL_TYPE,
    F_OLD,
    F_PK_NAMES,
    F_SERVER_ID,
    F_SQL_TYPE,
    F_TABLE,
    F_TS,
    F_TYPE,
    OPS,
    ROW_TYPES,
)

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
