"""Typed, validated configuration of ``anycdc run`` (from a YAML/TOML file and flags).

Every field is documented where it is declared; raw dicts stop at
:func:`PipelineConfig.from_mapping`. Secrets (a ``kafka.*`` option or a Spark
setting or a format option whose name mentions a password, secret, JAAS config, token,
credential or access/account key, and the ``user:password@`` of a URL) never leave this
module unmasked:
:meth:`PipelineConfig.redacted` is what gets printed or logged.

>>> cfg = PipelineConfig.from_mapping({"source_dir": "in", "target": "out",
...     "kafka_options": {"kafka.sasl.jaas.config": "... password=\\"s3cret\\";"}})
>>> cfg.redacted()["kafka_options"]["kafka.sasl.jaas.config"]
'***'
>>> cfg.table_path("shop", None, "orders").endswith("/out/shop/orders")
True
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Final, Literal

from anycdc.errors import AnyCdcError, OptionError
from anycdc.naming import path_segment
from anycdc.schedule import FreshnessPolicy, parse_duration
from anycdc.source.routing import DecodeRoute, SourceRouting

SECRET_WORDS: Final = (
    "password",
    "secret",
    "jaas",
    "token",
    "credential",
    "key.password",
    "access.key",  # fs.s3a.access.key
    "account.key",  # fs.azure.account.key.<account>...
)
MASK: Final = "***"
MAPPING_KEYS: Final = (
    "kafka_options",
    "format_options",
    "primary_keys",
    "spark_conf",
    "per_topic",
    "table_properties",
    "table_freshness",
)
TOPIC_KEYS: Final = ("format", "options")  # what a per_topic entry may set


def is_secret(option: str) -> bool:
    lowered = option.lower()
    return any(word in lowered for word in SECRET_WORDS)


@dataclass(frozen=True)
class TopicDecoding:
    """A topic's own decoding (``per_topic``): a format, and options over the run's (those
    of the run's options that its format takes)."""

    format: str | None = None
    """Format id or ``auto``; ``None``: the run's ``format``."""
    options: Mapping[str, str] = field(default_factory=dict)
    """Added to the run's ``format_options`` (a name set in both: this one)."""


@dataclass(frozen=True)
class PipelineConfig:
    """Everything ``anycdc run`` needs. Paths are strings so Spark can take URIs too."""

    target: str = "var/target"
    """Folder of the Delta tables (``<target>/<database>/<table>``) and of ``_anycdc/``."""
    source_dir: str | None = None
    """Read messages from files in this folder (JSON Lines / .json / .avro) instead of Kafka."""
    kafka_bootstrap: str | None = None
    """Kafka bootstrap servers, ``HOST:PORT[,HOST:PORT]``."""
    topics: tuple[str, ...] = ()
    """Kafka topics to read (or use ``topic_pattern``)."""
    topic_pattern: str | None = None
    """A Java regex of topics to subscribe to."""
    kafka_options: Mapping[str, str] = field(default_factory=dict)
    """Passed to Spark's Kafka source as-is, e.g. ``kafka.security.protocol=SASL_SSL``."""
    starting_offsets: str = "earliest"
    """``earliest``, ``latest`` or Spark's per-partition JSON; only for a new checkpoint."""
    max_offsets_per_trigger: int | None = None
    """Cap on messages per micro-batch (Kafka); files: ``max_files_per_trigger``."""
    max_files_per_trigger: int | None = None
    """Cap on files per micro-batch (directory source)."""
    format: str = "auto"
    """A format id, or ``auto`` to detect every message's format."""
    format_options: Mapping[str, str] = field(default_factory=dict)
    """``--option K=V`` pairs for the decoder (legacy, primary_key, timezone, ...)."""
    per_topic: Mapping[str, TopicDecoding] = field(default_factory=dict)
    """Topic -> its own ``format`` and ``options`` (over the run's), for a run reading
    topics of several tasks; a ``source_dir``'s "topics" are its first-level folders
    (:mod:`anycdc.source.routing`)."""
    table_name: str | None = None
    """Also register each target table in the Spark catalog under this name template
    (``{database}``, ``{schema}``, ``{table}``; dots separate catalog/database/table, e.g.
    ``{database}.{table}``, what ``--catalog`` sets): an external Delta table at its target
    path, so users of a cluster's metastore query it by name. Off by default."""
    table_properties: Mapping[str, str] = field(default_factory=dict)
    """Delta table properties every target table gets, at creation and, when one differs
    later, before the batch's writes (e.g. ``delta.enableChangeDataFeed: true`` for
    readers of the tables' changes, ``delta.enableDeletionVectors: true``,
    ``delta.logRetentionDuration``); a property removed here is left on the tables.
    ``anycdc.*`` properties are anycdc's own bookkeeping and cannot be set."""
    include: tuple[str, ...] = ()
    """Regexes over ``database.table``: only matching tables are applied (default: all)."""
    exclude: tuple[str, ...] = ()
    """Regexes over ``database.table``: matching tables are skipped."""
    primary_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """``[DB.]TABLE -> columns`` key overrides, for tables whose messages name none."""
    checkpoint: str | None = None
    """Streaming checkpoint folder (default ``<target>/_anycdc/checkpoint``)."""
    trigger: str = "available-now"
    """``available-now`` (process what there is, then exit) or ``interval=10s``."""
    mode: Literal["scd1", "scd2"] = "scd1"
    """``scd1`` keeps the current row; ``scd2`` keeps history with validity intervals."""
    tombstone_retention_hours: float = 7 * 24
    """How long delete tombstones (key + position) are kept to stop late older events."""
    decimal_default: tuple[int, int] = (38, 18)
    """DECIMAL(p,s) for decimals whose precision the format does not send."""
    max_concurrent_tables: int = 4
    """How many tables of one micro-batch are merged at the same time."""
    freshness: float = 60.0
    """Seconds (or ``10s``, ``15m``, ``1h``) a table's changes may wait before it is
    applied: every batch makes its events durable in the changelog, and a table is
    MERGEd when its oldest pending change would pass this age by the end of the next
    batch, when its pending rows reach ``max_pending_rows``, when a DDL or TRUNCATE is
    pending, and when the run ends. ``0``: every table in every batch (no deferral).
    Fewer, bigger MERGEs: a MERGE costs about the same for 10 rows as for 10,000."""
    table_freshness: Mapping[str, float] = field(default_factory=dict)
    """Regex over ``database.table`` -> its own ``freshness`` (the first match wins), e.g.
    ``{"shop\\.orders": 10s, "archive\\..*": 15m}``."""
    max_pending_rows: int = 500_000
    """A table with this many pending changelog rows is applied whatever its freshness."""
    key_range_min_mb: float = 256.0
    """A MERGE into a table of at least this many MB (and more than one file) reads only
    the files whose key range overlaps the batch's keys: each key column is bounded by the
    batch's smallest and largest value, which Delta compares with every file's min/max
    statistics. 0: every table of more than one file. A smaller table is read whole: the
    bounds cost a job and the parsing of every file's statistics per batch, more than
    reading a small table's key column saves (``python -m anycdc.bench.key_ranges``)."""
    auto_compact: bool = True
    """Let Delta compact a table's small files right after a write that leaves many
    (``spark.databricks.delta.autoCompact.enabled`` for the run's writes)."""
    vacuum_every_hours: float = 24.0
    """VACUUM each table (target and ``_anycdc``) at most this often; 0: never."""
    vacuum_retain_hours: float | None = None
    """VACUUM keeps files a version younger than this needs (default: the table's
    ``delta.deletedFileRetentionDuration``, Delta's 7 days); below the table's own it
    shortens time travel and how far back a lagging reader can be."""
    query_name: str = "anycdc"
    """Streaming query name (also the idempotent-write application id prefix)."""
    master: str | None = None
    """Spark master of the session anycdc creates (default ``$ANYCDC_SPARK_MASTER`` or
    ``local[*]``); ignored under ``spark-submit``, which has its own ``--master``."""
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    """Spark settings for the session anycdc creates, over anycdc's defaults, e.g.
    ``spark.driver.memory: 8g`` or ``spark.hadoop.fs.s3a.endpoint``. Under ``spark-submit``
    only runtime SQL settings still apply (the rest are logged and ignored: give them to
    spark-submit's ``--conf``). Secrets among them are masked like Kafka's."""

    def __post_init__(self) -> None:
        # Delta's path identifiers (delta.`/path`) must be absolute: resolve local paths once
        for name in ("target", "checkpoint", "source_dir"):
            value = getattr(self, name)
            if value and "://" not in value and not value.startswith("/"):
                object.__setattr__(self, name, str(Path(value).resolve()))

    # ------------------------------------------------------------------ building
    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> PipelineConfig:
        """Validate a mapping (parsed YAML/TOML or flags); unknown keys are errors."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise OptionError(
                f"unknown configuration key(s) {', '.join(unknown)}; valid: {', '.join(sorted(known))}"
            )
        values: dict[str, Any] = {k: v for k, v in raw.items() if v is not None}
        for name in ("topics", "include", "exclude"):
            if name in values:
                values[name] = _as_tuple(values[name])
        if "primary_keys" in values:
            values["primary_keys"] = {
                str(t): _as_tuple(cols) for t, cols in dict(values["primary_keys"]).items()
            }
        for name in ("kafka_options", "format_options", "spark_conf", "table_properties"):
            if name in values:
                values[name] = {str(k): _text(v) for k, v in dict(values[name]).items()}
        if "freshness" in values:
            values["freshness"] = parse_duration(values["freshness"], "freshness")
        if "table_freshness" in values:
            values["table_freshness"] = _as_freshness_map(values["table_freshness"])
        if "decimal_default" in values:
            values["decimal_default"] = _as_precision(values["decimal_default"])
        if "per_topic" in values:
            values["per_topic"] = _as_topic_decodings(values["per_topic"])
        for name, value in values.items():
            _check_type(name, value, _FIELD_TYPES.get(name))
        config = cls(**values)
        config.validate()
        return config

    @classmethod
    def from_file(
        cls, path: str | Path, overrides: Mapping[str, Any] | None = None
    ) -> PipelineConfig:
        """Read a ``.yaml``/``.yml``/``.toml`` file; ``overrides`` (flags) win."""
        raw = load_config_file(path)
        for key, value in (overrides or {}).items():
            if value is None:
                continue
            if key in MAPPING_KEYS and isinstance(raw.get(key), Mapping):
                value = _merged(key, raw[key], value)
            raw[key] = value
        return cls.from_mapping(raw)

    def with_overrides(self, **changes: Any) -> PipelineConfig:
        config = replace(self, **changes)
        config.validate()
        return config

    def validate(self) -> None:
        if self.source_dir and (self.kafka_bootstrap or self.topics or self.topic_pattern):
            raise OptionError("choose one source: source_dir or kafka_bootstrap + topics")
        if self.kafka_bootstrap and not (self.topics or self.topic_pattern):
            raise OptionError("kafka_bootstrap needs topics or topic_pattern")
        if self.topics and self.topic_pattern:
            raise OptionError("use topics or topic_pattern, not both")
        if not (
            self.trigger == "available-now" or re.fullmatch(r"interval=\d+(ms|s|m)", self.trigger)
        ):
            raise OptionError(
                f"trigger must be available-now or interval=<n>s, got {self.trigger!r}"
            )
        if self.mode not in ("scd1", "scd2"):
            raise OptionError(f"mode must be scd1 or scd2, got {self.mode!r}")
        for pattern in (*self.include, *self.exclude):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise OptionError(f"invalid table regex {pattern!r}: {exc}") from None
        for key in self.table_properties:
            if not key or key.lower().startswith("anycdc."):
                raise OptionError(
                    f"table_properties: {key!r} cannot be set (anycdc.* properties are anycdc's own)"
                )
        if not isinstance(self.max_pending_rows, int) or self.max_pending_rows < 1:
            raise OptionError(
                f"max_pending_rows must be an integer >= 1, got {self.max_pending_rows!r}"
            )
        for pattern in self.table_freshness:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise OptionError(f"table_freshness: invalid regex {pattern!r}: {exc}") from None
        if self.max_concurrent_tables < 1:
            raise OptionError("max_concurrent_tables must be >= 1")
        if self.key_range_min_mb < 0:
            raise OptionError("key_range_min_mb must be >= 0")
        if self.tombstone_retention_hours < 0:
            raise OptionError("tombstone_retention_hours must be >= 0")
        if self.vacuum_every_hours < 0:
            raise OptionError("vacuum_every_hours must be >= 0 (0: never)")
        if self.vacuum_retain_hours is not None and self.vacuum_retain_hours < 0:
            raise OptionError("vacuum_retain_hours must be >= 0")
        if not isinstance(self.auto_compact, bool):
            raise OptionError(f"auto_compact must be true or false, got {self.auto_compact!r}")
        for name in ("max_offsets_per_trigger", "max_files_per_trigger"):
            cap = getattr(self, name)
            if cap is not None and cap < 1:
                raise OptionError(f"{name} must be >= 1, got {cap}")
        for key in self.spark_conf:
            if not key.startswith("spark."):
                raise OptionError(
                    f"spark_conf: {key!r} is not a Spark setting (they start with 'spark.'; "
                    "Hadoop settings go as spark.hadoop.<name>)"
                )
        if self.table_name is not None:
            self.catalog_name("db", "schema", "table")  # a bad template fails now, not mid-run
        self._check_decoding()

    def _check_decoding(self) -> None:
        """Unknown format ids and options fail here, not in a Spark task mid-run."""
        from anycdc.decoding import MessageDecoder

        routing = self.routing
        for topic, route in [(None, routing.default), *routing.per_topic.items()]:
            try:
                MessageDecoder(route.format, route.option_map)
            except AnyCdcError as exc:
                where = f"per_topic {topic!r}: " if topic is not None else ""
                raise OptionError(f"{where}{exc}") from None

    # ------------------------------------------------------------------ derived
    @property
    def checkpoint_dir(self) -> str:
        return self.checkpoint or f"{self.target.rstrip('/')}/_anycdc/checkpoint"

    @property
    def processing_interval(self) -> str | None:
        """The interval trigger in Spark's words (``interval=10s`` -> ``10 seconds``), else None."""
        match = re.fullmatch(r"interval=(\d+)(ms|s|m)", self.trigger)
        if match is None:
            return None
        unit = {"ms": "milliseconds", "s": "seconds", "m": "minutes"}[match.group(2)]
        return f"{match.group(1)} {unit}"

    @property
    def routing(self) -> SourceRouting:
        """How each source's messages are decoded (the run's format, or its topic's)."""
        routes = {}
        for topic, own in self.per_topic.items():
            format_id = own.format or self.format
            # the run's options go where they apply (as with auto); the topic's must apply
            shared = _options_for(format_id, self.format_options)
            routes[topic] = DecodeRoute(format_id, tuple({**shared, **own.options}.items()))
        default = DecodeRoute(self.format, tuple(self.format_options.items()))
        return SourceRouting(default, routes, root=self.source_dir)

    @property
    def freshness_policy(self) -> FreshnessPolicy:
        """When each table is due (:mod:`anycdc.schedule`)."""
        return FreshnessPolicy.from_config(
            self.freshness, self.table_freshness, self.max_pending_rows
        )

    @property
    def system_dir(self) -> str:
        return f"{self.target.rstrip('/')}/_anycdc"

    def table_path(self, database: str | None, schema: str | None, table: str) -> str:
        """``<target>/<database>/<schema>/<table>`` with the parts the format has.

        MySQL-like sources give ``<database>/<table>``; SharePlex (``OWNER.TABLE``)
        gives ``<schema>/<table>``; PostgreSQL via Debezium gives all three. Each part is
        a folder name by :func:`anycdc.naming.path_segment` (names are data: nothing climbs
        out of the target; a name too long for a folder is shortened with a hash).
        """
        parts = [p for p in (database, schema, table) if p]
        return "/".join([self.target.rstrip("/"), *(path_segment(p) for p in parts)])

    def catalog_name(self, database: str | None, schema: str | None, table: str) -> list[str]:
        """The catalog name parts (unquoted) for a source table, from ``table_name``.

        A part the source has not (``{database}`` of a SharePlex table) falls back to the
        other container name, then to ``default``.

        >>> PipelineConfig(target="/t", table_name="lake.{database}_{table}").catalog_name(
        ...     "shop", None, "orders")
        ['lake', 'shop_orders']
        """
        if not self.table_name:
            raise OptionError("table_name is not set")
        values = {
            "database": database or schema or "default",
            "schema": schema or database or "default",
            "table": table,
        }
        try:
            parts = [part.format(**values) for part in self.table_name.split(".")]
        except (KeyError, IndexError, ValueError) as exc:
            raise OptionError(
                f"table_name {self.table_name!r}: use {{database}}, {{schema}} and {{table}} "
                f"({type(exc).__name__}: {exc})"
            ) from None
        if not all(parts) or len(parts) > 3:
            raise OptionError(
                f"table_name {self.table_name!r} must give 1 to 3 non-empty dot-separated parts"
            )
        return parts

    def wants_table(self, qualified: str) -> bool:
        if self.include and not any(re.search(p, qualified) for p in self.include):
            return False
        return not any(re.search(p, qualified) for p in self.exclude)

    def key_override(
        self, database: str | None, table: str, schema: str | None = None
    ) -> tuple[str, ...] | None:
        """The ``primary_keys`` entry for ``[DB.][SCHEMA.]TABLE``, most specific first."""
        qualified = ".".join(p for p in (database, schema, table) if p)
        candidates = (
            qualified,
            f"{database}.{table}" if database else None,
            f"{schema}.{table}" if schema else None,
            table,
        )
        for name in candidates:
            if name and name in self.primary_keys:
                return self.primary_keys[name]
        return None

    def redacted(self) -> dict[str, Any]:
        """The configuration as a dict with every secret masked (for printing and logs):
        options named like a secret, and credentials inside URLs (``user:password@``)."""
        out = asdict(self)
        for name in ("kafka_options", "spark_conf", "format_options"):
            out[name] = redact_options(getattr(self, name))
        out["per_topic"] = {
            topic: {**asdict(own), "options": redact_options(own.options)}
            for topic, own in self.per_topic.items()
        }
        return out


def redact_options(options: Mapping[str, str]) -> dict[str, str]:
    """``options`` with secret values masked (a registry password or token, a JAAS
    config ...) and the ``user:password@`` of any URL value replaced by the mask.

    >>> redact_options({"registry_password": "s3cret", "registry_url": "http://u:p@h:8081"})
    {'registry_password': '***', 'registry_url': 'http://***@h:8081'}
    """
    from anycdc.formats.schema_source import mask_url

    return {k: MASK if is_secret(k) else mask_url(str(v), MASK) for k, v in options.items()}


_FIELD_TYPES: Final = {
    f.name: str(f.type)
    for f in fields(PipelineConfig)
    if str(f.type) in ("int", "float", "bool", "str", "int | None", "float | None", "str | None")
}
"""Scalar settings and their declared types (what :func:`_check_type` enforces)."""


def _check_type(name: str, value: Any, declared: str | None) -> None:
    """A scalar setting of the wrong type is an error naming the key, the value and the type
    (a YAML ``"4"`` for an integer must not end in a traceback mid-run).

    >>> _check_type("max_concurrent_tables", "4", "int")
    Traceback (most recent call last):
    ...
    anycdc.errors.OptionError: max_concurrent_tables: expected an integer, got '4' (a text)
    """
    if declared is None:
        return
    kinds = {part.strip() for part in declared.split("|")}
    wanted: list[tuple[str, tuple[type, ...]]] = []
    if "int" in kinds:
        wanted.append(("an integer", (int,)))
    if "float" in kinds:
        wanted.append(("a number", (int, float)))
    if "bool" in kinds:
        wanted.append(("true or false", (bool,)))
    if "str" in kinds:
        wanted.append(("a text", (str,)))
    if not wanted or (value is None and "None" in kinds):
        return
    if isinstance(value, bool) and "bool" not in kinds:
        ok = False  # YAML's yes/no is no number
    else:
        ok = any(isinstance(value, types) for _, types in wanted)
    if not ok and kinds <= {"bool", "None"}:
        raise OptionError(f"{name} must be true or false, got {value!r}")
    if not ok:
        got = {str: "a text", bool: "a boolean", int: "an integer", float: "a number"}.get(
            type(value), type(value).__name__
        )
        expected = " or ".join(label for label, _ in wanted)
        raise OptionError(f"{name}: expected {expected}, got {value!r} ({got})")


def _as_freshness_map(value: Any) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise OptionError(f"table_freshness must map table regexes to durations, got {value!r}")
    return {
        str(pattern): parse_duration(seconds, f"table_freshness {pattern!r}")
        for pattern, seconds in value.items()
    }


def _as_tuple(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    return tuple(str(v) for v in value)


def _text(value: Any) -> str:
    """A setting's value as text; YAML/TOML booleans as ``true``/``false`` (not Python's
    ``True``), the spelling Kafka, Spark and the format options take."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _options_for(format_id: str, options: Mapping[str, str]) -> dict[str, str]:
    """The ``options`` that ``format_id`` takes (all of them for ``auto``, or an unknown id:
    validation reports that)."""
    from anycdc.decoding import AUTO
    from anycdc.errors import UnknownFormatError
    from anycdc.formats import format_class

    if format_id == AUTO:
        return dict(options)
    try:
        names = {spec.name for spec in format_class(format_id).option_specs()}
    except UnknownFormatError:
        return dict(options)
    return {k: v for k, v in options.items() if k in names}


def _merged(
    key: str, from_file: Mapping[str, Any], from_flags: Mapping[str, Any]
) -> dict[str, Any]:
    """A mapping of the file with the flags' entries over it, one by one (a topic's
    options, too: ``--topic-option`` adds to the file's options of that topic)."""
    out = {**from_file, **from_flags}
    if key == "per_topic":
        for topic in set(from_file) & set(from_flags):
            mine, theirs = from_file[topic], from_flags[topic]
            if isinstance(mine, Mapping) and isinstance(theirs, Mapping):
                options = {**(mine.get("options") or {}), **(theirs.get("options") or {})}
                out[topic] = {**mine, **theirs, "options": options}
    return out


def _as_topic_decodings(value: Any) -> dict[str, TopicDecoding]:
    if not isinstance(value, Mapping):
        raise OptionError(f"per_topic must map topics to {{format, options}}, got {value!r}")
    out = {}
    for topic, entry in value.items():
        if isinstance(entry, TopicDecoding):
            out[str(topic)] = entry
            continue
        if not isinstance(entry, Mapping) or set(entry) - set(TOPIC_KEYS):
            raise OptionError(
                f"per_topic {topic!r}: expected keys {' and/or '.join(TOPIC_KEYS)}, got {entry!r}"
            )
        options = entry.get("options") or {}
        if not isinstance(options, Mapping):
            raise OptionError(f"per_topic {topic!r}: options must be a mapping, got {options!r}")
        own_format = entry.get("format")
        out[str(topic)] = TopicDecoding(
            None if own_format is None else str(own_format),
            {str(k): _text(v) for k, v in options.items()},
        )
    return out


def _as_precision(value: Any) -> tuple[int, int]:
    parts = _as_tuple(value) if isinstance(value, str) else tuple(value)
    try:
        precision, scale = (int(part) for part in parts)
    except ValueError:
        raise OptionError(f"decimal_default must be P,S (two integers), got {value!r}") from None
    if not 0 <= scale <= precision <= 38 or precision == 0:
        raise OptionError(f"decimal_default must be P,S with 0 <= S <= P <= 38, got {value!r}")
    return precision, scale


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Parse a YAML or TOML configuration file into a plain dict."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        data: Any = tomllib.loads(text)
    elif path.suffix in (".yaml", ".yml"):
        import yaml

        data = yaml.safe_load(text) or {}
    else:
        raise OptionError(f"configuration file must be .yaml, .yml or .toml: {path}")
    if not isinstance(data, dict):
        raise OptionError(f"{path}: expected a mapping at the top level")
    return dict(data)
