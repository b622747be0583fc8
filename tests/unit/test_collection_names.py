"""Which table a transaction's data collection names (a read's cut waits for its rows)."""

from __future__ import annotations

import pytest

from anycdc.spark.reads import collection_table

KNOWN = [
    ("inventory", None, "orders"),  # MySQL: database.table
    ("shop", "public", "payments"),  # Postgres: schema.table
    ("testDB", "dbo", "lines"),  # SQL Server: database.schema.table
    ("a", None, "x.y"),  # a dot in the table's own name
    ("one", None, "twin"),
    ("two", None, "twin"),
]


@pytest.mark.parametrize(
    ("name", "table"),
    [
        ("inventory.orders", ("inventory", None, "orders")),
        ("orders", ("inventory", None, "orders")),
        ("public.payments", ("shop", "public", "payments")),
        ("shop.public.payments", ("shop", "public", "payments")),
        ("testDB.dbo.lines", ("testDB", "dbo", "lines")),
        ("testDB.dbo.testDB.lines", ("testDB", "dbo", "lines")),  # SQL Server's docs
        ("a.x.y", ("a", None, "x.y")),
        ("one.twin", ("one", None, "twin")),
        ("twin", None),  # two tables have that name: not waited for
        ("other.orders", None),  # another database's
        ("inventory.order", None),
        ("nventory.orders", None),
        ("audit", None),  # a table never ingested
    ],
)
def test_a_data_collection_names_the_one_table_it_ends_in(
    name: str, table: tuple[str | None, ...] | None
) -> None:
    assert collection_table(name, KNOWN) == table
