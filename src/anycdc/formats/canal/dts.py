"""Alibaba Cloud DTS "Canal Json": Canal flat messages as DTS writes them (seed 001).

The shape is Canal's (:mod:`anycdc.formats.canal`), with DTS' own rules:

* ``old`` holds ALL columns of the other image, not only the changed ones.
* Tasks created or restarted on/after 2022-03-20: ``data`` = after image,
  ``old`` = before image; a DELETE has its row in ``data`` and no ``old``.
* Tasks created before 2022-03-20 (option ``legacy=true``): the two are
  SWAPPED: ``old`` = after image, ``data`` = before image; a DELETE has its row
  in ``old`` and no ``data``. Where the message makes the layout certain (rows
  in only one of the two arrays) the message decides; an UPDATE carries both
  arrays, so only the option can tell: it is never guessed.
* ``es`` has second precision (milliseconds padded with ``000``); ``id`` is a
  serial number built from the time and a DTS offset: ``position = (id,)``.
* ``mysqlType`` names carry no precision. ``sqlType`` is documented as DTS'
  ``dataTypeNumber`` (MySQL binlog type codes) while the examples show
  ``java.sql.Types`` (bigint -5, varchar 12): codes are read as
  ``java.sql.Types`` first and as binlog codes when JDBC has no such code.
* DTS leaves null fields out (the examples have no ``old`` key in a new-style
  DELETE, no ``data`` key in a legacy one, and no type maps in a DDL message);
  detection relies on exactly that, because open-source Canal always writes them.

>>> new = DtsCanalJson()
>>> [e] = new.decode(b'{"data":[{"id":"500000287","shipping_type":null}],"database":"dbname",'
...     b'"es":1600161894000,"id":58,"isDdl":false,"mysqlType":{"id":"bigint","shipping_type":'
...     b'"varchar"},"pkNames":["id"],"sql":"","sqlType":{"id":-5,"shipping_type":12},'
...     b'"table":"tablename","ts":1600161894771,"type":"DELETE"}')
>>> e.op.value, dict(e.before), e.ts_ms
('delete', {'id': 500000287, 'shipping_type': None}, 1600161894000)
>>> upd = (b'{"data":[{"id":"1","v":"b"}],"database":"d","es":1,"id":2,"isDdl":false,'
...     b'"mysqlType":{"id":"int","v":"varchar"},"old":[{"id":"1","v":"a"}],"pkNames":["id"],'
...     b'"sql":"","sqlType":{"id":4,"v":12},"table":"t","ts":3,"type":"UPDATE"}')
>>> [e] = new.decode(upd)
>>> dict(e.before), dict(e.after)
({'id': 1, 'v': 'a'}, {'id': 1, 'v': 'b'})
>>> [e] = DtsCanalJson({"legacy": "true"}).decode(upd)
>>> dict(e.before), dict(e.after)
({'id': 1, 'v': 'b'}, {'id': 1, 'v': 'a'})
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from anycdc.event import ChangeEvent, Op
from anycdc.formats.base import SNIFF_PASS, Capabilities
from anycdc.formats.canal.detect import DRS_LIKE, drs_evidence, is_dts_certain
from anycdc.formats.canal.family import CanalFamily
from anycdc.formats.canal.rows import RowRender
from anycdc.formats.canal.types import DEFAULT_VENDOR
from anycdc.formats.canal.wire import BINARY_OPTION, F_DATA, F_OLD, OP_DDL
from anycdc.formats.options import OptionSpec, flag
from anycdc.typemap import jdbc_type, mysql_binlog_type
from anycdc.values import LogicalType

OPT_LEGACY: Final = "legacy"
LEGACY_OPTION: Final = flag(
    OPT_LEGACY,
    "the task was created before 2022-03-20: 'old' holds the rows after the change and "
    "'data' those before (DTS swapped them back for newer tasks); only UPDATE messages "
    "need it, as elsewhere the message itself shows where the rows are",
)


class DtsCanalJson(CanalFamily):
    """Alibaba Cloud DTS Canal Json (full ``old`` images, 2022-03-20 layout change)."""

    id = "dts-canal-json"
    vendor = "Alibaba Cloud DTS"
    title = "DTS Canal Json (Kafka / RocketMQ)"
    capabilities = Capabilities(
        before_image=Capabilities.Before.FULL,
        types=Capabilities.Types.VENDOR,
        key_names=True,
        before_detail="`old` (swapped with `data` in tasks before 2022-03-20: `legacy=true`)",
        types_detail="mysqlType names (no precision) + sqlType codes",
        position="`id` (from time + DTS offset)",
        key_detail="`pkNames`",
        notes=(
            "BOOLEAN carried as tinyint(1) 0/1",
            "TIMESTAMP WITH TIME ZONE carried as MySQL TIMESTAMP text without a zone (UTC wall time)",
        ),
    )
    extra_options: ClassVar[tuple[OptionSpec[Any], ...]] = (LEGACY_OPTION, BINARY_OPTION)
    omit_nulls: ClassVar[bool] = True
    ddl_type: ClassVar[str | None] = OP_DDL

    # ------------------------------------------------------------------ hooks
    def code_type(self, code: int) -> LogicalType:
        """``java.sql.Types`` as the examples show; MySQL binlog codes as the text says."""
        ltype = jdbc_type(code)
        if ltype.name == "unknown":
            ltype = mysql_binlog_type(code)[1]
        return ltype

    def swaps_full_messages(self) -> bool:
        """Rows in both arrays (an UPDATE) are swapped only in a legacy task: the option."""
        return self.option(LEGACY_OPTION)

    @classmethod
    def shape_score(cls, msg: dict[str, Any]) -> float:
        if drs_evidence(msg)[0] >= DRS_LIKE:
            return 0.1
        # everything else looks exactly like open-source Canal: leave it to canal-json
        return 0.9 if SNIFF_PASS.shared(msg, is_dts_certain) else 0.3

    # ------------------------------------------------------------------ encoding
    def encode_es(self, ts_ms: int | None) -> int | None:
        """DTS records the source time in seconds, padded with ``000``."""
        return None if ts_ms is None else ts_ms // 1000 * 1000

    def encode_rows(self, event: ChangeEvent, msg: dict[str, Any], render: RowRender) -> None:
        """New layout: ``data`` = after (the deleted row for DELETE), ``old`` = full before;
        legacy: the two keys swapped (in place, as DTS' legacy example orders them)."""
        op = event.op
        if op is Op.DELETE:
            msg[F_DATA] = [render(event.before or {})]
        else:
            msg[F_DATA] = [render(event.after or {})]
            if op is Op.UPDATE and event.before is not None:
                msg[F_OLD] = [render(event.before)]
        if self.option(LEGACY_OPTION):
            swapped = {
                (F_OLD if k == F_DATA else F_DATA if k == F_OLD else k): v for k, v in msg.items()
            }
            msg.clear()
            msg.update(swapped)

    def default_vendor(self, ltype: LogicalType) -> tuple[str, int] | None:
        """DTS type names carry no precision."""
        return DEFAULT_VENDOR.get(ltype.name)
