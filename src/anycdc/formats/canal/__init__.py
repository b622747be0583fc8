"""Canal flat-message JSON: open-source Canal and the OceanBase OMS "Canal" serialization.

One message is a *flat message*: table metadata, an operation ``type`` and two
parallel arrays, ``data`` (rows after the change) and ``old`` (for ``UPDATE``:
the previous values of the CHANGED columns only; element ``i`` of ``old``
belongs to element ``i`` of ``data``). A message with several rows yields
several events. :class:`CanalFamily` holds the flow shared with Alibaba
DTS' variant (:mod:`anycdc.formats.dts_canal`) and Huawei DRS' JSON formats
(:mod:`anycdc.formats.drs`), which give hooks.

Rules this decoder follows (seeds 000-003, FORMATS.md section 4):

* ops: ``INSERT``/``UPDATE``/``DELETE``; ``INIT`` (full-load row, as in Flink's
  ``canal-data-with-init`` and DTS/DRS full phases) is a ``snapshot``;
  ``isDdl=true`` or ``CREATE``/``ALTER``/``ERASE``/``QUERY``/``RENAME``/
  ``CINDEX``/``DINDEX``/``DDL``/``INIT_DDL`` is ``ddl`` and ``TRUNCATE`` is
  ``truncate``, both with ``sql`` as ``ddl``; ``GTID`` = begin, ``XACOMMIT``/
  ``XAROLLBACK`` = commit; ``MHEARTBEAT``/``HEARTBEAT`` and Huawei DataArts'
  ``"isHeartbeat": true`` are heartbeats.
* update images: ``after = data[i]``, ``before = {**data[i], **old[i]}`` (an
  explicit null in ``old`` wins). A missing ``old`` means no column changed
  (Canal drops empty ``old`` maps); when ``old`` and ``data`` differ in length
  the pairing is unknown and ``before`` is left ``None`` (never guessed).
* rows only in ``old`` with ``data`` null (DTS tasks created before 2022-03-20)
  are taken from ``old``: that placement is certain from the message alone.
* types: ``mysqlType`` names (with or without precision, ``ENUM('a','b')``,
  ``unsigned``) through :func:`anycdc.typemap.sql_type`; ``sqlType``
  (``java.sql.Types``) when the name says nothing (``POINT`` -> binary) or is
  wider (MySQL ``REAL`` sent with code 8 is a double). ``bit(1)`` is a boolean
  and ``bit(n)`` an unsigned integer, as Canal sends the bit value as a number;
  ``SERIAL`` is MySQL's ``BIGINT UNSIGNED``. Columns ``data`` has but the type
  maps lack are typed ``unknown``; listed columns a row lacks make it ``partial``.
* values: open-source Canal quotes every value; OMS writes numbers unquoted
  (big unsigned BIGINTs and decimals with hundreds of digits stay exact).
  A ``bigint`` value above the int64 maximum proves the column unsigned (OMS
  and DTS drop ``unsigned`` from ``mysqlType``): the column is ``uint64``.
  Timestamps written as epoch seconds (OMS ``TIMESTAMP``) or with a zone are
  instants: such a column is ``timestamptz`` in that message.
* binary (option ``binary``): Canal writes bytes as ISO-8859-1 text, OMS as
  base64 (and BIT as base64 bytes). ``auto`` picks base64 when the message has
  no ``id`` field (OMS writes none), ISO-8859-1 otherwise.
* ``es`` is ``ts_ms``; ``position`` is ``(id,)`` (Canal's batch id: rows of one
  message share it); without an ``id`` field (OMS) it is ``(es, ts)``: commit
  time, then write time. TiCDC (``enable-tidb-extension=true``) writes ``id`` 0 and
  ``_tidb.commitTs``, the transaction's TSO: the position is ``(commitTs,)``; its
  ``TIDB_WATERMARK`` messages are heartbeats at ``(watermarkTs,)``. A TiCDC message
  holding only the handle key (``_tidb.onlyHandleKey``) or a claim-check pointer
  (``_tidb.claimCheckLocation``) is an error: the row is not in it. ``gtid`` (a GTID set, not a transaction id) goes to
  ``extra``; ``ts`` (write time) is not kept.
* detection: see :func:`is_canal_shaped`, :func:`anycdc.formats.drs.drs_evidence`
  (Huawei DRS' fields and renderings, read by every Canal-shaped sniffer) and :func:`is_dts_certain`
  (the keys DTS leaves out).

>>> fmt = CanalJson()
>>> [e] = fmt.decode(b'{"data":[{"id":"1","price":"9.90"}],"database":"shop","es":1589373515000,'
...     b'"id":3,"isDdl":false,"mysqlType":{"id":"int(11)","price":"decimal(10,2)"},"old":null,'
...     b'"pkNames":["id"],"sql":"","sqlType":{"id":4,"price":3},"table":"orders",'
...     b'"ts":1589373515477,"type":"INSERT"}')
>>> e.op.value, e.table, e.key, dict(e.after), e.position
('insert', 'orders', ('id',), {'id': 1, 'price': Decimal('9.90')}, Position(parts=(3,)))
>>> fmt.decode(fmt.encode(e)[0]) == [e]
True"""

from __future__ import annotations

from anycdc.formats.canal.detect import (
    is_canal_shaped,
    is_dts_certain,
    type_word,
)
from anycdc.formats.canal.family import (
    CanalFamily,
)
from anycdc.formats.canal.fast import (
    FlatPlan,
    cache_items,
)
from anycdc.formats.canal.format import (
    CanalJson,
)
from anycdc.formats.canal.rows import (
    Envelope,
    Head,
    Pairing,
    RowRender,
)
from anycdc.formats.canal.types import (
    DEFAULT_VENDOR,
    FlatSchema,
    column_type,
    render_value,
)

# the names the module had before it became a package, importable from here still
from anycdc.formats.canal.wire import (
    BINARY_AUTO,
    BINARY_BASE64,
    BINARY_HEX,
    BINARY_LATIN1,
    BINARY_MODES,
    BINARY_OPTION,
    EXTRA_ROLLBACK,
    F_DATA,
    F_DATA_SOURCE_NAME,
    F_DATABASE,
    F_ES,
    F_GTID,
    F_ID,
    F_IS_DDL,
    F_IS_HEARTBEAT,
    F_MYSQL_TYPE,
    F_OLD,
    F_PK_NAMES,
    F_SERVER_ID,
    F_SQL,
    F_SQL_TYPE,
    F_TABLE,
    F_TIDB,
    F_TS,
    F_TYPE,
    OP_ALTER,
    OP_CINDEX,
    OP_CREATE,
    OP_DDL,
    OP_DELETE,
    OP_DINDEX,
    OP_ERASE,
    OP_GTID,
    OP_HEARTBEAT,
    OP_INIT,
    OP_INIT_DDL,
    OP_INSERT,
    OP_MHEARTBEAT,
    OP_QUERY,
    OP_RENAME,
    OP_TIDB_WATERMARK,
    OP_TRUNCATE,
    OP_UPDATE,
    OP_XACOMMIT,
    OP_XAROLLBACK,
    OPS,
    OPT_BINARY,
    ROW_KINDS,
    ROW_TYPES,
    TIDB_CLAIM_CHECK,
    TIDB_COMMIT_TS,
    TIDB_ONLY_HANDLE_KEY,
    TIDB_WATERMARK_TS,
)

__all__ = [
    "BINARY_AUTO",
    "BINARY_BASE64",
    "BINARY_HEX",
    "BINARY_LATIN1",
    "BINARY_MODES",
    "BINARY_OPTION",
    "DEFAULT_VENDOR",
    "EXTRA_ROLLBACK",
    "F_DATA",
    "F_DATABASE",
    "F_DATA_SOURCE_NAME",
    "F_ES",
    "F_GTID",
    "F_ID",
    "F_IS_DDL",
    "F_IS_HEARTBEAT",
    "F_MYSQL_TYPE",
    "F_OLD",
    "F_PK_NAMES",
    "F_SERVER_ID",
    "F_SQL",
    "F_SQL_TYPE",
    "F_TABLE",
    "F_TIDB",
    "F_TS",
    "F_TYPE",
    "OPS",
    "OPT_BINARY",
    "OP_ALTER",
    "OP_CINDEX",
    "OP_CREATE",
    "OP_DDL",
    "OP_DELETE",
    "OP_DINDEX",
    "OP_ERASE",
    "OP_GTID",
    "OP_HEARTBEAT",
    "OP_INIT",
    "OP_INIT_DDL",
    "OP_INSERT",
    "OP_MHEARTBEAT",
    "OP_QUERY",
    "OP_RENAME",
    "OP_TIDB_WATERMARK",
    "OP_TRUNCATE",
    "OP_UPDATE",
    "OP_XACOMMIT",
    "OP_XAROLLBACK",
    "ROW_KINDS",
    "ROW_TYPES",
    "TIDB_CLAIM_CHECK",
    "TIDB_COMMIT_TS",
    "TIDB_ONLY_HANDLE_KEY",
    "TIDB_WATERMARK_TS",
    "CanalFamily",
    "CanalJson",
    "Envelope",
    "FlatPlan",
    "FlatSchema",
    "Head",
    "Pairing",
    "RowRender",
    "cache_items",
    "column_type",
    "is_canal_shaped",
    "is_dts_certain",
    "render_value",
    "type_word",
]
