"""``canal-json``: open-source Canal (and OMS', DataArts' and TiCDC's) flat messages."""

from __future__ import annotations

from typing import Any

from anycdc.formats.base import SNIFF_PASS, Capabilities
from anycdc.formats.canal.detect import DATAARTS_FIELDS, DRS_LIKE, drs_evidence, is_dts_certain
from anycdc.formats.canal.family import CanalFamily
from anycdc.formats.canal.wire import F_ES, F_IS_DDL, F_MYSQL_TYPE, F_SQL_TYPE, F_TS


# --------------------------------------------------------------------------- canal-json
class CanalJson(CanalFamily):
    """Open-source Canal flat message (also OceanBase OMS', Huawei DataArts' and TiCDC's)."""

    id = "canal-json"
    vendor = "Alibaba Canal / OceanBase OMS"
    title = "Canal flat message JSON (open-source Canal, OMS Canal serialization)"
    capabilities = Capabilities(
        before_image=Capabilities.Before.CHANGED,
        types=Capabilities.Types.VENDOR,
        key_names=True,
        before_detail="`old`, merged over `data`",
        types_detail="mysqlType names + java.sql.Types codes",
        position="`id` (OMS: es, ts; TiCDC: `_tidb.commitTs`)",
        key_detail="`pkNames`",
        notes=(
            "BOOLEAN carried as tinyint(1) 0/1",
            "TIMESTAMP WITH TIME ZONE carried as MySQL TIMESTAMP text without a zone (UTC wall time)",
        ),
    )

    @classmethod
    def shape_score(cls, msg: dict[str, Any]) -> float:
        if drs_evidence(msg)[0] >= DRS_LIKE:
            return 0.2
        if SNIFF_PASS.shared(msg, is_dts_certain):  # dts-canal-json reads it too
            return 0.4
        if any(field in msg for field in DATAARTS_FIELDS):
            return 0.9
        score = 0.6
        if F_MYSQL_TYPE in msg or F_SQL_TYPE in msg:
            score += 0.1
        if F_IS_DDL in msg:
            score += 0.1
        if F_ES in msg or F_TS in msg:
            score += 0.05
        return score
