"""DataWorks' wire names (shared with dataworks2-json), its op rules and envelope layout,
and the encoder's options."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from anycdc.event import Column, Op
from anycdc.formats.events import RULE_UPDATE_AFTER, RULE_UPDATE_BEFORE, OpRule
from anycdc.formats.options import choice, flag
from anycdc.values import (
    UNKNOWN,
)

Parser = Callable[[Any], Any]

# --------------------------------------------------------------------------- wire names
FIELD_SCHEMA: Final = "schema"
FIELD_PAYLOAD: Final = "payload"
FIELD_VERSION: Final = "version"
FIELD_DATA_COLUMN: Final = "dataColumn"
FIELD_PRIMARY_KEY: Final = "primaryKey"
FIELD_SOURCE: Final = "source"
FIELD_DB_TYPE: Final = "dbType"
FIELD_DB_VERSION: Final = "dbVersion"
FIELD_DB_NAME: Final = "dbName"
FIELD_SCHEMA_NAME: Final = "schemaName"
FIELD_TABLE_NAME: Final = "tableName"
FIELD_NAME: Final = "name"
FIELD_TYPE: Final = "type"
FIELD_BEFORE: Final = "before"
FIELD_AFTER: Final = "after"
FIELD_SEQUENCE_ID: Final = "sequenceId"
FIELD_SCN: Final = "scn"
FIELD_OP: Final = "op"
FIELD_TIMESTAMP: Final = "timestamp"
FIELD_EVENT_TIME: Final = "eventTime"
FIELD_SYSTEM_TIME: Final = "systemTime"
FIELD_CHECKPOINT_TIME: Final = "checkpointTime"
FIELD_DDL: Final = "ddl"
FIELD_DDL_TEXT: Final = "text"
FIELD_DDL_META: Final = "ddlMeta"
FIELD_EXTEND: Final = "extend"  # DataWorks 2.0's root object (DataWorks JSON keeps none)

VERSIONS: Final = ("0.0.1", "1.0.0")
SPLIT_UPDATE: Final = flag(
    "split_update",
    "encoder: write an update as two messages, UPDATE_BEFOR (before image) then "
    "UPDATE_AFTER (after image), as DataWorks does unless 'one Kafka record per "
    "update' is selected (true|false)",
)
VERSION: Final = choice(
    "version", "encoder: the 'version' field written (0.0.1 or 1.0.0)", VERSIONS, VERSIONS[0]
)
ROW_ID_COLUMN: Final = "#alibaba_rds_row_id#"  # LONG row identity of tables without a primary key
NO_VALUE: Final = -1  # sequenceId / eventTime of rows that have none (full-load rows)

OP_INSERT: Final = "INSERT"
OP_UPDATE_BEFORE: Final = "UPDATE_BEFOR"  # sic: the vendor's spelling
OP_UPDATE_AFTER: Final = "UPDATE_AFTER"
OP_DELETE: Final = "DELETE"
OP_TRANSACTION_BEGIN: Final = "TRANSACTION_BEGIN"
OP_TRANSACTION_END: Final = "TRANSACTION_END"
OP_CREATE: Final = "CREATE"
OP_ALTER: Final = "ALTER"
OP_ERASE: Final = "ERASE"
OP_QUERY: Final = "QUERY"
OP_TRUNCATE: Final = "TRUNCATE"
OP_RENAME: Final = "RENAME"
OP_CINDEX: Final = "CINDEX"
OP_DINDEX: Final = "DINDEX"
OP_GTID: Final = "GTID"
OP_XACOMMIT: Final = "XACOMMIT"
OP_XAROLLBACK: Final = "XAROLLBACK"
OP_MHEARTBEAT: Final = "MHEARTBEAT"
DDL_OPS: Final = (OP_CREATE, OP_ALTER, OP_ERASE, OP_QUERY, OP_RENAME, OP_CINDEX, OP_DINDEX)

TYPE_BOOLEAN: Final = "BOOLEAN"
TYPE_DOUBLE: Final = "DOUBLE"
TYPE_DATE: Final = "DATE"
TYPE_BYTES: Final = "BYTES"
TYPE_LONG: Final = "LONG"
TYPE_STRING: Final = "STRING"

EXTRA_VENDOR_OP: Final = "vendor_op"
EXTRA_SCN: Final = "scn"
EXTRA_DB_TYPE: Final = "db_type"
EXTRA_EXTEND: Final = "extend"
SCN_ABSENT: Final = frozenset({"", "null"})  # OMS writes the string "null" when there is no scn

SPLIT_BEFORE: Final = "before"
SPLIT_AFTER: Final = "after"


# --------------------------------------------------------------------------- op rules
# How each op code uses the images (:class:`~anycdc.formats.events.OpRule`'s ``images``:
# an insert's after image, a delete's before image, by default): which one it requires
# and what the event becomes (:meth:`DataWorksFamily.pair_images`).
def _ddl_rules(codes: tuple[str, ...]) -> dict[str, OpRule]:
    return {code: OpRule(Op.DDL, keep_code=True) for code in codes}


SHARED_OPS: Final[Mapping[str, OpRule]] = {
    OP_INSERT: OpRule(Op.INSERT),
    OP_DELETE: OpRule(Op.DELETE),
    OP_TRANSACTION_BEGIN: OpRule(Op.BEGIN),
    OP_TRANSACTION_END: OpRule(Op.COMMIT),
    OP_XACOMMIT: OpRule(Op.COMMIT, keep_code=True),
    OP_TRUNCATE: OpRule(Op.TRUNCATE),
    OP_GTID: OpRule(Op.HEARTBEAT, keep_code=True),
    OP_XAROLLBACK: OpRule(Op.HEARTBEAT, keep_code=True),
    **_ddl_rules(DDL_OPS),
}
DATAWORKS_OPS: Final[Mapping[str, OpRule]] = {
    **SHARED_OPS,
    OP_UPDATE_BEFORE: OpRule(Op.UPDATE, images=RULE_UPDATE_BEFORE),
    OP_UPDATE_AFTER: OpRule(Op.UPDATE, images=RULE_UPDATE_AFTER),
    OP_MHEARTBEAT: OpRule(Op.HEARTBEAT),
}


@dataclass(frozen=True, slots=True)
class Layout:
    """Field names that differ between DataWorks JSON and DataWorks 2.0 JSON."""

    columns: str
    primary_key: str
    schema_name: str
    table_name: str
    image: str


DATAWORKS_LAYOUT: Final = Layout(
    FIELD_DATA_COLUMN, FIELD_PRIMARY_KEY, FIELD_SCHEMA_NAME, FIELD_TABLE_NAME, FIELD_DATA_COLUMN
)
UNKNOWN_COLUMN: Final = Column(UNKNOWN)
Declared = tuple[dict[str, Column], dict[str, Parser | None]]
MAX_CACHED_TYPES: Final = 1024
MAX_EPOCH_DIGITS: Final = 40
