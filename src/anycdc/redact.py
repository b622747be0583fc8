"""Excluded and masked columns (``tables:`` ``exclude_columns``, ``mask_columns``), applied
to changelog rows as they are decoded: before anything is written anywhere.

A row of a table with such columns leaves the decode step with the excluded columns gone
from its images and column list, the masked values replaced (``sha256``: the lowercase hex
SHA-256 of the value's canonical text, the column typed ``string``; ``null``: NULL), and no
``raw`` message, Kafka key or MongoDB ``patch`` (they hold the source's values: a Debezium
Kafka key is the row's key). An event whose key names an excluded (or NULL-masked) column
becomes a dead letter without them. Pure: the Spark decode stage runs it in its workers.

>>> from anycdc.config import PipelineConfig, TableSettings
>>> config = PipelineConfig(tables={"shop.users": TableSettings(
...     exclude_columns=("ssn",), mask_columns={"email": "sha256", "phone": "null"})})
>>> redactor = Redactor.from_config(config)
>>> row = {"database": "shop", "schema": None, "table": "users", "key": ["id"],
...        "raw": b"{...}", "kafka_key": b"1", "patch": None, "invalid": [], "before": None,
...        "after": {"id": "1", "ssn": "123-45-6789", "email": "a@b.c", "phone": "555"},
...        "columns": [{"name": "id", "type": "int64", "vendor_type": "int"},
...                    {"name": "ssn", "type": "string", "vendor_type": "char(11)"},
...                    {"name": "email", "type": "string", "vendor_type": "varchar"},
...                    {"name": "phone", "type": "string", "vendor_type": "varchar"}]}
>>> out = redactor.row(row)
>>> out["after"]["email"][:12], out["after"]["phone"], "ssn" in out["after"], out["raw"]
('d648b243a3e8', None, False, None)
>>> [c["name"] for c in out["columns"]]
['id', 'email', 'phone']
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from anycdc.config import PipelineConfig
    from anycdc.table_settings import MaskKind

_REMOVED: Final = ("raw", "kafka_key", "patch")
"""What a redacted row loses whole: the message, its Kafka key and a MongoDB patch hold
the source's values."""


@dataclass(frozen=True)
class ColumnRule:
    """One table's excluded and masked columns."""

    exclude: frozenset[str] = frozenset()
    mask: Mapping[str, MaskKind] = field(default_factory=dict)


def mask_value(value: str | None, kind: MaskKind) -> str | None:
    """A value (canonical text) masked: its SHA-256 (hex) or NULL; NULL stays NULL.

    >>> mask_value("a@b.c", "sha256")[:16], mask_value("a@b.c", "null"), mask_value(None, "sha256")
    ('d648b243a3e817ea', None, None)
    """
    if value is None or kind == "null":
        return None
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


@dataclass
class Redactor:
    """The column rules of a run's ``tables:`` entries, by table (the winning entry's,
    :meth:`anycdc.config.PipelineConfig.table_pattern`), cached per table."""

    config: PipelineConfig
    _rules: dict[tuple[Any, Any, Any], ColumnRule | None] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: PipelineConfig) -> Redactor | None:
        """None when no entry excludes or masks a column (decoding is left as it is)."""
        if not any(t.exclude_columns or t.mask_columns for t in config.tables.values()):
            return None
        return cls(config)

    def rule(
        self, database: str | None, schema: str | None, table: str | None
    ) -> ColumnRule | None:
        """The table's rule, or None when its values pass as they are."""
        ident = (database, schema, table)
        if ident in self._rules:
            return self._rules[ident]
        rule = None
        if table:
            settings = self.config.table_settings((database, schema, table))
            if settings.redacts:
                rule = ColumnRule(frozenset(settings.exclude_columns), dict(settings.mask_columns))
        self._rules[ident] = rule
        return rule

    def row(self, row: dict[str, Any]) -> dict[str, Any]:
        """A changelog row (:func:`anycdc.changelog.event_to_row`) redacted in place."""
        rule = self.rule(row.get("database"), row.get("schema"), row.get("table"))
        if rule is None:
            return row
        for name in _REMOVED:
            row[name] = None
        if row.get("error") is not None:
            return row  # a dead letter of a known table: no values but its reason
        gone = [k for k in row.get("key") or () if k in rule.exclude or rule.mask.get(k) == "null"]
        if gone:
            qualified = ".".join(p for p in (row["database"], row["schema"], row["table"]) if p)
            how = "excluded" if gone[0] in rule.exclude else "masked by null"
            return self._dead_letter(
                row,
                f"{qualified}: key column {gone[0]!r} is {how} (tables: exclude_columns / "
                "mask_columns): mask it by sha256 instead",
            )
        for image in ("before", "after"):
            values = row.get(image)
            if values:
                row[image] = {
                    name: mask_value(value, rule.mask[name]) if name in rule.mask else value
                    for name, value in values.items()
                    if name not in rule.exclude
                }
        columns = []
        for column in row.get("columns") or ():
            name = column["name"]
            if name in rule.exclude:
                continue
            if rule.mask.get(name) == "sha256":
                column = {**column, "type": "string", "vendor_type": None}
            columns.append(column)
        row["columns"] = columns
        if row.get("invalid"):
            row["invalid"] = [name for name in row["invalid"] if name not in rule.exclude]
        return row

    @staticmethod
    def _dead_letter(row: dict[str, Any], reason: str) -> dict[str, Any]:
        """The row as a dead letter with ``reason``: its coordinates, no value."""
        from anycdc.changelog import CHANGELOG_COLUMNS

        out: dict[str, Any] = dict.fromkeys(name for name, _ in CHANGELOG_COLUMNS)
        for name in ("source", "partition", "offset", "event_index", "format"):
            out[name] = row.get(name)
        out.update(error=reason, partial=[], invalid=[], columns=[])
        return out


__all__ = ["ColumnRule", "Redactor", "mask_value"]
