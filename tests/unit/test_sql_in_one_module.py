"""Every SQL statement and expression fragment of the Spark layer is built in one module,
:mod:`anycdc.spark.merge_sql` (with the meaning of each action,
:mod:`anycdc.spark.action_rules`, and the typing rule, :mod:`anycdc.spark.sql_types`, that it
builds from): a frame's module passes SQL text it got from there, never text of its own.
Read from the source with ``ast``: nothing is imported.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SPARK = Path(__file__).resolve().parents[2] / "src" / "anycdc" / "spark"
SQL_MODULES = frozenset({"merge_sql.py", "action_rules.py", "sql_types.py"})
"""The modules that build SQL text."""
TAKES_SQL = frozenset({"sql", "expr", "selectExpr", "where", "filter"})
"""Spark calls whose string arguments are SQL."""
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A bare column name is not SQL text of its own."""


def sql_texts(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string literal or f-string passed to a call of
    :data:`TAKES_SQL`, bare column names aside."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in TAKES_SQL:
            continue
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Starred):
                arg = arg.value
            if isinstance(arg, ast.JoinedStr) or (
                isinstance(arg, ast.Constant)
                and isinstance(arg.value, str)
                and not NAME.fullmatch(arg.value)
            ):
                found.append((node.lineno, ast.unparse(arg)))
    return found


def test_no_spark_module_writes_sql_text_of_its_own() -> None:
    found = {
        f"{path.name}:{line}: {text}"
        for path in sorted(SPARK.glob("*.py"))
        if path.name not in SQL_MODULES
        for line, text in sql_texts(path.read_text())
    }
    assert not found, "SQL text outside merge_sql:\n" + "\n".join(sorted(found))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('spark.sql(f"OPTIMIZE {t}")', 1),
        ('F.expr("timestamp_millis(ts_ms)")', 1),
        ('frame.selectExpr("_t", "a AS b")', 1),
        ('frame.where(f"NOT ({x})")', 1),
        ('frame.filter(F.col("a") > 1)', 0),
        ('frame.selectExpr("_t", *columns)', 0),
        ("spark.sql(vacuum_sql(table))", 0),
    ],
)
def test_sql_text_is_caught(source: str, expected: int) -> None:
    assert len(sql_texts(source)) == expected
