"""The import paths that moved when each format family became one package (``canal/``,
``debezium/``, ``dataworks/``) and the packages stopped re-exporting their modules' names
(those three, ``oms/`` and ``dts_avro/``), kept working for one release: using one warns
(:class:`DeprecationWarning`) and names the new path.

* a moved module (:data:`MOVED_MODULES`) is a shim that warns when it is imported and finds
  its names in the modules that define them now (:func:`moved_module`);
* a family package no longer re-exports its modules' names: the names it used to give
  warn and come from their module (:func:`moved_names`, the package's ``__getattr__``).

>>> MOVED_MODULES["anycdc.formats.drs"][0]
'anycdc.formats.canal.drs'
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Final

MOVED_MODULES: Final[Mapping[str, tuple[str, ...]]] = {
    "anycdc.formats.dts_canal": ("anycdc.formats.canal.dts",),
    # DRS' detection evidence went to the family's detection module, its wire names to the
    # family's
    "anycdc.formats.drs": (
        "anycdc.formats.canal.drs",
        "anycdc.formats.canal.detect",
        "anycdc.formats.canal.wire",
    ),
    # Connect <-> Avro schemas and values went to their own module beside the format's
    "anycdc.formats.debezium_avro": (
        "anycdc.formats.debezium.avro",
        "anycdc.formats.debezium.avro_schemas",
    ),
    "anycdc.formats.dataworks2": ("anycdc.formats.dataworks.v2",),
}
"""Old module -> the module that holds its format now, then any other module that holds
some of its names (its names are looked up in this order)."""

MOVED_NAMES: Final[Mapping[str, Mapping[str, tuple[str, ...]]]] = {
    "anycdc.formats.canal": {
        "anycdc.formats.canal.detect": (
            "is_canal_shaped",
            "is_dts_certain",
            "type_word",
        ),
        "anycdc.formats.canal.family": ("CanalFamily",),
        "anycdc.formats.canal.fast": (
            "FlatPlan",
            "cache_items",
        ),
        "anycdc.formats.canal.format": ("CanalJson",),
        "anycdc.formats.canal.rows": (
            "Envelope",
            "Pairing",
            "RowRender",
        ),
        "anycdc.formats.canal.types": (
            "DEFAULT_VENDOR",
            "FlatSchema",
            "column_type",
            "render_value",
        ),
        "anycdc.formats.canal.wire": (
            "BINARY_AUTO",
            "BINARY_BASE64",
            "BINARY_HEX",
            "BINARY_LATIN1",
            "BINARY_MODES",
            "BINARY_OPTION",
            "EXTRA_ROLLBACK",
            "F_DATA",
            "F_DATA_SOURCE_NAME",
            "F_DATABASE",
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
            "OPS",
            "OPT_BINARY",
            "ROW_KINDS",
            "ROW_TYPES",
            "TIDB_CLAIM_CHECK",
            "TIDB_COMMIT_TS",
            "TIDB_ONLY_HANDLE_KEY",
            "TIDB_WATERMARK_TS",
        ),
    },
    "anycdc.formats.debezium": {
        "anycdc.formats.debezium.format": ("DebeziumJson",),
    },
    "anycdc.formats.dataworks": {
        "anycdc.formats.dataworks.family": (
            "DataWorksFamily",
            "FastPlan",
            "as_sent",
            "epoch_ms_ns",
            "scn_text",
            "sequence_number",
            "vendor_op",
        ),
        "anycdc.formats.dataworks.format": (
            "DataWorksJson",
            "infer_type",
        ),
        "anycdc.formats.dataworks.wire": (
            "DATAWORKS_LAYOUT",
            "DATAWORKS_OPS",
            "DDL_OPS",
            "EXTRA_DB_TYPE",
            "EXTRA_EXTEND",
            "EXTRA_SCN",
            "EXTRA_VENDOR_OP",
            "FIELD_AFTER",
            "FIELD_BEFORE",
            "FIELD_CHECKPOINT_TIME",
            "FIELD_DATA_COLUMN",
            "FIELD_DB_NAME",
            "FIELD_DB_TYPE",
            "FIELD_DB_VERSION",
            "FIELD_DDL",
            "FIELD_DDL_META",
            "FIELD_DDL_TEXT",
            "FIELD_EVENT_TIME",
            "FIELD_EXTEND",
            "FIELD_NAME",
            "FIELD_OP",
            "FIELD_PAYLOAD",
            "FIELD_PRIMARY_KEY",
            "FIELD_SCHEMA",
            "FIELD_SCHEMA_NAME",
            "FIELD_SCN",
            "FIELD_SEQUENCE_ID",
            "FIELD_SOURCE",
            "FIELD_SYSTEM_TIME",
            "FIELD_TABLE_NAME",
            "FIELD_TIMESTAMP",
            "FIELD_TYPE",
            "FIELD_VERSION",
            "NO_VALUE",
            "OP_ALTER",
            "OP_CINDEX",
            "OP_CREATE",
            "OP_DELETE",
            "OP_DINDEX",
            "OP_ERASE",
            "OP_GTID",
            "OP_INSERT",
            "OP_MHEARTBEAT",
            "OP_QUERY",
            "OP_RENAME",
            "OP_TRANSACTION_BEGIN",
            "OP_TRANSACTION_END",
            "OP_TRUNCATE",
            "OP_UPDATE_AFTER",
            "OP_UPDATE_BEFORE",
            "OP_XACOMMIT",
            "OP_XAROLLBACK",
            "ROW_ID_COLUMN",
            "SCN_ABSENT",
            "SHARED_OPS",
            "SPLIT_AFTER",
            "SPLIT_BEFORE",
            "SPLIT_UPDATE",
            "TYPE_BOOLEAN",
            "TYPE_BYTES",
            "TYPE_DATE",
            "TYPE_DOUBLE",
            "TYPE_LONG",
            "TYPE_STRING",
            "VERSION",
            "VERSIONS",
            "Declared",
            "Layout",
            "Parser",
        ),
        # the op rule became every flow's (and its images' names with it)
        "anycdc.formats.events": (
            "RULE_DELETE",
            "RULE_INSERT",
            "RULE_NONE",
            "RULE_UPDATE",
            "RULE_UPDATE_AFTER",
            "RULE_UPDATE_BEFORE",
            "OpRule",
        ),
    },
    "anycdc.formats.oms": {
        "anycdc.formats.oms.format": (
            "OmsExtendJson",
            "OmsJson",
        ),
        "anycdc.formats.oms.types": (
            "derived_schema_type",
            "key_text",
            "light_type",
            "oracle_tenant",
            "seconds_to_ms",
            "tenant_database",
        ),
        "anycdc.formats.oms.wire": (
            "DDL_KEY",
            "DEFAULT_DB_TYPE",
            "F_META",
            "F_POST",
            "F_PREV",
            "F_RECORD_TYPE",
            "LIGHT_TYPE",
            "M_CHECKPOINT",
            "M_DB",
            "M_DB_TYPE",
            "M_DDL_TYPE",
            "M_PRIMARY_KEY",
            "M_PRIMARY_VALUE",
            "M_SEQUENCE",
            "M_SOURCE_IDENTITY",
            "M_TABLE",
            "M_TIMESTAMP",
            "M_TRANS_ID",
            "M_UNIQUE_ID",
            "OCEANBASE_DB_TYPES",
            "OPS",
            "OP_NOUN",
            "ORACLE_DB_TYPES",
            "RECORD_TYPES",
            "RT_DDL",
            "RT_DELETE",
            "RT_HEARTBEAT",
            "RT_INSERT",
            "RT_ROW",
            "RT_UPDATE",
            "SCHEMA_TYPE",
            "X_CHECKPOINT",
            "X_DB_TYPE",
            "X_DDL_TYPE",
            "X_TENANT",
        ),
    },
    "anycdc.formats.dts_avro": {
        "anycdc.formats.dts_avro.encode": ("mysql_column",),
        "anycdc.formats.dts_avro.format": ("DtsAvro",),
        "anycdc.formats.dts_avro.types": (
            "Branch",
            "Converter",
        ),
        "anycdc.formats.dts_avro.wire": (
            "AVRO_NAMESPACE",
            "BINARY_OBJECT_BLOB",
            "CHARSET_BINARY",
            "DEFAULT_CHARSET",
            "DT_PARTS",
            "EMPTY_NONE",
            "EMPTY_NULL",
            "F_AFTER",
            "F_BEFORE",
            "F_BORN_TIMESTAMP",
            "F_FIELDS",
            "F_FIELD_NAME",
            "F_FIELD_TYPE",
            "F_ID",
            "F_OBJECT_NAME",
            "F_OPERATION",
            "F_PROCESS_TIMESTAMPS",
            "F_SAFE_SOURCE_POSITION",
            "F_SOURCE",
            "F_SOURCE_POSITION",
            "F_SOURCE_TIMESTAMP",
            "F_SOURCE_TXID",
            "F_SOURCE_TYPE",
            "F_SOURCE_VERSION",
            "F_TAGS",
            "F_VERSION",
            "K_CHARSET",
            "K_MILLIS",
            "K_PRECISION",
            "K_SCALE",
            "K_TIMESTAMP",
            "K_TIMEZONE",
            "K_TYPE",
            "K_VALUE",
            "MYSQL_CHARSETS",
            "MYSQL_FAMILY",
            "NAME_DOT_ESCAPE",
            "OPS",
            "OP_ABORT",
            "OP_BEGIN",
            "OP_CHECKPOINT",
            "OP_COMMAND",
            "OP_COMMIT",
            "OP_CONTROL",
            "OP_DDL",
            "OP_DELETE",
            "OP_FILL",
            "OP_FINISH",
            "OP_HEARTBEAT",
            "OP_INIT",
            "OP_INSERT",
            "OP_NOOP",
            "OP_RDB",
            "OP_ROLLBACK",
            "OP_UPDATE",
            "PK_PRIMARY",
            "PROGRESS_OPS",
            "RECORD_NAME",
            "SCHEMA_RESOURCE",
            "SOURCE_MYSQL",
            "TAG_PK_UK_INFO",
            "TEXT_OBJECT_JSON",
            "V_BINARY_GEOMETRY",
            "V_BINARY_OBJECT",
            "V_CHARACTER",
            "V_DATETIME",
            "V_DECIMAL",
            "V_EMPTY",
            "V_FLOAT",
            "V_INTEGER",
            "V_TEXT_GEOMETRY",
            "V_TEXT_OBJECT",
            "V_TIMESTAMP",
            "V_TIMESTAMP_TZ",
        ),
    },
}
"""Family package -> the names it re-exported, by the module that defines each."""


def moved_module(old: str) -> Callable[[str], Any]:
    """Warn that module ``old`` moved (called from its shim's body, so once per process, at
    its import), and give the shim's ``__getattr__``: a name is looked up in the modules
    that hold the old module's names now (:data:`MOVED_MODULES`), in order."""
    homes = MOVED_MODULES[old]
    warnings.warn(
        f"{old} is deprecated: it moved to {homes[0]}",
        DeprecationWarning,
        stacklevel=3,  # this function, the shim's body, then its importer (importlib skipped)
    )

    def find(name: str) -> Any:
        for home in homes:
            module = importlib.import_module(home)
            if name in vars(module):
                return vars(module)[name]
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return find


def moved_names(package: str) -> Callable[[str], Any]:
    """The ``__getattr__`` of a family package that used to re-export names
    (:data:`MOVED_NAMES`): each warns, naming the module that defines it, and is read from
    it; any other name is no attribute (a submodule is then imported as usual)."""
    home_of = {name: module for module, names in MOVED_NAMES[package].items() for name in names}

    def find(name: str) -> Any:
        home = home_of.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        # ``from package import name`` asks twice: importlib's hasattr, then the statement;
        # the statement's (the importer's line) warns
        if sys._getframe(2).f_code.co_name != "_handle_fromlist":
            warnings.warn(
                f"{package}.{name} is deprecated: import it from {home}",
                DeprecationWarning,
                stacklevel=3,  # find, the package's __getattr__, then the user
            )
        return getattr(importlib.import_module(home), name)

    return find
