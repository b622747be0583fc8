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

import difflib
import json
import re
import tomllib
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Final, Literal

from anycdc.errors import AnyCdcError, ConfigError, OptionError, type_name
from anycdc.naming import COLUMN_NAMES, path_segment
from anycdc.schedule import FreshnessPolicy, TableIdent, parse_duration, qualified_name
from anycdc.source.routing import DecodeRoute, SourceRouting
from anycdc.table_settings import (
    SCHEMA_CHANGES,
    ResolvedTableSettings,
    TableSettings,
    as_text,
    as_tuple,
    pattern_rank,
    table_entries,
    winning_pattern,
)

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
TOPIC_KEYS: Final = ("format", "options")  # what a per_topic entry may set
STARTING_OFFSETS: Final = ("earliest", "latest")
"""The named ``starting_offsets``; anything else must be Spark's per-partition JSON object."""
NEAR_CUTOFF: Final = 0.6
"""How alike (difflib's ratio) an unknown key and a known one must be for the error to
suggest the known one: ``topic`` -> ``topics``, but no guess for an unrelated word."""
CONFIG_SUFFIXES: Final = (".yaml", ".yml", ".toml")
_TOML_AT: Final = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
"""tomllib (before Python 3.14) gives the place only at the end of its message."""


def did_you_mean(name: str, known: Collection[str]) -> str:
    """`` (did you mean 'x'?)`` for the known name nearest ``name``, or nothing.

    >>> did_you_mean("topic", ["topics", "target"])
    " (did you mean 'topics'?)"
    >>> did_you_mean("zzz", ["topics"])
    ''
    """
    near = difflib.get_close_matches(name, list(known), n=1, cutoff=NEAR_CUTOFF)
    return f" (did you mean {near[0]!r}?)" if near else ""


def unknown_keys_message(
    what: str, unknown: Collection[str], known: Collection[str], *, list_valid: bool = True
) -> str:
    """One line naming each unknown key with its nearest known one; the valid keys are
    listed only where no key has a near one (the list is long).

    >>> unknown_keys_message("configuration key", ["topic"], ["topics", "target"])
    "unknown configuration key 'topic' (did you mean 'topics'?)"
    """
    named = [f"{key!r}{did_you_mean(str(key), known)}" for key in sorted(unknown, key=str)]
    plural = "s" if len(named) > 1 else ""
    text = f"unknown {what}{plural} {', '.join(named)}"
    if list_valid and not any("did you mean" in part for part in named):
        text += f"; valid: {', '.join(sorted(known))}"
    return text


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


# ---------------------------------------------------------------------- declarations
Group = Literal["source", "decoding", "target", "execution", "Spark"]
GROUPS: Final[Mapping[Group, str]] = {
    "source": "source (Kafka or a folder of files)",
    "decoding": "decoding",
    "target": "target",
    "execution": "execution",
    "Spark": "Spark",
}
"""The groups of settings, in the order ``anycdc run --help`` and the README list them."""

FlagKind = Literal[
    "value",
    "list",
    "pairs",
    "off",
    "on",
    "catalog",
    "topic-format",
    "topic-option",
    "table-setting",
]
"""How a flag gives its setting: ``value`` (one value), ``list`` (repeated, collected),
``pairs`` (repeated ``K=V``, merged into the file's mapping), ``off`` (``--no-X`` sets a
true-by-default setting false), ``on`` (the flag sets a false-by-default setting true); ``catalog``, ``topic-format``, ``topic-option`` and
``table-setting`` are the flags of ``table_name``, ``per_topic`` and ``tables`` that
``anycdc run`` combines itself."""


@dataclass(frozen=True)
class Flag:
    """One command-line flag of a setting."""

    names: tuple[str, ...]
    """``("--target", "-t")``: the long name first."""
    metavar: str | None = None
    kind: FlagKind = "value"
    help: str | None = None
    """Its ``--help`` text when it is not the setting's ``doc`` (a second flag, a ``--no-X``)."""

    @property
    def dest(self) -> str:
        """The attribute of the parsed arguments (``--kafka-option`` -> ``kafka_option``)."""
        return self.names[0].removeprefix("--").replace("-", "_")


@dataclass(frozen=True)
class Setting:
    """The declaration of one configuration key: everything the flags, the checks, ``--help``
    and the README's table know about it. ``name``, ``type`` and ``default`` come from the
    :class:`PipelineConfig` field it is attached to (see :data:`SETTINGS`)."""

    group: Group
    doc: str
    """One line of Markdown: the README row and (without the backticks) the flag's help."""
    flags: tuple[Flag, ...]
    minimum: float | None = None
    """The smallest value allowed (``>=``)."""
    choices: tuple[str, ...] = ()
    regex: bool = False
    """Each item (of a list) or key (of a mapping) is a regex: it must compile."""
    parse: Callable[[Any], Any] | None = None
    """Turns a file's or a flag's value into the field's (a duration into seconds ...)."""
    shown_default: str | None = None
    """The default as the README says it, where the value alone does not say it."""
    name: str = ""
    type: str = ""
    default: Any = None

    @property
    def base_type(self) -> str:
        """``int`` of ``int | None``; ``str`` of a ``Literal`` of texts."""
        base = self.type.removesuffix(" | None")
        return "str" if base.startswith("Literal[") else base

    @property
    def optional(self) -> bool:
        return self.type.endswith(" | None")

    @property
    def default_text(self) -> str:
        """The default in the README's words (Markdown): ``—`` for none."""
        if self.shown_default is not None:
            return self.shown_default
        value = self.default
        if value is None or value == ():
            return "—"
        if isinstance(value, Mapping):
            return "{}"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        if isinstance(value, tuple):
            return ",".join(str(part) for part in value)
        return f"`{value}`" if isinstance(value, str) else str(value)

    @property
    def allowed(self) -> str:
        """The range in words, for errors: ``an integer >= 1``, ``>= 0``."""
        bound = f">= {self.minimum:g}"
        return f"an integer {bound}" if self.type == "int" else bound


def _setting(
    default: Any,
    group: Group,
    doc: str,
    flag: str,
    metavar: str | None = None,
    kind: FlagKind = "value",
    *,
    also: tuple[Flag, ...] = (),
    flag_help: str | None = None,
    **checks: Any,
) -> Any:
    """A :class:`PipelineConfig` field with its :class:`Setting` (``flag``: the flag's names,
    space-separated; ``also``: further flags; ``checks``: the other :class:`Setting` fields)."""
    declared = Setting(
        group, doc, (Flag(tuple(flag.split()), metavar, kind, flag_help), *also), **checks
    )
    metadata = {"setting": declared}
    if isinstance(default, dict):
        return field(default_factory=dict, metadata=metadata)
    return field(default=default, metadata=metadata)


def _as_freshness_map(value: Any) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise OptionError(f"table_freshness must map table regexes to durations, got {value!r}")
    return {
        str(pattern): parse_duration(seconds, f"table_freshness {pattern!r}")
        for pattern, seconds in value.items()
    }


def _as_topic_decodings(value: Any) -> dict[str, TopicDecoding]:
    if not isinstance(value, Mapping):
        raise OptionError(f"per_topic must map topics to {{format, options}}, got {value!r}")
    out = {}
    for topic, entry in value.items():
        if isinstance(entry, TopicDecoding):
            out[str(topic)] = entry
            continue
        if not isinstance(entry, Mapping):
            raise OptionError(
                f"per_topic {topic!r}: expected a mapping of {' and/or '.join(TOPIC_KEYS)}, "
                f"got {entry!r} ({type_name(entry)})"
            )
        if set(entry) - set(TOPIC_KEYS):
            raise OptionError(
                f"per_topic {topic!r}: "
                + unknown_keys_message(
                    "key", set(entry) - set(TOPIC_KEYS), TOPIC_KEYS, list_valid=False
                )
                + f"; expected keys {' and/or '.join(TOPIC_KEYS)}"
            )
        options = entry.get("options") or {}
        if not isinstance(options, Mapping):
            raise OptionError(f"per_topic {topic!r}: options must be a mapping, got {options!r}")
        own_format = entry.get("format")
        out[str(topic)] = TopicDecoding(
            None if own_format is None else str(own_format),
            {str(k): as_text(v) for k, v in options.items()},
        )
    return out


def _as_precision(value: Any) -> tuple[int, int]:
    try:
        parts = as_tuple(value) if isinstance(value, str) else tuple(value)
        precision, scale = (int(part) for part in parts)
    except (TypeError, ValueError):
        raise OptionError(f"decimal_default must be P,S (two integers), got {value!r}") from None
    if not 0 <= scale <= precision <= 38 or precision == 0:
        raise OptionError(f"decimal_default must be P,S with 0 <= S <= P <= 38, got {value!r}")
    return precision, scale


@dataclass(frozen=True)
class PipelineConfig:
    """Everything ``anycdc run`` needs. Paths are strings so Spark can take URIs too.

    Each field is declared once, with its :class:`Setting`: its flag, its checks, its line
    of ``anycdc run --help`` and its row of the README (``anycdc dev config-table``)."""

    target: str = _setting(
        "var/target", "target",
        "folder of the Delta tables (`<target>/<database>/<table>`) and of anycdc's `_anycdc/`",
        "--target -t", "DIR",
    )  # fmt: skip
    source_dir: str | None = _setting(
        None, "source",
        "folder of message files (`.jsonl`, `.json`, `.avro`), read instead of Kafka; a "
        "file's topic is the first folder under it that it is in",
        "--source-dir", "DIR",
    )  # fmt: skip
    kafka_bootstrap: str | None = _setting(
        None, "source", "Kafka bootstrap servers, `HOST:PORT[,HOST:PORT]`",
        "--kafka-bootstrap", "HOST:PORT",
    )  # fmt: skip
    topics: tuple[str, ...] = _setting(
        (), "source", "Kafka topics to read (or `topic_pattern`)",
        "--topics", "A,B",
    )  # fmt: skip
    topic_pattern: str | None = _setting(
        None, "source", "a Java regex: subscribe to the Kafka topics it matches",
        "--topic-pattern", "RE",
    )  # fmt: skip
    kafka_options: Mapping[str, str] = _setting(
        {}, "source",
        "passed to Spark's Kafka source as-is (`kafka.security.protocol`, "
        "`kafka.sasl.jaas.config`, ...); secrets are masked in every printout",
        "--kafka-option", "K=V", "pairs",
    )  # fmt: skip
    starting_offsets: str = _setting(
        "earliest", "source",
        "`earliest`, `latest` or Spark's per-partition JSON; only for a new checkpoint",
        "--starting-offsets", "OFFSETS",
    )  # fmt: skip
    max_offsets_per_trigger: int | None = _setting(
        None, "source", "cap on the Kafka messages of one micro-batch",
        "--max-offsets-per-trigger", "N", minimum=1,
    )  # fmt: skip
    max_files_per_trigger: int | None = _setting(
        None, "source", "cap on the files of one micro-batch (`source_dir`)",
        "--max-files-per-trigger", "N", minimum=1,
    )  # fmt: skip
    format: str = _setting(
        "auto", "decoding",
        "a format id (`anycdc formats`), or `auto` to detect every message's format "
        "(detection costs more than decoding: name the format of a topic that carries one; "
        "a run's first batches log which detected topics carried one format only)",
        "--format -f", "ID",
    )  # fmt: skip
    format_options: Mapping[str, str] = _setting(
        {}, "decoding",
        "the decoder's options (`legacy=true`, `primary_key=id`, `timezone=Asia/Shanghai`, "
        "...; `anycdc formats --options` lists them), as in `decode`",
        "--option -o", "K=V", "pairs",
    )  # fmt: skip
    per_topic: Mapping[str, TopicDecoding] = _setting(
        {}, "decoding",
        "`TOPIC: {format: ID, options: {K: V}}`: a topic's own format, and options over the "
        "run's, for a run reading topics of several tasks (below; a `source_dir`'s topics "
        "are its first-level folders)",
        "--topic-format", "TOPIC=ID", "topic-format",
        flag_help="a topic's own format (a folder's, under --source-dir), repeatable",
        also=(
            Flag(("--topic-option",), "TOPIC:K=V", "topic-option",
                 "a topic's own format option, over the --option ones, repeatable "
                 "(e.g. dts_2021:legacy=true)"),
        ),
        parse=_as_topic_decodings,
    )  # fmt: skip
    table_name: str | None = _setting(
        None, "target",
        "also register every table in the Spark catalog under this template (`{database}`, "
        "`{schema}`, `{table}`; dots separate catalog.database.table, e.g. "
        "`lake.{database}_{table}`) as an external Delta table at its target path, so users "
        "of a cluster's metastore query it by name",
        "--table-name", "TEMPLATE",
        also=(
            Flag(("--catalog",), None, "catalog",
                 "the same with the template {database}.{table}"),
        ),
        shown_default="— (`--catalog`: `{database}.{table}`)",
    )  # fmt: skip
    table_properties: Mapping[str, str] = _setting(
        {}, "target",
        "Delta table properties of every target table (`delta.enableChangeDataFeed: true` "
        "for readers of the tables' own changes, `delta.enableDeletionVectors`, "
        "`delta.logRetentionDuration`, ...): set at creation, and on an existing table "
        "before the batch's writes when one differs (compared without case, so not once per "
        "batch); a property removed here stays on the tables; `anycdc.*` are anycdc's own",
        "--table-property", "K=V", "pairs",
    )  # fmt: skip
    column_names: Literal["exact", "portable"] = _setting(
        "exact", "target",
        "how the columns of a new table (or new to a table) are named: `exact` (the source's "
        "names; a name Delta rejects turns on column mapping, which some readers cannot read) "
        "or `portable` (a name with other than ASCII letters, digits and `_` renamed, e.g. "
        "`Order_Date__eda3f545`, its source name in the column's comment: every reader reads "
        "the table); a column keeps its name (see Reading the tables)",
        "--column-names", choices=COLUMN_NAMES,
    )  # fmt: skip
    include: tuple[str, ...] = _setting(
        (), "target",
        "regexes over `database.table`: only the tables matching one are applied (default: all)",
        "--include", "RE", "list", regex=True,
    )  # fmt: skip
    exclude: tuple[str, ...] = _setting(
        (), "target", "regexes over `database.table`: the tables matching one are skipped",
        "--exclude", "RE", "list", regex=True,
    )  # fmt: skip
    schema_changes: Literal["evolve", "lenient", "ignore", "fail"] = _setting(
        "lenient", "target",
        "what a source's schema change does to its table (see Semantics, Schema changes): "
        "`lenient` adds new columns and widens types, never drops a column, and a rename "
        "adds the new name; `evolve` also renames and drops columns (Delta column mapping: "
        "metadata only, history kept) and rewrites a column whose type narrows; `ignore` "
        "keeps the table's first schema (new columns are not written); `fail` dead-letters "
        "the table's events with the change named, and the other tables go on",
        "--schema-changes", choices=SCHEMA_CHANGES,
    )  # fmt: skip
    primary_keys: Mapping[str, tuple[str, ...]] = _setting(
        {}, "target",
        "`[DB.]TABLE: [COL, ...]`: these tables' key columns, over the key their messages "
        "name (for messages that name none, or the wrong one)",
        "--primary-key", "[DB.]TABLE=COL[,COL]", "pairs",
    )  # fmt: skip
    tables: Mapping[str, TableSettings] = _setting(
        {}, "target",
        "`PATTERN: {KEY: VALUE}`: settings of the tables a pattern over `database.schema.table` "
        "matches (a glob, or a regex written `re:...`), over the run-wide ones; the most "
        "specific pattern wins (see Per-table settings)",
        "--table-setting", "PATTERN:KEY=VALUE", "table-setting",
        flag_help="a tables: entry's key (e.g. 'shop.orders:mode=scd2', "
        "'shop.*:exclude_columns=ssn,email'), repeatable",
        parse=table_entries,
    )  # fmt: skip
    checkpoint: str | None = _setting(
        None, "execution", "the streaming checkpoint's folder", "--checkpoint", "DIR",
        shown_default="`<target>/_anycdc/checkpoint`",
    )  # fmt: skip
    trigger: str = _setting(
        "available-now", "execution",
        "`available-now` (process what there is, then exit) or `interval=10s` (`500ms`, `2m`)",
        "--trigger", "TRIGGER",
    )  # fmt: skip
    mode: Literal["scd1", "scd2"] = _setting(
        "scd1", "execution",
        "`scd1`: one current row per key; `scd2`: every version of a row, with "
        "`_cdc_valid_from`, `_cdc_valid_to` (NULL while current) and `_cdc_is_current` "
        "(see Semantics)",
        "--mode", choices=("scd1", "scd2"),
    )  # fmt: skip
    tombstone_retention_hours: float = _setting(
        7 * 24, "execution",
        "how long deleted keys (key + position) are remembered, to stop late older events",
        "--tombstone-retention-hours", "H", minimum=0,
    )  # fmt: skip
    decimal_default: tuple[int, int] = _setting(
        (38, 18), "decoding", "DECIMAL(P,S) for decimals whose precision the format does not send",
        "--decimal-default", "P,S", parse=_as_precision,
    )  # fmt: skip
    apply_engine: Literal["batched", "merge"] = _setting(
        "batched", "execution",
        "how a table's changes are written: `merge` (one MERGE: ~11 Spark jobs a table, the "
        "reference) or `batched` (its rows rewritten by one Spark job and committed through "
        "Delta's own transaction: ~3 jobs a table; see The apply engine)",
        "--apply-engine", choices=("batched", "merge"),
    )  # fmt: skip
    """scd2 tables, and tables over ``rewrite_max_mb``, take the MERGE under either engine."""
    ingest_engine: Literal["single-pass", "cached"] = _setting(
        "single-pass", "execution",
        "how a micro-batch is made durable: `single-pass` (decoded and appended to the "
        "changelog by one Spark job, counted by the decode tasks) or `cached` (decoded into a "
        "cached copy that Spark aggregates count and plan before the append: the reference)",
        "--ingest-engine", choices=("single-pass", "cached"),
    )  # fmt: skip
    rewrite_max_mb: float = _setting(
        64.0, "execution",
        "the `batched` engine rewrites a table up to this size whole in each apply (which "
        "also compacts it); a bigger one is merged",
        "--rewrite-max-mb", "MB", minimum=0,
    )  # fmt: skip
    max_concurrent_tables: int = _setting(
        4, "execution", "tables merged at the same time in one micro-batch",
        "--max-concurrent-tables", "N", minimum=1,
    )  # fmt: skip
    freshness: float = _setting(
        60.0, "execution",
        "seconds (or `10s`, `15m`, `1h`) a table's changes may wait before its MERGE (they "
        "are durable in the changelog meanwhile); `0`: every table in every batch",
        "--freshness", "DURATION", minimum=0, parse=parse_duration,
    )  # fmt: skip
    """A table is MERGEd when its oldest pending change would pass this age by the end of
    the next batch, when its pending rows reach ``max_pending_rows``, when a DDL or TRUNCATE
    is pending, and when the run ends. Fewer, bigger MERGEs: a MERGE costs about the same
    for 10 rows as for 10,000."""
    table_freshness: Mapping[str, float] = _setting(
        {}, "execution",
        "`REGEX: DURATION` over `database.table`, a table's own `freshness`; the first match "
        "wins (`shop\\.orders: 10s`, `archive\\..*: 15m`)",
        "--table-freshness", "RE=DURATION", "pairs", regex=True, parse=_as_freshness_map,
    )  # fmt: skip
    apply_beside_ingest: bool = _setting(
        False, "execution",
        "apply the due tables on a thread of their own while the next micro-batch ingests "
        "(a run whose every freshness is above 0) instead of inside the micro-batch, which "
        "waits for them: the changelog is fresher, the tables are not, unless the driver has "
        "cores the executors do not use",
        "--apply-beside-ingest", None, "on",
        flag_help="apply the due tables beside the next micro-batch's ingest",
    )  # fmt: skip
    """Off by default: on 2 cores (driver and executors on the same cores) both sides are
    CPU-bound, so the overlap adds no throughput; a round beside a batch took as long as the
    two in turn, and the tables' staleness rose (docs/BENCHMARKS.md). Where the driver runs
    on cores of its own (a cluster), its share of an apply (plans, Delta's commit per table)
    can overlap the executors' decoding. Exactly once holds as it does between batches: an
    apply covers ingest batches already in the changelog, its tables' writes carry the batch
    it covers, and a restart applies what the ledger does not show applied. ``freshness 0``
    keeps its meaning (every table in the batch that ingests it), so such a run applies in
    the batch."""
    max_pending_rows: int = _setting(
        500_000, "execution",
        "a table with this many pending changes is applied whatever its freshness",
        "--max-pending-rows", "N", minimum=1,
    )  # fmt: skip
    catch_up_batches: float = _setting(
        2, "execution",
        "while the stream is more than this many micro-batches behind its Kafka topics (a "
        "backlog), tables wait for their size cap, DDL, TRUNCATE or the catch-up instead of "
        "their freshness; 0: off",
        "--catch-up-batches", "N", minimum=0,
    )  # fmt: skip
    """A backlog's applies cost a table's apply per freshness period while the backlog
    lasts, for rows that are already old; deferring them applies each table once, when the
    stream has caught up (or its pending rows reach ``max_pending_rows``). Readers see the
    tables as of before the backlog meanwhile; ``status`` shows them pending."""
    key_range_min_mb: float = _setting(
        256.0, "execution",
        "a MERGE into a table this big (and of more than one file) reads only the files "
        "whose key range overlaps the batch's keys (see Semantics); 0: every table",
        "--key-range-min-mb", "MB", minimum=0,
    )  # fmt: skip
    """Each key column is bounded by the batch's smallest and largest value, which Delta
    compares with every file's min/max statistics. A smaller table is read whole: the
    bounds cost a job and the parsing of every file's statistics per batch, more than
    reading a small table's key column saves (``python -m anycdc.bench.key_ranges``)."""
    auto_compact: bool = _setting(
        True, "execution",
        "Delta compacts a table's small files right after a write that leaves many "
        "(`spark.databricks.delta.autoCompact.enabled` for the run's writes)",
        "--no-auto-compact", None, "off",
        flag_help="do not let Delta compact small files after the run's writes",
    )  # fmt: skip
    vacuum_every_hours: float = _setting(
        24.0, "execution",
        "VACUUM each table (targets and `_anycdc`) at most this often; 0: never",
        "--vacuum-every-hours", "H", minimum=0,
    )  # fmt: skip
    hold_open_transactions: int = _setting(
        100, "execution",
        "a read of a cut leaves out a source transaction whose BEGIN is in the changelog "
        "and whose COMMIT is not (or not all the rows its COMMIT counts), for up to this "
        "many batches after its BEGIN; `0`: never",
        "--hold-open-transactions", "BATCHES", minimum=0,
    )  # fmt: skip
    vacuum_retain_hours: float | None = _setting(
        None, "execution",
        "how long VACUUM keeps files no current version needs; below the table's own it "
        "shortens time travel and how far back a lagging reader can be",
        "--vacuum-retain-hours", "H", minimum=0,
        shown_default="the table's `delta.deletedFileRetentionDuration` (7 days)",
    )  # fmt: skip
    query_name: str = _setting(
        "anycdc", "execution",
        "streaming query name, and the Delta idempotent-write app id: one per checkpoint",
        "--query-name", "NAME",
    )  # fmt: skip
    metrics_port: int | None = _setting(
        None, "execution",
        "serve the run's metrics in the Prometheus text format on this port of the driver "
        "(`http://<metrics_address>:<port>/metrics`; see Metrics); off when not set",
        "--metrics-port", "PORT", minimum=1, shown_default="— (off)",
    )  # fmt: skip
    metrics_address: str = _setting(
        "127.0.0.1", "execution",
        "the address the metrics server binds: `127.0.0.1` (this machine only), or `0.0.0.0` "
        "for a Prometheus on another host or in another container",
        "--metrics-address", "ADDR",
    )  # fmt: skip
    metrics_max_tables: int = _setting(
        1000, "execution",
        "tables labelled one by one in the metrics (the first seen); the others are summed "
        "under `table=\"_other\"`, so the number of series stays bounded",
        "--metrics-max-tables", "N", minimum=0,
    )  # fmt: skip
    master: str | None = _setting(
        None, "Spark",
        "Spark master of the session anycdc starts (under spark-submit: spark-submit's own "
        "`--master`)",
        "--master", "URL", shown_default="`$ANYCDC_SPARK_MASTER` or `local[*]`",
    )  # fmt: skip
    spark_conf: Mapping[str, str] = _setting(
        {}, "Spark",
        "Spark settings for that session, over anycdc's defaults (`spark.driver.memory: 8g`, "
        "`spark.hadoop.fs.s3a.endpoint: ...`); under spark-submit only runtime SQL settings "
        "still apply (give the rest to its `--conf`); secrets are masked",
        "--spark-conf", "K=V", "pairs",
    )  # fmt: skip

    def __post_init__(self) -> None:
        # Delta's path identifiers (delta.`/path`) must be absolute: resolve local paths once
        for name in ("target", "checkpoint", "source_dir"):
            value = getattr(self, name)
            if value and "://" not in value and not value.startswith("/"):
                object.__setattr__(self, name, str(Path(value).resolve()))

    # ------------------------------------------------------------------ building
    @classmethod
    def from_mapping(
        cls,
        raw: Mapping[str, Any],
        *,
        source: str | None = None,
        from_flags: Collection[str] = (),
    ) -> PipelineConfig:
        """Validate a mapping (parsed YAML/TOML or flags); unknown keys are errors.

        ``source`` is the file the mapping was read from: an error about one of its keys
        (not one of ``from_flags``, the keys the flags set) or about the whole
        configuration starts with it, and is a :class:`~anycdc.errors.ConfigError`.

        >>> PipelineConfig.from_mapping({"topic": ["a"]}, source="p.yaml")
        Traceback (most recent call last):
        ...
        anycdc.errors.ConfigError: p.yaml: unknown configuration key 'topic' (did you mean 'topics'?)
        """
        with _named(source):
            unknown = set(raw) - set(SETTINGS)
            if unknown:
                raise OptionError(unknown_keys_message("configuration key", unknown, SETTINGS))
        values = {}
        for key, value in raw.items():
            if value is None:
                continue
            with _named(None if key in from_flags else source, key, value):
                values[key] = _normalized(SETTINGS[key], value)
                check_setting(SETTINGS[key], values[key])  # before __post_init__ takes a path
        with _named(source):
            config = cls(**values)
            config.validate()
        return config

    @classmethod
    def from_file(
        cls, path: str | Path, overrides: Mapping[str, Any] | None = None
    ) -> PipelineConfig:
        """Read a ``.yaml``/``.yml``/``.toml`` file; ``overrides`` (flags) win. Errors
        about the file's keys name the file (:meth:`from_mapping`)."""
        raw = load_config_file(path)
        given = set()
        for key, value in (overrides or {}).items():
            if value is None:
                continue
            if key in MAPPING_KEYS and isinstance(raw.get(key), Mapping):
                value = _merged(key, raw[key], value)
            else:
                given.add(key)  # a merged mapping holds the file's entries: the file is named
            raw[key] = value
        return cls.from_mapping(raw, source=str(path), from_flags=given)

    def with_overrides(self, **changes: Any) -> PipelineConfig:
        config = replace(self, **changes)
        config.validate()
        return config

    def validate(self) -> None:
        """Each setting's type and constraint (from its :class:`Setting`), then the rules
        across settings."""
        for declared in SETTINGS.values():
            check_setting(declared, getattr(self, declared.name))
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
        for key in self.table_properties:
            if not key or key.lower().startswith("anycdc."):
                raise OptionError(
                    f"table_properties: {key!r} cannot be set (anycdc.* properties are anycdc's own)"
                )
        for key in self.spark_conf:
            if not key.startswith("spark."):
                raise OptionError(
                    f"spark_conf: {key!r} is not a Spark setting (they start with 'spark.'; "
                    "Hadoop settings go as spark.hadoop.<name>)"
                )
        if self.starting_offsets not in STARTING_OFFSETS and not _is_offsets_json(
            self.starting_offsets
        ):
            raise OptionError(
                f"starting_offsets must be {' or '.join(STARTING_OFFSETS)} or Spark's "
                f'per-partition JSON (e.g. {{"topic": {{"0": 42}}}}), got {self.starting_offsets!r}'
            )
        if self.metrics_port is not None and self.metrics_port > 65535:
            raise OptionError(f"metrics_port must be a TCP port (1-65535), got {self.metrics_port}")
        if self.table_name is not None:
            self.catalog_name("db", "schema", "table")  # a bad template fails now, not mid-run
        self._check_decoding()

    def _check_decoding(self) -> None:
        """Unknown format ids and options fail here, not in a Spark task mid-run."""
        from anycdc.decoding import MessageDecoder

        routing = self.routing
        for topic, route in [(None, routing.default), *routing.per_topic.items()]:
            try:
                check_name_options(route.option_map)
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
        """When each table is due (:mod:`anycdc.schedule`): a ``tables:`` entry's
        ``freshness`` first, then ``table_freshness``, then ``freshness``."""
        return FreshnessPolicy.from_config(
            self.freshness,
            self.table_freshness,
            self.max_pending_rows,
            own=self._own_freshness if self.tables else None,
            own_targets=tuple(t.freshness for t in self.tables.values() if t.freshness is not None),
        )

    @property
    def applies_beside_ingest(self) -> bool:
        """Due tables are applied beside the next batch's ingest (``apply_beside_ingest``)
        unless a table has ``freshness 0``, whose meaning is "in the batch that ingests it".

        >>> PipelineConfig(target="t", apply_beside_ingest=True).applies_beside_ingest
        True
        >>> config = PipelineConfig(target="t", apply_beside_ingest=True, freshness=0)
        >>> config.applies_beside_ingest, PipelineConfig(target="t").applies_beside_ingest
        (False, False)
        """
        return self.apply_beside_ingest and all(t > 0 for t in self.freshness_policy.targets)

    def _own_freshness(self, qualified: str) -> float | None:
        pattern = self.table_pattern(qualified)
        return self.tables[pattern].freshness if pattern is not None else None

    def table_pattern(self, qualified: str) -> str | None:
        """The ``tables:`` entry that applies to ``qualified`` (``db.schema.table`` with the
        parts the source has): the most specific pattern that matches it
        (:func:`pattern_rank`; equal ranks: the first in the file), or None.

        >>> cfg = PipelineConfig(tables={"shop.*": TableSettings(mode="scd2"),
        ...     "shop.orders": TableSettings(freshness=5.0), "re:audit$": TableSettings()})
        >>> cfg.table_pattern("shop.orders"), cfg.table_pattern("shop.items")
        ('shop.orders', 'shop.*')
        >>> cfg.table_pattern("shop.audit"), cfg.table_pattern("crm.audit"), cfg.table_pattern("crm.x")
        ('shop.*', 're:audit$', None)
        """
        return winning_pattern(tuple(self.tables), qualified) if self.tables else None

    def table_settings(self, table: str | TableIdent) -> ResolvedTableSettings:
        """What the table ``qualified`` gets: its ``tables:`` entry (:meth:`table_pattern`)
        over the run-wide settings (``mode``, ``primary_keys``, ``freshness`` and
        ``table_freshness``, ``table_properties``); only the winning entry counts.

        >>> cfg = PipelineConfig(mode="scd1", table_properties={"a": "1"},
        ...     tables={"shop.*": TableSettings(mode="scd2", table_properties={"b": "2"})})
        >>> got = cfg.table_settings("shop.orders")
        >>> got.pattern, got.mode, dict(got.table_properties), got.freshness
        ('shop.*', 'scd2', {'a': '1', 'b': '2'}, 60.0)
        >>> cfg.table_settings("crm.users").mode
        'scd1'
        """
        if isinstance(table, str):
            qualified = table
            parts = table.split(".")
            database = parts[0] if len(parts) > 1 else None
            schema = ".".join(parts[1:-1]) or None
            name = parts[-1]
        else:
            qualified = qualified_name(table)
            database, schema, name = table
        pattern = self.table_pattern(qualified)
        own = self.tables[pattern] if pattern is not None else TableSettings()
        return ResolvedTableSettings(
            pattern=pattern,
            mode=own.mode or self.mode,
            primary_key=own.primary_key or self.key_override(database, name, schema),
            freshness=(
                own.freshness
                if own.freshness is not None
                else FreshnessPolicy.from_config(
                    self.freshness, self.table_freshness, self.max_pending_rows
                ).target_s(qualified)
            ),
            table_properties={**self.table_properties, **(own.table_properties or {})},
            cluster_by=own.cluster_by or (),
            partition_by=own.partition_by or (),
            exclude_columns=own.exclude_columns or (),
            mask_columns=dict(own.mask_columns or {}),
            schema_changes=own.schema_changes or self.schema_changes,
            column_names=own.column_names or self.column_names,
        )

    def resolved_tables(self) -> dict[str, dict[str, Any]]:
        """The ``tables:`` rules as ``--print-config`` shows them: most specific first (the
        order they are tried in), each with how its pattern matches and every setting it
        gives, the run-wide ones it keeps included (``primary_key`` and ``freshness`` not
        set by the entry depend on the table: ``primary_keys``, ``table_freshness``)."""
        ordered = sorted(
            enumerate(self.tables.items()), key=lambda item: (pattern_rank(item[1][0]), item[0])
        )
        out = {}
        for _, (pattern, own) in ordered:
            kind = ("exact name", "glob", "regex")[pattern_rank(pattern)[0]]
            out[pattern] = {
                "matches": kind,
                "mode": own.mode or self.mode,
                "primary_key": list(own.primary_key) if own.primary_key else "(the run's)",
                "freshness": own.freshness if own.freshness is not None else "(the run's)",
                "table_properties": {**self.table_properties, **(own.table_properties or {})},
                "cluster_by": list(own.cluster_by or ()),
                "partition_by": list(own.partition_by or ()),
                "exclude_columns": list(own.exclude_columns or ()),
                "mask_columns": dict(own.mask_columns or {}),
            }
        return out

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
        out["tables"] = self.resolved_tables()
        return out


@contextmanager
def _named(source: str | None, key: str | None = None, value: Any = None) -> Iterator[None]:
    """Errors raised inside name ``source`` (a configuration file) first, as a
    :class:`~anycdc.errors.ConfigError`. Inside the parsing of ``key``'s ``value`` (user
    data of any shape), a parser refusing it with a ``TypeError`` (a number where a list
    goes) is an error naming the key too, not a traceback."""
    prefix = f"{source}: " if source else ""
    try:
        yield
    except ConfigError:
        raise
    except OptionError as exc:
        if source is None:
            raise
        raise ConfigError(f"{prefix}{exc}") from None
    except (TypeError, AttributeError) as exc:
        if key is None:
            raise  # not the value's shape: a bug, for main() to report as one
        error = ConfigError if source else OptionError
        raise error(
            f"{prefix}{key}: invalid value {value!r} ({type(exc).__name__}: {exc})"
        ) from None


def _is_offsets_json(text: str) -> bool:
    """Spark's per-partition ``startingOffsets``: a JSON object of topics."""
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def redact_options(options: Mapping[str, str]) -> dict[str, str]:
    """``options`` with secret values masked (a registry password or token, a JAAS
    config ...) and the ``user:password@`` of any URL value replaced by the mask.

    >>> redact_options({"registry_password": "s3cret", "registry_url": "http://u:p@h:8081"})
    {'registry_password': '***', 'registry_url': 'http://***@h:8081'}
    """
    from anycdc.formats.schema_source import mask_url

    return {k: MASK if is_secret(k) else mask_url(str(v), MASK) for k, v in options.items()}


SETTINGS: Final[Mapping[str, Setting]] = {
    f.name: replace(
        f.metadata["setting"],
        name=f.name,
        type=str(f.type),
        default=f.default_factory() if callable(f.default_factory) else f.default,
    )
    for f in fields(PipelineConfig)
}
"""Every configuration key's declaration, by name, in the order of the fields."""
MAPPING_KEYS: Final = tuple(name for name, s in SETTINGS.items() if s.type.startswith("Mapping["))
"""The settings that map names to values: a flag's entries are merged into the file's."""
_SCALARS: Final = ("int", "float", "bool", "str")


def _normalized(declared: Setting, value: Any) -> Any:
    """A file's or a flag's value as the field takes it: by the setting's own ``parse``, or
    by its type (a list from ``"a,b"``, a mapping's values as texts)."""
    if declared.parse is not None:
        return declared.parse(value)
    if declared.type == "tuple[str, ...]":
        return _names(declared.name, value)
    if declared.type.startswith("Mapping["):
        if not isinstance(value, Mapping):
            raise OptionError(
                f"{declared.name}: expected a mapping, got {value!r} ({type_name(value)})"
            )
        if declared.type == "Mapping[str, tuple[str, ...]]":
            return {str(k): _names(f"{declared.name} {k!r}", v) for k, v in value.items()}
        return {str(k): _text(f"{declared.name} {k!r}", v) for k, v in value.items()}
    return value


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _names(where: str, value: Any) -> tuple[str, ...]:
    """A list setting's value (a comma-separated text or a list of names), or an error
    naming ``where`` (``topics: 5`` would otherwise end in "int is not iterable").

    >>> _names("topics", "a, b")
    ('a', 'b')
    >>> _names("primary_keys 'shop.orders'", 5)
    Traceback (most recent call last):
    ...
    anycdc.errors.OptionError: primary_keys 'shop.orders': expected a list of names or a comma-separated text, got 5 (integer)
    """
    if isinstance(value, str) or (
        isinstance(value, (list, tuple)) and all(_is_scalar(item) for item in value)
    ):
        return as_tuple(value)
    raise OptionError(
        f"{where}: expected a list of names or a comma-separated text, "
        f"got {value!r} ({type_name(value)})"
    )


def _text(where: str, value: Any) -> str:
    """A mapping's value as text (a YAML boolean as ``true``); a list or a mapping there
    is an error naming ``where``, not its Python spelling passed on to Spark."""
    if isinstance(value, (str, int, float)):
        return as_text(value)
    raise OptionError(f"{where}: expected a text, got {value!r} ({type_name(value)})")


def check_setting(declared: Setting, value: Any) -> None:
    """``value`` of the setting ``declared`` has its type and meets its constraint, or an
    error names the key, the value and what is allowed.

    >>> check_setting(SETTINGS["max_concurrent_tables"], 0)
    Traceback (most recent call last):
    ...
    anycdc.errors.OptionError: max_concurrent_tables must be an integer >= 1, got 0
    >>> check_setting(SETTINGS["mode"], "scd3")
    Traceback (most recent call last):
    ...
    anycdc.errors.OptionError: mode must be scd1 or scd2, got 'scd3'
    """
    name = declared.name
    if declared.base_type in _SCALARS:
        _check_type(name, value, declared.base_type + (" | None" if declared.optional else ""))
    if value is None:
        return
    if declared.minimum is not None and value < declared.minimum:
        raise OptionError(f"{name} must be {declared.allowed}, got {value!r}")
    if declared.choices and value not in declared.choices:
        raise OptionError(f"{name} must be {' or '.join(declared.choices)}, got {value!r}")
    if declared.regex:
        for pattern in value:  # a list's items, a mapping's keys
            try:
                re.compile(pattern)
            except re.error as exc:
                raise OptionError(f"{name}: invalid regex {pattern!r}: {exc}") from None


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


def check_name_options(options: Mapping[str, str], what: str = "format_options") -> None:
    """An option of names (``primary_key``: any format's option of kind names) given empty
    is an error: ``primary_key=`` would otherwise silently mean "no key configured".

    >>> check_name_options({"primary_key": ","}, "--option")
    Traceback (most recent call last):
    ...
    anycdc.errors.OptionError: --option primary_key=',' names no column: give NAME[,NAME]
    """
    from anycdc.formats import format_class, format_ids
    from anycdc.formats.options import KIND_NAMES, parse_names

    names = {
        spec.name
        for fid in format_ids()
        for spec in format_class(fid).option_specs()
        if spec.kind == KIND_NAMES
    }
    for key, value in options.items():
        if key in names:
            try:
                parse_names(value)  # the options' own rule, said here before any work
            except ValueError:
                raise OptionError(
                    f"{what} {key}={value!r} names no column: give NAME[,NAME]"
                ) from None


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
    if key == "tables":
        for pattern in set(from_file) & set(from_flags):
            mine, theirs = from_file[pattern], from_flags[pattern]
            if isinstance(mine, Mapping) and isinstance(theirs, Mapping):
                out[pattern] = {**mine, **theirs}
    if key == "per_topic":
        for topic in set(from_file) & set(from_flags):
            mine, theirs = from_file[topic], from_flags[topic]
            if isinstance(mine, Mapping) and isinstance(theirs, Mapping):
                options = {**(mine.get("options") or {}), **(theirs.get("options") or {})}
                out[topic] = {**mine, **theirs, "options": options}
    return out


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Parse a YAML or TOML configuration file into a plain dict. Every problem is a
    :class:`~anycdc.errors.ConfigError` naming the file (and, for a syntax error, the
    line and column: ``pipeline.yaml:3:7: YAML syntax error: ...``)."""
    path = Path(path)
    if path.suffix not in CONFIG_SUFFIXES:
        raise ConfigError(
            f"{path}: a configuration file's name ends in {', '.join(CONFIG_SUFFIXES)}"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, not a configuration file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    data = _parse_toml(path, text) if path.suffix == ".toml" else _parse_yaml(path, text)
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: expected a mapping of settings at the top level, got {type_name(data)}"
        )
    return dict(data)


def _parse_toml(path: Path, text: str) -> Any:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        at = _TOML_AT.search(message)
        place = f":{at.group(1)}:{at.group(2)}" if at else ""
        reason = message[: at.start()] if at else message
        raise ConfigError(f"{path}{place}: TOML syntax error: {reason}") from None


def _parse_yaml(path: Path, text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # yaml counts lines and columns from 0; editors and this message from 1
        place = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        raise ConfigError(
            f"{path}{place}: YAML syntax error: {reason}" + (f" ({context})" if context else "")
        ) from None
