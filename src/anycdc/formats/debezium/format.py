"""The ``debezium-json`` format: its id, options and capabilities; decoding and encoding
come from :mod:`.decode` and :mod:`.encode`."""

from __future__ import annotations

from typing import Any, ClassVar

from anycdc.formats.base import Capabilities
from anycdc.formats.debezium.decode import DebeziumDecoder
from anycdc.formats.debezium.encode import SCHEMA_OPTION, SERVER_NAME_OPTION, DebeziumEncoder
from anycdc.formats.options import OptionSpec


class DebeziumJson(DebeziumDecoder, DebeziumEncoder):
    """Debezium change-event values (JSON converter), with or without the schema part."""

    id: ClassVar[str] = "debezium-json"
    vendor: ClassVar[str] = "Debezium (Red Hat / Kafka Connect)"
    title: ClassVar[str] = (
        "Debezium change event (JSON converter, schema + payload or payload only)"
    )
    capabilities: ClassVar[Capabilities] = Capabilities(
        before_image=Capabilities.Before.VARIES,
        types=Capabilities.Types.SCHEMA,
        key_names=False,
        before_detail="full; Postgres: key columns or none unless REPLICA IDENTITY FULL",
        types_detail="Kafka Connect schema (when schemas.enable=true)",
        position="SQL Server commit_lsn/change_lsn/event_serial_no; MySQL binlog file/pos/row; "
        "Postgres lsn; Oracle scn; MongoDB ts/ord",
        key_detail="from the Kafka key or `primary_key=`",
        notes=("key names from the Kafka message key; BIGINT UNSIGNED as DECIMAL(20,0)",),
    )
    extra_options: ClassVar[tuple[OptionSpec[Any], ...]] = (SCHEMA_OPTION, SERVER_NAME_OPTION)
