"""Per-table settings: the keys of a ``tables:`` entry, declared once (type, README row,
parsing, checks), the patterns that pick a table's entry, and what a table gets.

:class:`anycdc.config.PipelineConfig` holds the entries (its ``tables`` setting) and
resolves a table's settings (:meth:`~anycdc.config.PipelineConfig.table_settings`).

>>> TableSettings.from_entry("shop.*", {"freshness": "5m"}).freshness
300.0
>>> winning_pattern(("shop.*", "shop.orders"), "shop.orders")
'shop.orders'
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Final, Literal

from anycdc.errors import OptionError
from anycdc.naming import COLUMN_NAMES
from anycdc.schedule import parse_duration


def as_tuple(value: Any) -> tuple[str, ...]:
    """A list setting's value: a comma-separated text or a list, as names."""
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    return tuple(str(v) for v in value)


def as_text(value: Any) -> str:
    """A setting's value as text; YAML/TOML booleans as ``true``/``false`` (not Python's
    ``True``), the spelling Kafka, Spark and the format options take."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


SCHEMA_CHANGES: Final = ("evolve", "lenient", "ignore", "fail")
"""The ``schema_changes`` modes (see docs/REFERENCE.md, Semantics: Schema changes)."""
MaskKind = Literal["sha256", "null"]
MASKS: Final[tuple[MaskKind, ...]] = ("sha256", "null")
REGEX_PREFIX: Final = "re:"


@dataclass(frozen=True)
class TableSettingDecl:
    """The declaration of one key of a ``tables:`` entry (:class:`TableSettings`): its
    README row, its parsing and its checks. ``name`` and ``type`` come from the field."""

    doc: str
    """One line of Markdown: the README row of the key."""
    example: str
    """The key's value in a YAML entry (the README shows it)."""
    parse: Callable[[Any, str], Any]
    """File or flag value -> the field's value; ``where`` (``tables.<pattern>.<key>``)
    names the entry in errors."""
    name: str = ""
    type: str = ""


def _table_setting(doc: str, example: str, parse: Callable[[Any, str], Any]) -> Any:
    """A :class:`TableSettings` field (unset: ``None``, the run-wide setting applies)."""
    return field(default=None, metadata={"table_setting": TableSettingDecl(doc, example, parse)})


def _entry_mode(value: Any, where: str) -> str:
    if value not in ("scd1", "scd2"):
        raise OptionError(f"{where} must be scd1 or scd2, got {value!r}")
    return str(value)


def _entry_choice(choices: tuple[str, ...]) -> Callable[[Any, str], str]:
    """The parser of a key that takes one of ``choices``."""

    def parse(value: Any, where: str) -> str:
        if value not in choices:
            raise OptionError(f"{where} must be {', '.join(choices)}; got {value!r}")
        return str(value)

    return parse


def _entry_columns(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, (str, list, tuple)):
        raise OptionError(f"{where}: expected a list of column names, got {value!r}")
    columns = as_tuple(value)
    if not columns or not all(columns):
        raise OptionError(f"{where}: expected one or more column names, got {value!r}")
    if len(set(columns)) != len(columns):
        raise OptionError(f"{where}: a column is named twice in {value!r}")
    return columns


def _entry_freshness(value: Any, where: str) -> float:
    return parse_duration(value, where)


def _entry_properties(value: Any, where: str) -> Mapping[str, str]:
    if not isinstance(value, Mapping):
        raise OptionError(f"{where}: expected a mapping of Delta table properties, got {value!r}")
    out = {str(k): as_text(v) for k, v in value.items()}
    for key in out:
        if not key or key.lower().startswith("anycdc."):
            raise OptionError(
                f"{where}: {key!r} cannot be set (anycdc.* properties are anycdc's own)"
            )
    return out


def _entry_masks(value: Any, where: str) -> Mapping[str, MaskKind]:
    """``[a, b]`` (each ``sha256``), ``{a: sha256, b: null}``, or the flag's ``a,b=null``."""
    if isinstance(value, Mapping):
        pairs = [(str(k), "null" if v is None else as_text(v)) for k, v in value.items()]
    elif isinstance(value, (str, list, tuple)):
        pairs = []
        for item in as_tuple(value):
            column, _, kind = item.partition("=")
            pairs.append((column.strip(), kind.strip() or "sha256"))
    else:
        raise OptionError(
            f"{where}: expected a list of columns or COLUMN: sha256|null, got {value!r}"
        )
    out: dict[str, MaskKind] = {}
    for column, kind in pairs:
        if not column:
            raise OptionError(f"{where}: an empty column name in {value!r}")
        if kind == "sha256":
            out[column] = "sha256"
        elif kind == "null":
            out[column] = "null"
        else:
            raise OptionError(f"{where}: {column!r} must be masked by sha256 or null, got {kind!r}")
    return out


@dataclass(frozen=True)
class TableSettings:
    """The settings of one ``tables:`` entry: what the tables its pattern matches get instead
    of the run-wide settings. A key not set (``None``) leaves the run-wide setting.

    Each key is declared once, here: its type, its README row (``anycdc dev config-table``),
    its parsing and checks (:meth:`from_entry`).

    >>> TableSettings.from_entry("shop.*", {"mode": "scd2", "freshness": "5m"})
    TableSettings(mode='scd2', primary_key=None, freshness=300.0, table_properties=None, cluster_by=None, partition_by=None, exclude_columns=None, mask_columns=None, schema_changes=None, column_names=None)
    >>> TableSettings.from_entry("shop.*", {"mod": "scd2"})
    Traceback (most recent call last):
    ...
    anycdc.errors.OptionError: tables.shop.*: unknown key 'mod'; valid: mode, primary_key, freshness, table_properties, cluster_by, partition_by, exclude_columns, mask_columns, schema_changes, column_names
    """

    mode: Literal["scd1", "scd2"] | None = _table_setting(
        "`scd1` or `scd2`, over the run's `mode`", "scd2", _entry_mode,
    )  # fmt: skip
    primary_key: tuple[str, ...] | None = _table_setting(
        "the key columns, over the message's key and `primary_keys`", "[tenant, id]",
        _entry_columns,
    )  # fmt: skip
    freshness: float | None = _table_setting(
        "the table's `freshness` (`10s`, `15m`), over `freshness` and `table_freshness`",
        "10s", _entry_freshness,
    )  # fmt: skip
    table_properties: Mapping[str, str] | None = _table_setting(
        "Delta table properties, added to the run's `table_properties` (a name in both: this "
        "one); set at creation and on an existing table as the run-wide ones are",
        "{delta.enableChangeDataFeed: true}", _entry_properties,
    )  # fmt: skip
    cluster_by: tuple[str, ...] | None = _table_setting(
        "Delta liquid clustering columns (source names): given at creation, and changed on an "
        "existing table by `ALTER TABLE ... CLUSTER BY` when they differ (new files are "
        "clustered by the new columns, by `OPTIMIZE`); not with `partition_by`",
        "[customer_id]", _entry_columns,
    )  # fmt: skip
    partition_by: tuple[str, ...] | None = _table_setting(
        "partition columns (source names), at creation only (an existing table keeps its "
        "own); not with `cluster_by`",
        "[region]", _entry_columns,
    )  # fmt: skip
    exclude_columns: tuple[str, ...] | None = _table_setting(
        "columns never written (PII): dropped from every image as the messages are decoded, "
        "so they reach neither the table nor `_anycdc/changelog` nor the dead letters (see "
        "Per-table settings); not a key column",
        "[ssn, card_number]", _entry_columns,
    )  # fmt: skip
    mask_columns: Mapping[str, MaskKind] | None = _table_setting(
        "columns written masked: `sha256` (the lowercase hex SHA-256 of the value's text; "
        "the column becomes a STRING; equal values stay equal) or `null`; a list masks each "
        "by `sha256`; a key column only by `sha256`",
        "{email: sha256, phone: null}", _entry_masks,
    )  # fmt: skip
    schema_changes: Literal["evolve", "lenient", "ignore", "fail"] | None = _table_setting(
        "`evolve`, `lenient`, `ignore` or `fail`, over the run's `schema_changes`",
        "evolve", _entry_choice(SCHEMA_CHANGES),
    )  # fmt: skip
    column_names: Literal["exact", "portable"] | None = _table_setting(
        "`exact` or `portable`, over the run's `column_names` (for the table's new columns)",
        "portable", _entry_choice(COLUMN_NAMES),
    )  # fmt: skip

    @classmethod
    def from_entry(cls, pattern: str, entry: Any) -> TableSettings:
        """One entry of ``tables:`` (``pattern``: its key), checked key by key."""
        if isinstance(entry, TableSettings):
            entry = {k: v for k, v in asdict(entry).items() if v is not None}
        if not isinstance(entry, Mapping):
            raise OptionError(f"tables.{pattern}: expected a mapping of settings, got {entry!r}")
        unknown = [str(k) for k in entry if k not in TABLE_SETTINGS]
        if unknown:
            raise OptionError(
                f"tables.{pattern}: unknown key {unknown[0]!r}; valid: {', '.join(TABLE_SETTINGS)}"
            )
        values = {
            str(key): TABLE_SETTINGS[str(key)].parse(value, f"tables.{pattern}.{key}")
            for key, value in entry.items()
            if value is not None
        }
        settings = cls(**values)
        settings.check(pattern)
        return settings

    def check(self, pattern: str) -> None:
        """The rules across keys (a column both excluded and masked ...)."""
        where = f"tables.{pattern}"
        excluded = set(self.exclude_columns or ())
        masked = dict(self.mask_columns or {})
        both = sorted(excluded & set(masked))
        if both:
            raise OptionError(f"{where}: {both[0]!r} is both in exclude_columns and mask_columns")
        if self.cluster_by and self.partition_by:
            raise OptionError(
                f"{where}: cluster_by and partition_by cannot both be set (Delta liquid "
                "clustering replaces partitioning)"
            )
        for key in ("primary_key", "cluster_by", "partition_by"):
            for column in getattr(self, key) or ():
                if column in excluded:
                    raise OptionError(f"{where}.{key}: {column!r} is in exclude_columns")
        for column in self.primary_key or ():
            if masked.get(column) == "null":
                raise OptionError(
                    f"{where}.mask_columns: key column {column!r} can only be masked by sha256 "
                    "(NULL keys would make every row one)"
                )


TABLE_SETTINGS: Final[Mapping[str, TableSettingDecl]] = {
    f.name: replace(f.metadata["table_setting"], name=f.name, type=str(f.type))
    for f in fields(TableSettings)
}
"""Every key of a ``tables:`` entry's declaration, by name, in the order of the fields."""


@dataclass(frozen=True)
class ResolvedTableSettings:
    """What one table gets: the run-wide settings with its winning ``tables:`` entry over
    them (:meth:`PipelineConfig.table_settings`)."""

    pattern: str | None
    """The ``tables:`` entry that won (None: the run-wide settings alone)."""
    mode: Literal["scd1", "scd2"]
    primary_key: tuple[str, ...] | None
    """None: the message's key."""
    freshness: float
    table_properties: Mapping[str, str]
    cluster_by: tuple[str, ...] = ()
    partition_by: tuple[str, ...] = ()
    exclude_columns: tuple[str, ...] = ()
    mask_columns: Mapping[str, MaskKind] = field(default_factory=dict)
    schema_changes: Literal["evolve", "lenient", "ignore", "fail"] = "lenient"
    column_names: Literal["exact", "portable"] = "exact"

    @property
    def redacts(self) -> bool:
        """Whether values of the table are dropped or masked as they are decoded."""
        return bool(self.exclude_columns or self.mask_columns)


_GLOB_WILDCARD: Final = re.compile(r"\*|\?|\[[^\]]*\]")


def pattern_rank(pattern: str) -> tuple[int, int, int]:
    """How specific a ``tables:`` pattern is, smallest first: an exact name (0), then a glob
    (1) with fewer wildcards (``*``, ``?``, ``[...]``) and then more literal characters,
    then a regex (2, ``re:...``). Equal ranks: the entry first in the file wins.

    >>> sorted(["re:^shop", "shop.*", "shop.orders", "*.orders", "s*.*"], key=pattern_rank)
    ['shop.orders', '*.orders', 'shop.*', 's*.*', 're:^shop']
    """
    if pattern.startswith(REGEX_PREFIX):
        return (2, 0, 0)
    wildcards = _GLOB_WILDCARD.findall(pattern)
    if not wildcards:
        return (0, 0, 0)
    literal = len(_GLOB_WILDCARD.sub("", pattern))
    return (1, len(wildcards), -literal)


def table_entries(value: Any) -> dict[str, TableSettings]:
    """The ``tables`` setting: each pattern checked, each entry parsed."""
    if not isinstance(value, Mapping):
        raise OptionError(
            f"tables must map patterns over database.schema.table to settings, got {value!r}"
        )
    out = {}
    for pattern, entry in value.items():
        pattern = str(pattern)
        if not pattern or pattern == REGEX_PREFIX:
            raise OptionError(f"tables: an empty pattern {pattern!r}")
        if pattern.startswith(REGEX_PREFIX):
            try:
                re.compile(pattern.removeprefix(REGEX_PREFIX))
            except re.error as exc:
                raise OptionError(f"tables.{pattern}: invalid regex: {exc}") from None
        out[pattern] = TableSettings.from_entry(pattern, entry)
    return out


def table_setting_flags(items: list[str]) -> dict[str, dict[str, Any]]:
    """``--table-setting PATTERN:KEY=VALUE`` flags -> the ``tables`` mapping (the first
    ``:KEY=`` with a known key splits; ``table_properties=K=V`` and ``mask_columns=a,b=null``
    add to the entry's mapping).

    >>> table_setting_flags(["re:^shop\\\\.:mode=scd2", "shop.*:table_properties=delta.x=1",
    ...                      "shop.*:table_properties=delta.y=2"])
    {'re:^shop\\\\.': {'mode': 'scd2'}, 'shop.*': {'table_properties': {'delta.x': '1', 'delta.y': '2'}}}
    """
    keys = "|".join(TABLE_SETTINGS)
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        match = re.fullmatch(rf"(.+?):({keys})=(.*)", item, re.DOTALL)
        if match is None:
            raise OptionError(
                f"--table-setting expects PATTERN:KEY=VALUE with KEY one of {', '.join(TABLE_SETTINGS)}, "
                f"got {item!r}"
            )
        pattern, key, value = match.groups()
        entry = out.setdefault(pattern, {})
        if key == "table_properties":
            name, sep, text = value.partition("=")
            if not sep or not name:
                raise OptionError(
                    f"--table-setting {pattern}:table_properties expects K=V, got {value!r}"
                )
            entry.setdefault(key, {})[name] = text
        else:
            entry[key] = value
    return out


@functools.lru_cache(maxsize=4096)
def winning_pattern(patterns: tuple[str, ...], qualified: str) -> str | None:
    """The most specific of ``patterns`` that matches ``qualified`` (a glob matches the
    whole name, ``*`` dots included; a regex is searched in it, as ``include`` does)."""
    matching = [
        (pattern_rank(pattern), index, pattern)
        for index, pattern in enumerate(patterns)
        if (
            re.search(pattern.removeprefix(REGEX_PREFIX), qualified) is not None
            if pattern.startswith(REGEX_PREFIX)
            else fnmatch.fnmatchcase(qualified, pattern)
        )
    ]
    return min(matching)[2] if matching else None
