"""Column type evolution rules (no Spark needed: pure string logic)."""

from __future__ import annotations

import pytest

from anycdc.spark.sql_types import widened


@pytest.mark.parametrize(
    ("existing", "incoming", "expected"),
    [
        ("INT", "BIGINT", "BIGINT"),
        ("BIGINT", "INT", "BIGINT"),
        ("FLOAT", "DOUBLE", "DOUBLE"),
        ("DECIMAL(10,2)", "DECIMAL(12,4)", "DECIMAL(12,4)"),
        ("DECIMAL(12,2)", "DECIMAL(10,4)", "DECIMAL(14,4)"),
        # unsigned BIGINT values meet a BIGINT column: Delta widens long -> decimal(20,0)
        ("BIGINT", "DECIMAL(20,0)", "DECIMAL(20,0)"),
        ("DECIMAL(20,0)", "BIGINT", "DECIMAL(20,0)"),
        ("INT", "DECIMAL(5,2)", "DECIMAL(12,2)"),
        ("DECIMAL(12,2)", "INT", "DECIMAL(12,2)"),
        ("BIGINT", "DECIMAL(30,20)", None),  # 20 + 20 digits exceed 38
        # a STRING column holds anything as text (untyped formats, then a typed DDL)
        ("STRING", "BIGINT", "STRING"),
        ("STRING", "DECIMAL(10,2)", "STRING"),
        ("BIGINT", "STRING", None),
        ("DATE", "TIMESTAMP_NTZ", "TIMESTAMP_NTZ"),
        ("BOOLEAN", "INT", None),
    ],
)
def test_widened(existing: str, incoming: str, expected: str | None) -> None:
    assert widened(existing, incoming) == expected
