"""Canal's wire strings: field names, operation types, the ``binary`` option."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from anycdc.event import Op
from anycdc.formats.events import OpRule, op_rules
from anycdc.formats.options import choice

# --------------------------------------------------------------------------- wire strings
F_DATA: Final = "data"
F_OLD: Final = "old"
F_DATABASE: Final = "database"
F_TABLE: Final = "table"
F_TYPE: Final = "type"
F_IS_DDL: Final = "isDdl"
F_SQL: Final = "sql"
F_ES: Final = "es"
F_TS: Final = "ts"
F_ID: Final = "id"
F_GTID: Final = "gtid"
F_PK_NAMES: Final = "pkNames"
F_MYSQL_TYPE: Final = "mysqlType"
F_SQL_TYPE: Final = "sqlType"
# Huawei DataArts Studio writes Canal-JSON with these extra fields
F_IS_HEARTBEAT: Final = "isHeartbeat"
F_SERVER_ID: Final = "serverId"
F_DATA_SOURCE_NAME: Final = "dataSourceName"
# Huawei DRS writes these beside Canal's: the GaussDB flavour's source and schema
F_DB_TYPE: Final = "dbType"
F_SCHEMA: Final = "schema"
# DRS' own fields: the GaussDB flavour's type map and op, and the full-load fields
F_COLUMN_TYPE: Final = "columnType"
F_OP_TYPE: Final = "opType"
F_JOB_ID: Final = "jobId"
F_SHARD_ID: Final = "shardId"
F_IDENTIFIER: Final = "identifier"
F_EVENT_ID: Final = "eventId"
FULL_LOAD_FIELDS: Final = (F_JOB_ID, F_SHARD_ID, F_IDENTIFIER, F_EVENT_ID)
# TiCDC writes Canal-JSON with ``enable-tidb-extension=true``: ``_tidb`` holds the
# transaction's TSO (``commitTs``; ``id`` is always 0), ``TIDB_WATERMARK`` messages a
# ``watermarkTs`` (every change before it was sent); a message too large for Kafka is
# sent with its handle key columns only (``onlyHandleKey``) or as a claim-check pointer
F_TIDB: Final = "_tidb"
TIDB_COMMIT_TS: Final = "commitTs"
TIDB_WATERMARK_TS: Final = "watermarkTs"
TIDB_ONLY_HANDLE_KEY: Final = "onlyHandleKey"
TIDB_CLAIM_CHECK: Final = "claimCheckLocation"

OP_INSERT: Final = "INSERT"
OP_UPDATE: Final = "UPDATE"
OP_DELETE: Final = "DELETE"
OP_INIT: Final = "INIT"
OP_CREATE: Final = "CREATE"
OP_ALTER: Final = "ALTER"
OP_ERASE: Final = "ERASE"
OP_QUERY: Final = "QUERY"
OP_RENAME: Final = "RENAME"
OP_CINDEX: Final = "CINDEX"
OP_DINDEX: Final = "DINDEX"
OP_TRUNCATE: Final = "TRUNCATE"
OP_DDL: Final = "DDL"
OP_INIT_DDL: Final = "INIT_DDL"
OP_GTID: Final = "GTID"
OP_XACOMMIT: Final = "XACOMMIT"
OP_XAROLLBACK: Final = "XAROLLBACK"
OP_MHEARTBEAT: Final = "MHEARTBEAT"
OP_HEARTBEAT: Final = "HEARTBEAT"
OP_TIDB_WATERMARK: Final = "TIDB_WATERMARK"

OPS: Final[Mapping[str, OpRule]] = op_rules({
    OP_INSERT: Op.INSERT, OP_UPDATE: Op.UPDATE, OP_DELETE: Op.DELETE, OP_INIT: Op.SNAPSHOT,
    OP_CREATE: Op.DDL, OP_ALTER: Op.DDL, OP_ERASE: Op.DDL, OP_QUERY: Op.DDL, OP_RENAME: Op.DDL,
    OP_CINDEX: Op.DDL, OP_DINDEX: Op.DDL, OP_DDL: Op.DDL, OP_INIT_DDL: Op.DDL,
    OP_TRUNCATE: Op.TRUNCATE, OP_GTID: Op.BEGIN, OP_XACOMMIT: Op.COMMIT, OP_XAROLLBACK: Op.COMMIT,
    OP_MHEARTBEAT: Op.HEARTBEAT, OP_HEARTBEAT: Op.HEARTBEAT, OP_TIDB_WATERMARK: Op.HEARTBEAT,
})  # fmt: skip
# the row changes' part of the op table (DRS reads nothing else as a row change)
ROW_KINDS: Final[Mapping[str, OpRule]] = {kind: rule for kind, rule in OPS.items() if rule.rows}
ROW_TYPES: Final = frozenset(ROW_KINDS)
# enum members bound once: ``Op.X`` is a descriptor lookup on every use
UPDATE_OP: Final = Op.UPDATE
DELETE_OP: Final = Op.DELETE
DDL_OP: Final = Op.DDL
TRUNCATE_OP: Final = Op.TRUNCATE
HEARTBEAT_OP: Final = Op.HEARTBEAT

EXTRA_ROLLBACK: Final = "rollback"  # ``extra`` key of an XAROLLBACK commit event

OPT_BINARY: Final = "binary"
BINARY_AUTO: Final = "auto"
BINARY_LATIN1: Final = "latin1"
BINARY_BASE64: Final = "base64"
BINARY_HEX: Final = "hex"
BINARY_MODES: Final = (BINARY_AUTO, BINARY_LATIN1, BINARY_BASE64, BINARY_HEX)
BINARY_OPTION: Final = choice(
    OPT_BINARY,
    "how binary values are written: latin1 (open-source Canal: bytes as ISO-8859-1 text, "
    "BIT as a number), base64 (OceanBase OMS: bytes and BIT as base64), hex, or auto "
    "(base64 when the message has no 'id' field, as OMS writes none; latin1 otherwise)",
    BINARY_MODES,
    BINARY_AUTO,
)

_VALUE_ERRORS: Final = (ValueError, TypeError, OverflowError, ArithmeticError, UnicodeError)
INT64_MAX: Final = 2**63 - 1
UINT64_MAX: Final = 2**64 - 1
ARGS: Final = re.compile(r"\(.*\)")
PRECISION: Final = re.compile(r"\(\s*(\d+)")
INT_RANK: Final = {"int8": 0, "int16": 1, "int32": 2, "int64": 3, "uint64": 4}


ENCODE_OPS: Final[Mapping[Op, str]] = {
    Op.INSERT: OP_INSERT, Op.UPDATE: OP_UPDATE, Op.DELETE: OP_DELETE, Op.SNAPSHOT: OP_INIT,
    Op.TRUNCATE: OP_TRUNCATE, Op.BEGIN: OP_GTID, Op.COMMIT: OP_XACOMMIT,
    Op.HEARTBEAT: OP_MHEARTBEAT,
}  # fmt: skip
