"""The simulated source's tables: their shapes per profile (``shop``, ``rich``, ``names``,
``linked``, the MongoDB collections) and the values they draw from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from anycdc.event import Column
from anycdc.values import LogicalType

PROFILES: Final = ("rich", "shop", "names", "linked")
MONGO_FORMAT: Final = "drs-mongo-json"
FIRST_NAMES = ("Ana", "Bo", "Chen", "Dmitri", "Eşref", "Fatima", "Günter", "Hana", "Ígor", "李雷")
STATUSES = ("new", "paid", "shipped", "delivered", "returned")
# Text that breaks naive encoders: quotes, backslashes, control characters (U+0001 is
# OceanBase's key separator), line breaks, emoji (astral plane), CJK, combining marks,
# empty strings and the word NULL. No U+0000: most databases refuse it in text.
TRICKY_TEXT: Final = (
    'say "hi"', "back\\slash", "new\nline", "tab\tand\r\nCRLF", "ctrl \x01 sep", "😀 emoji 🎉",
    "中文字符", "Zoë Ærøskøbing", "it's", "", "NULL", "e\u0301 combining", "{\"not\": json}",
    "line\u2028sep", "x" * 40,
)  # fmt: skip
JSON_DOCS: Final = (
    '{"a": 1, "b": [1, 2, 3]}', '{"name": "Zoë", "tags": ["x", "y"], "ok": true}', "[]", "{}",
    '{"nested": {"deep": {"n": null}}}', '"just a string"', "[1, \"two\", 3.5]", "null",
)  # fmt: skip
ACTIONS: Final = ("login", "logout", "refund", "transfer", "purchase")


def col(
    logical: str, vendor: str, precision: int | None = None, scale: int | None = None
) -> Column:
    """A column of a simulated table (also the workload's DDL adds them).

    >>> col("decimal", "decimal(12,2)", 12, 2).type.name
    'decimal'
    """
    if logical == "decimal":
        return Column(LogicalType("decimal", precision, scale), vendor)
    return Column(LogicalType.parse(logical), vendor)


@dataclass(frozen=True)
class TableSpec:
    """A simulated table: its columns (in order), primary key (``()``: none) and shape."""

    database: str
    name: str
    columns: dict[str, Column]
    key: tuple[str, ...]
    shape: str = ""
    renames: Mapping[str, str] = field(default_factory=dict)
    """Column -> the name the source gives it (profile ``names``): the rows are made
    under the shape's own names, the stream and the truth carry these."""

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.name}"

    @property
    def keyless(self) -> bool:
        """True for a table without a primary key (its truth is a multiset of rows)."""
        return not self.key


# --------------------------------------------------------------------------- table shapes
def shop_tables(database: str = "shop") -> list[TableSpec]:
    """Three tables with the types most vendor formats carry."""
    return [
        TableSpec(
            database,
            "customers",
            {
                "id": col("int64", "bigint"),
                "name": col("string", "varchar(64)"),
                "email": col("string", "varchar(128)"),
                "balance": col("decimal", "decimal(12,2)", 12, 2),
                "vip": col("boolean", "tinyint(1)"),
                "created_at": col("timestamp", "datetime"),
            },
            ("id",),
            "customers",
        ),
        TableSpec(
            database,
            "orders",
            {
                "id": col("int64", "bigint"),
                "customer_id": col("int64", "bigint"),
                "total": col("decimal", "decimal(14,2)", 14, 2),
                "status": col("string", "varchar(16)"),
                "placed_at": col("timestamp", "datetime"),
                "note": col("string", "text"),
            },
            ("id",),
            "orders",
        ),
        TableSpec(
            database,
            "products",
            {
                "sku": col("string", "varchar(16)"),
                "title": col("string", "varchar(128)"),
                "price": col("decimal", "decimal(10,2)", 10, 2),
                "stock": col("int32", "int"),
            },
            ("sku",),
            "products",
        ),
    ]


ODD_NAMES: Final[dict[str, tuple[str, dict[str, str]]]] = {
    # shape: (table name, column -> source column name)
    "customers": ("Customer List", {
        "name": "name", "email": "Name", "balance": "Balance (€)", "vip": "_cdc_op",
        "created_at": "created.at",
    }),
    "orders": ("select", {
        "customer_id": "customer id", "total": "Total=Sum;{net}", "status": "sta\ntus",
        "placed_at": "_cdc_position", "note": "it's a `note` 😀",
    }),
    "products": ("产品目录" * 32, {"title": "名前", "price": "Unit Price", "stock": "\tstock,"}),
}  # fmt: skip
"""Profile ``names``: each shop shape's table and column names as an odd source has them."""


def names_tables(database: str = "shop") -> list[TableSpec]:
    """The shop's tables under :data:`ODD_NAMES`."""
    out = []
    for spec in shop_tables(database):
        table, renames = ODD_NAMES[spec.shape]
        out.append(replace(spec, name=table, renames=dict(renames)))
    return out


def rename_columns(renames: Mapping[str, str], mapping: Mapping[str, Any]) -> dict[str, Any]:
    """``mapping`` (a row, an image, columns) with its keys as the source names them.

    >>> rename_columns({"vip": "_cdc_op"}, {"id": 1, "vip": True})
    {'id': 1, '_cdc_op': True}
    """
    return {renames.get(name, name): value for name, value in mapping.items()}


def rich_tables(database: str = "shop") -> list[TableSpec]:
    """The rich profile's three shapes (see the module docstring)."""
    return [
        TableSpec(
            database,
            "all_types",
            {
                "id": col("int64", "bigint"),
                "c_tinyint": col("int8", "tinyint"),
                "c_smallint": col("int16", "smallint"),
                "c_int": col("int32", "int"),
                "c_bigint": col("int64", "bigint"),
                "c_ubigint": col("uint64", "bigint unsigned"),
                "c_decimal": col("decimal", "decimal(38,10)", 38, 10),
                "c_money": col("decimal", "decimal(10,2)", 10, 2),
                "c_float": col("float32", "float"),
                "c_double": col("float64", "double"),
                "c_varchar": col("string", "varchar(255)"),
                "c_text": col("string", "text"),
                "c_binary": col("binary", "varbinary(64)"),
                "c_date": col("date", "date"),
                "c_time": col("time", "time(6)"),
                "c_datetime": col("timestamp", "datetime(6)"),
                "c_timestamp": col("timestamptz", "timestamp(6)"),
                "c_bool": col("boolean", "boolean"),
                "c_json": col("json", "json"),
                "c_nullable": col("string", "varchar(32)"),
            },
            ("id",),
            "all_types",
        ),
        TableSpec(
            database,
            "order_lines",
            {
                "order_id": col("int64", "bigint"),
                "line_no": col("int32", "int"),
                "sku": col("string", "varchar(32)"),
                "qty": col("int32", "int"),
                "price": col("decimal", "decimal(12,2)", 12, 2),
                "updated_at": col("timestamp", "datetime(3)"),
            },
            ("order_id", "line_no"),
            "order_lines",
        ),
        TableSpec(
            database,
            "audit_log",
            {
                "at": col("timestamp", "datetime(6)"),
                "actor": col("string", "varchar(64)"),
                "action": col("string", "varchar(16)"),
                "amount": col("decimal", "decimal(14,4)", 14, 4),
                "detail": col("json", "json"),
            },
            (),
            "audit_log",
        ),
    ]


def linked_tables(database: str = "shop") -> list[TableSpec]:
    """Profile ``linked``: ``customers`` and ``orders`` (the shop's) and ``order_lines``
    (the rich profile's: key ``(order_id, line_no)``), its ``order_id`` a foreign key to
    ``orders.id`` and ``orders.customer_id`` one to ``customers.id``, both kept by every
    committed transaction.

    >>> [(t.name, t.key) for t in linked_tables()]
    [('customers', ('id',)), ('orders', ('id',)), ('order_lines', ('order_id', 'line_no'))]
    """
    shop = shop_tables(database)
    return [shop[0], shop[1], rich_tables(database)[1]]


def mongo_collections(database: str = "shop") -> list[TableSpec]:
    """A MongoDB-like collection: ``_id`` plus typed top-level fields (BSON type names)."""
    return [
        TableSpec(
            database,
            "profiles",
            {
                "_id": col("string", "objectId"),
                "name": col("string", "string"),
                "age": col("int32", "int"),
                "visits": col("int64", "long"),
                "score": col("float64", "double"),
                "balance": Column(LogicalType("decimal"), "decimal"),
                "active": col("boolean", "bool"),
                "joined": col("timestamptz", "date"),
                "tags": col("json", "array"),
                "address": col("json", "object"),
                "avatar": col("binary", "binData"),
                "nickname": col("string", "string"),
            },
            ("_id",),
            "profiles",
        )
    ]


def many_tables(database: str, count: int, profile: str = "shop") -> list[TableSpec]:
    """``count`` tables: the profile's shapes, numbered after the first round."""
    shapes = {
        "rich": rich_tables,
        "mongo": mongo_collections,
        "names": names_tables,
        "linked": linked_tables,
    }
    base = shapes.get(profile, shop_tables)(database)
    out = []
    for index in range(count):
        spec = base[index % len(base)]
        suffix = "" if index < len(base) else f"_{index // len(base) + 1}"
        out.append(replace(spec, name=spec.name + suffix, columns=dict(spec.columns)))
    return out
