"""``anycdc run``: apply CDC messages from Kafka or files to Delta tables."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any, Final, TextIO

from anycdc.cli.base import Command, fail, parse_key_values
from anycdc.config import GROUPS, SETTINGS, Flag, PipelineConfig, Setting
from anycdc.errors import AnyCdcError, OptionError, RunFailed
from anycdc.table_settings import table_setting_flags

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from rich.console import Console

    from anycdc.spark.pipeline import BatchMetrics, Pipeline

LOG_FORMAT: Final = "%(asctime)s %(name)s %(message)s"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of every setting (:data:`anycdc.config.SETTINGS`), group by group."""
    parser.add_argument("--config", "-c", metavar="FILE", help="YAML or TOML configuration file")
    groups = {group: parser.add_argument_group(title) for group, title in GROUPS.items()}
    for declared in SETTINGS.values():
        for flag in declared.flags:
            _add_flag(groups[declared.group], declared, flag)
    groups["execution"].add_argument(
        "--print-config",
        action="store_true",
        help="print the configuration (secrets masked) and exit",
    )
    groups["execution"].add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar, even on a terminal: one log line per batch, as in CI and "
        "logs (the bar is only ever shown when stderr is a terminal)",
    )


def _add_flag(group: argparse._ActionsContainer, declared: Setting, flag: Flag) -> None:
    """One flag of a setting: its help is the setting's doc (plain text) and its default."""
    text = flag.help or declared.doc.replace("`", "")
    if flag.kind in ("list", "pairs"):
        text += "; repeatable"
    if flag.help is None and not declared.default_text.startswith(("—", "{}")):
        text += f" (default: {declared.default_text.replace('`', '')})"
    options: dict[str, Any] = {"help": text.replace("%", "%%")}
    if flag.kind == "off":
        options.update(dest=declared.name, action="store_false", default=None)
    elif flag.kind == "on":
        options.update(dest=declared.name, action="store_true", default=None)
    elif flag.kind == "catalog":
        options.update(action="store_true")
    elif declared.choices:
        options.update(choices=declared.choices)
    else:
        options.update(metavar=flag.metavar)
    if flag.kind == "value" and declared.parse is None and declared.base_type in ("int", "float"):
        options.update(type=int if declared.base_type == "int" else float)
    if flag.kind not in (
        "value",
        "off",
        "on",
        "catalog",
    ):  # repeated: list, pairs, topic-*, table-setting
        options.update(action="append", default=None if flag.kind == "list" else [])
    group.add_argument(*flag.names, **options)


def config_from_args(args: argparse.Namespace) -> PipelineConfig:
    """The configuration from ``--config`` and the flags, which win (a mapping's entries one
    by one)."""
    flags = {name: flag_value(declared, args) for name, declared in SETTINGS.items()}
    if args.config:
        return PipelineConfig.from_file(args.config, flags)
    return PipelineConfig.from_mapping({k: v for k, v in flags.items() if v is not None})


def flag_value(declared: Setting, args: argparse.Namespace) -> Any:
    """The value the flags of ``declared`` give, or None when none was given."""
    given = {flag.kind: getattr(args, _dest(declared, flag)) for flag in declared.flags}
    if "topic-format" in given:
        formats, options = given["topic-format"], given["topic-option"]
        return per_topic_flags(formats, options) if formats or options else None
    if "table-setting" in given:  # --table-setting PATTERN:KEY=VALUE
        items = given["table-setting"]
        return table_setting_flags(items) if items else None
    if "catalog" in given:  # --table-name TEMPLATE, or --catalog for the usual template
        return given["value"] or ("{database}.{table}" if given["catalog"] else None)
    if "pairs" in given:  # K=V flags
        pairs = given["pairs"]
        return parse_key_values(pairs, declared.flags[0].names[0]) if pairs else None
    (value,) = given.values()
    return value


def _dest(declared: Setting, flag: Flag) -> str:
    return declared.name if flag.kind in ("off", "on") else flag.dest


def per_topic_flags(formats: list[str], options: list[str]) -> dict[str, dict[str, Any]]:
    """``--topic-format T=ID`` and ``--topic-option T:K=V`` -> the ``per_topic`` mapping.

    >>> per_topic_flags(["old=dts-canal-json"], ["old:legacy=true", "cn:timezone=Asia/Shanghai"])
    {'old': {'format': 'dts-canal-json', 'options': {'legacy': 'true'}}, 'cn': {'options': {'timezone': 'Asia/Shanghai'}}}
    """
    out: dict[str, dict[str, Any]] = {}
    for topic, format_id in parse_key_values(formats, "--topic-format").items():
        out.setdefault(topic, {})["format"] = format_id
    for item in options:
        topic, sep, pair = item.partition(":")
        if not sep or not topic:
            raise OptionError(f"--topic-option expects TOPIC:K=V, got {item.split('=')[0]!r}...")
        entry = out.setdefault(topic, {})
        entry.setdefault("options", {}).update(parse_key_values([pair], "--topic-option"))
    return out


def _is_glob(path: str) -> bool:
    """Whether ``path`` is a pattern (Spark's to expand), not one folder or file."""
    return any(c in path for c in "*?[{")


def _missing_local_source(source_dir: str | None) -> str | None:
    """Why a local ``source_dir`` cannot be read (it does not exist), found before Spark
    starts; None for one that exists or is not local (``s3a://...``: Spark's to judge).

    >>> _missing_local_source("/no/such/folder")
    'source_dir /no/such/folder: no such file or folder (--source-dir)'
    >>> [_missing_local_source(p) is None for p in ("s3a://bucket/cdc", "/", "/no/*/such")]
    [True, True, True]
    """
    if not source_dir:
        return None
    from urllib.parse import urlparse

    parsed = urlparse(source_dir)
    if parsed.scheme not in ("", "file"):
        return None
    path = Path(parsed.path if parsed.scheme else source_dir)
    if path.exists() or _is_glob(source_dir):
        return None
    return f"source_dir {source_dir}: no such file or folder (--source-dir)"


def _unusable_local_target(target: str, source_dir: str | None) -> str | None:
    """Why a local ``target`` cannot take the run, found before Spark starts: a file where
    its folder goes, or the source folder itself or a folder inside it (the run would read
    its own tables as messages). None for a usable one, or one that is not local.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     print(_unusable_local_target(f.name, None).endswith("is a file, not a folder (--target)"))
    True
    >>> _unusable_local_target("/in/lake", "/in")
    'target /in/lake is inside source_dir /in: the run would read its own tables as messages (--target)'
    >>> [_unusable_local_target(t, "/in") for t in ("/lake", "/input", "s3a://b/lake")]
    [None, None, None]
    """
    if "://" in target:
        return None
    path = Path(target)
    if path.exists() and not path.is_dir():
        return f"target {target} is a file, not a folder (--target)"
    if source_dir and "://" not in source_dir and not _is_glob(source_dir):
        source = Path(source_dir)
        if path == source or source in path.parents:
            return (
                f"target {target} is inside source_dir {source_dir}: the run would read its "
                "own tables as messages (--target)"
            )
    return None


def run(args: argparse.Namespace) -> int:
    try:
        # before Spark is imported: a bad flag or configuration costs no JVM start
        config = config_from_args(args)
    except AnyCdcError as exc:  # a ConfigError names its file; an OSError goes to main()
        return fail(str(exc))
    if args.print_config:
        print(json.dumps(config.redacted(), indent=2, default=str))
        return 0
    if not config.source_dir and not config.kafka_bootstrap:
        return fail("give a source: --source-dir DIR or --kafka-bootstrap HOST:PORT --topics T")
    unusable = _missing_local_source(config.source_dir) or _unusable_local_target(
        config.target, config.source_dir
    )
    if unusable:
        return fail(unusable)
    console = None
    if wants_progress(args):
        from rich.console import Console

        console = Console(stderr=True)
    setup_logging(console)
    from anycdc.spark.pipeline import Pipeline
    from anycdc.spark.session import get_spark

    with StopOnSignal() as stopper:
        spark = get_spark(app_name="anycdc run", master=config.master, conf=config.spark_conf)
        try:
            if console is None:
                pipeline = stopper.pipeline = Pipeline(spark, config)
                pipeline.run()
                history = pipeline.reports
            else:
                # Spark's own warnings go straight to the terminal and would tear the bar apart
                spark.sparkContext.setLogLevel("ERROR")
                history = run_with_progress(spark, config, console, stopper)
        except RunFailed as exc:  # one line, no traceback: it concerns the whole run
            return fail(str(exc), code=1)
    events = sum(m.events for m in history)
    dead = sum(m.dead_letters for m in history)
    batches = sum(not m.flush for m in history)
    merges = sum(len(m.tables) for m in history)
    stopped = stopper.pipeline.stopped_by if stopper.pipeline is not None else None
    print(
        f"{batches} batches, {events} events, {merges} table applies, {dead} dead letters "
        f"-> {config.target}"
        + (f" (stopped by {stopped}; run again to resume)" if stopped else ""),
        file=sys.stderr,
    )
    return 0


class StopOnSignal:
    """While a run goes on, SIGTERM (a container stop, a deploy) or SIGINT (Ctrl-C) asks it
    to stop cleanly (:meth:`~anycdc.spark.pipeline.Pipeline.request_stop`): the batch in
    progress finishes, what is pending waits for the next run. A second signal, or one
    before the stream has started, stops at once: what was not committed is replayed by
    the next run, as after a crash. Outside the main thread it installs nothing."""

    SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self.pipeline: Pipeline | None = None
        """The run to stop (set once it exists)."""
        self._previous: dict[int, Any] = {}
        self._received = 0

    def __enter__(self) -> StopOnSignal:
        if threading.current_thread() is threading.main_thread():
            for number in self.SIGNALS:
                self._previous[number] = signal.signal(number, self._on_signal)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)

    def _on_signal(self, number: int, _frame: FrameType | None) -> None:
        name = signal.Signals(number).name
        self._received += 1
        if self._received == 1 and self.pipeline is not None:
            self.pipeline.request_stop(name)
            return
        print(
            f"anycdc: {name}: stopping at once; the next run replays what was not committed",
            file=sys.stderr,
            flush=True,
        )
        os._exit(128 + number)  # the JVM ends with its driver (its stdin closes)


def wants_progress(args: argparse.Namespace, stream: TextIO | None = None) -> bool:
    """A progress bar is for a person watching: only when ``stream`` (default: stderr) is a
    terminal and ``--no-progress`` was not given. CI, log files and pipes get plain lines."""
    if getattr(args, "no_progress", False):
        return False
    stream = sys.stderr if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream is nobody's terminal
        return False


def setup_logging(console: Console | None) -> None:
    """Log lines as ever without a bar; with one, through rich on the bar's console, which
    prints them above the bar instead of through it."""
    if console is None:
        logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)
    else:
        # RichHandler prints the time itself
        logging.basicConfig(
            level=logging.INFO, format="%(name)s %(message)s", handlers=[rich_handler(console)]
        )
    logging.getLogger("py4j").setLevel(logging.WARNING)


def rich_handler(console: Console) -> logging.Handler:
    from rich.logging import RichHandler

    # markup off: a table name or a message excerpt in a log line is text, not rich markup;
    # the time without the date leaves the message more of an 80-column line
    return RichHandler(
        console=console,
        show_path=False,
        markup=False,
        rich_tracebacks=False,
        log_time_format="[%X]",
    )


def run_with_progress(
    spark: SparkSession,
    config: PipelineConfig,
    console: Console,
    stopper: StopOnSignal | None = None,
) -> list[BatchMetrics]:
    """``Pipeline.run()`` with a progress bar fed by every batch and, about once a second,
    by the query's progress (``stopper``: told the pipeline, to stop it on a signal)."""
    from anycdc.cli.progress import RunProgress
    from anycdc.spark.pipeline import Pipeline

    with RunProgress(console, available_now=config.trigger == "available-now") as progress:
        pipeline = Pipeline(spark, config, on_batch=progress.on_batch)
        if stopper is not None:
            stopper.pipeline = pipeline
        pipeline.run(on_start=lambda query: progress.watch(lambda: query.lastProgress))
        return pipeline.reports


COMMAND = Command(
    name="run",
    help="apply CDC messages from Kafka or files to Delta tables",
    description="Read change messages (Kafka topics or a folder of files), decode them (any\n"
    "format, detected per message), and keep one Delta table per source table\n"
    "exactly in sync: per-key ordering by source position, duplicates and replays\n"
    "harmless, deletes, truncates, key changes, schema evolution, dead letters.\n"
    "Flags override the --config file. Tables: <target>/<database>/<table>;\n"
    "audit: <target>/_anycdc/changelog; bad messages: <target>/_anycdc/dead_letter.\n\n"
    "Examples:\n"
    "  anycdc run --source-dir captures/ --target lake/\n"
    "  anycdc run --kafka-bootstrap 127.0.0.1:9092 --topics dts_shop --target lake/ \\\n"
    "      --kafka-option kafka.security.protocol=SASL_SSL --trigger interval=10s\n"
    "  anycdc run --config pipeline.yaml --primary-key shop.audit=id,ts\n"
    "  anycdc run --source-dir captures/ --target history/ --mode scd2\n"
    "  anycdc run --kafka-bootstrap broker:9093 --topics dts_2021,dts_shop --target lake/ \\\n"
    "      --topic-format dts_2021=dts-canal-json --topic-option dts_2021:legacy=true\n"
    "  anycdc run --source-dir captures/ --target lake/ --spark-conf spark.driver.memory=8g",
    add_arguments=add_arguments,
    run=run,
)
