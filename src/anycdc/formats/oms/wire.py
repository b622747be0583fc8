"""OceanBase OMS JSON's wire strings: fields, metadata keys, record types, database types."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from anycdc.event import Op
from anycdc.formats.events import OpRule

# --------------------------------------------------------------------------- wire strings
F_META: Final = "allMetaData"
F_PREV: Final = "prevStruct"
F_RECORD_TYPE: Final = "recordType"
F_POST: Final = "postStruct"

M_CHECKPOINT: Final = "checkpoint"
M_PRIMARY_KEY: Final = "record_primary_key"
M_SOURCE_IDENTITY: Final = "source_identity"
M_PRIMARY_VALUE: Final = "record_primary_value"
M_DB_TYPE: Final = "dbType"
M_TABLE: Final = "table_name"
M_DB: Final = "db"
M_TIMESTAMP: Final = "timestamp"
M_SEQUENCE: Final = "storeDataSequence"
M_UNIQUE_ID: Final = "uniqueId"
M_TRANS_ID: Final = "transId"
M_DDL_TYPE: Final = "ddlType"

LIGHT_TYPE: Final = "__light_type"
SCHEMA_TYPE: Final = "schemaType"
DDL_KEY: Final = "ddl"

RT_INSERT: Final = "INSERT"
RT_UPDATE: Final = "UPDATE"
RT_DELETE: Final = "DELETE"
RT_ROW: Final = "ROW"
RT_HEARTBEAT: Final = "HEARTBEAT"
RT_DDL: Final = "DDL"
OPS: Final[Mapping[str, OpRule]] = {
    RT_INSERT: OpRule(Op.INSERT),
    RT_UPDATE: OpRule(Op.UPDATE),
    RT_DELETE: OpRule(Op.DELETE),
    RT_ROW: OpRule(Op.SNAPSHOT),
    RT_HEARTBEAT: OpRule(Op.HEARTBEAT),
    RT_DDL: OpRule(Op.DDL),
}
RECORD_TYPES: Final[Mapping[Op, str]] = {rule.op: code for code, rule in OPS.items()}
OP_NOUN: Final = "op"  # what the error of an unknown recordType calls it

OCEANBASE_DB_TYPES: Final = frozenset({"OCEANBASE", "OB_IN_ORACLE_MODE", "OB_MYSQL", "OB_ORACLE"})
ORACLE_DB_TYPES: Final = frozenset({"ORACLE", "OB_IN_ORACLE_MODE", "OB_ORACLE"})
DEFAULT_DB_TYPE: Final = "OB_MYSQL"

P_META: Final = f"$.{F_META}"
META_PATHS: Final[Mapping[str, str]] = {
    name: f"{P_META}.{name}"
    for name in (M_PRIMARY_KEY, M_DB_TYPE, M_TABLE, M_DB, M_TIMESTAMP, M_SEQUENCE, M_UNIQUE_ID,
                 M_TRANS_ID, M_DDL_TYPE)
}  # fmt: skip

# keys of ChangeEvent.extra
X_TENANT: Final = "tenant"
X_DB_TYPE: Final = M_DB_TYPE
X_CHECKPOINT: Final = M_CHECKPOINT
X_DDL_TYPE: Final = M_DDL_TYPE
