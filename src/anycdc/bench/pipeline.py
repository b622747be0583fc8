"""``make bench`` / ``anycdc bench``: the pipeline next to the copy floor, in one run.

1. A broker of the bench's own (127.0.0.1, free ports) gets a simulated stream:
   ``events`` changes over ``tables`` tables in one topic (snapshot rows, then
   mixed inserts/updates/deletes), keyed by primary key over ``partitions``.
2. **Copy floor**: Spark reads the same topic and appends the raw messages to
   one Delta table, no decoding (what any Kafka-to-Delta job costs here).
3. **anycdc**: the pipeline applies the topic to one Delta table per source
   table, twice: every batch MERGEs every table it touched (``freshness 0``), then
   deferred (``freshness``, 60 s: a table is MERGEd when its oldest change would
   pass that age, and at the end); each also reports its ingest time (the batches
   without the final apply). All use the same micro-batch cap, the same Spark
   session, one after the other; the ratios are what the README reports.
   With ``peer`` among the runs, the hand-written peer (:mod:`anycdc.bench.peer`:
   ``from_json`` per table, one MERGE per table per batch) runs too, and every run's
   tables are compared with the simulator's truth (missing, extra, wrong values).
4. **Sustained**: a producer writes at ``rate`` events/s for ``seconds`` while the
   pipeline runs on an interval trigger; the latency of a batch is the time from
   producing its oldest message to the batch being committed. The stream is generated
   and encoded before the phase (:func:`pregenerate`) and each message's source time
   stamped as it is sent: a real source database does not share the pipeline's cores,
   so its simulation must not either (simulating and encoding 10,000 events/s takes a
   quarter of a core and the driver's Python lock).

Peak memory is sampled every 0.5 s from ``/proc``: the driver JVM and the
Python workers (the Spark children of this process).
"""

from __future__ import annotations

import dataclasses
import os
import re
import statistics
import struct
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from anycdc.bench.peer import Exactness, topic_stream
from anycdc.config import PipelineConfig
from anycdc.devtools.kafka import create_topic, produce
from anycdc.event import ChangeEvent
from anycdc.simulate import Workload, partition_of

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from anycdc.spark.pipeline import BatchMetrics

RUNS: Final = ("every-batch", "deferred", "peer")
"""The runs a bench can measure beside the floor: anycdc with every table MERGEd in every
batch, or when due; and the hand-written peer (:mod:`anycdc.bench.peer`), whose tables are
then compared with the simulator's truth, as are anycdc's."""
BENCH_OUTPUTS: Final = (
    "kafka", "floor", "anycdc-*", "peer", "sustained*", "*-stream.bin", "results.json",
)  # fmt: skip
"""What a bench run writes in its ``--work-dir`` (an older run's folder has only these)."""
TOPIC = "anycdc-bench"
SUSTAINED_TOPIC = "anycdc-bench-sustained"


@dataclass(frozen=True)
class BenchSettings:
    """What to measure (``anycdc bench --help`` documents each)."""

    events: int = 1_000_000
    tables: int = 50
    format: str = "canal-json"
    partitions: int = 4
    max_offsets_per_trigger: int = 200_000
    seed: int = 1
    rate: int = 10_000
    sustained_seconds: float = 120.0
    trigger_seconds: float = 5.0
    freshness: float = 60.0
    """The deferred run's freshness (the every-batch run uses 0: each batch MERGEs every
    table it touched, the pipeline before deferred applies)."""
    work_dir: Path = Path("var/bench")
    runs: tuple[str, ...] = ("every-batch", "deferred")
    """Which anycdc runs to measure beside the floor (:data:`RUNS`)."""
    skew: float = 0.0
    """Zipf exponent of the tables' activity (:class:`~anycdc.simulate.Workload`); 0: uniform."""
    hot_tables: int = 0
    """The most active tables (the first ones) that get ``hot_freshness`` (the others:
    ``freshness``)."""
    hot_freshness: float = 15.0
    apply_engine: str = "batched"
    """The runs' ``apply_engine`` (``batched``, the pipeline's default, or ``merge``: the two side by side)."""
    apply_beside: bool = False
    """The runs apply due tables beside the next batch's ingest (``apply_beside_ingest``)
    instead of inside the micro-batch (the default)."""
    metrics: bool = False
    """Serve the runs' metrics (``metrics_port``, a free port): what they cost."""
    detect: bool = True
    """The runs leave ``format`` at ``auto`` (a user's default: every message's format
    detected); False: they name the stream's :attr:`format` (no detection)."""
    profile: str = "shop"
    """The simulated tables (:class:`~anycdc.simulate.Workload`): ``shop`` or ``rich``
    (every type the formats carry: unsigned BIGINT, binary, time zones, ...)."""

    def check(self) -> None:
        """Raise :class:`~anycdc.errors.OptionError` naming the flag of a setting that
        cannot be measured, before a broker or Spark starts.

        >>> BenchSettings(events=-5).check()
        Traceback (most recent call last):
        ...
        anycdc.errors.OptionError: --events: at least 0, got -5
        >>> BenchSettings(events=0, sustained_seconds=0).check()
        Traceback (most recent call last):
        ...
        anycdc.errors.OptionError: --events 0 and --sustained-seconds 0: nothing to measure
        """
        from anycdc.errors import OptionError
        from anycdc.formats import format_ids

        lowest = {
            "--events": (self.events, 0),
            "--tables": (self.tables, 1),
            "--partitions": (self.partitions, 1),
            "--max-offsets-per-trigger": (self.max_offsets_per_trigger, 1),
            "--rate": (self.rate, 1),
            "--sustained-seconds": (self.sustained_seconds, 0),
            "--freshness": (self.freshness, 0),
            "--skew": (self.skew, 0),
            "--hot-tables": (self.hot_tables, 0),
            "--hot-freshness": (self.hot_freshness, 0),
        }
        for flag, (value, low) in lowest.items():
            if value < low:
                raise OptionError(f"{flag}: at least {low}, got {value:g}")
        if self.hot_tables > self.tables:
            raise OptionError(f"--hot-tables {self.hot_tables}: more than --tables {self.tables}")
        if not self.events and not self.sustained_seconds:
            raise OptionError("--events 0 and --sustained-seconds 0: nothing to measure")
        unknown = sorted(set(self.runs) - set(RUNS))
        if unknown or not self.runs:
            raise OptionError(
                f"--runs: unknown run {', '.join(unknown) or '(none given)'}; "
                f"choose from {', '.join(RUNS)}"
            )
        if self.format not in format_ids():
            raise OptionError(
                f"--format {self.format}: not a format id (`anycdc formats` lists them)"
            )

    def workload(self, events: int, seed: int) -> Workload:
        """The simulated source database of this bench."""
        snapshot_rows = max(1, min(200, self.events // (self.tables * 10)))
        return Workload(
            seed=seed,
            rows=snapshot_rows,
            events=max(0, events - snapshot_rows * self.tables),
            database="bench",
            tables=self.tables,
            skew=self.skew,
            profile=self.profile,
        )

    def format_config(self) -> dict[str, str]:
        """``format`` of a run's config: the stream's, unless the runs detect it (:attr:`detect`).

        >>> BenchSettings().format_config(), BenchSettings(detect=False).format_config()
        ({}, {'format': 'canal-json'})
        """
        return {} if self.detect else {"format": self.format}

    def metrics_config(self) -> dict[str, int]:
        """``metrics_port`` of a run's config when ``metrics`` (a free port), else nothing."""
        if not self.metrics:
            return {}
        from anycdc.devtools.kafka import free_port

        return {"metrics_port": free_port()}

    def table_freshness(self) -> dict[str, str]:
        """``table_freshness`` of the pipeline's config: the hot tables' target."""
        if not self.hot_tables:
            return {}
        names = [spec.name for spec in self.workload(0, self.seed).tables[: self.hot_tables]]
        pattern = r"^bench\.(" + "|".join(re.escape(name) for name in names) + ")$"
        return {pattern: f"{self.hot_freshness:g}s"}


# --------------------------------------------------------------------------- memory
def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(c) for c in handle.read().split()]
        except OSError:
            continue
    return found


def process_kind(cmdline: str) -> str:
    """``jvm``, ``helper`` (the JVM's ``jspawnhelper``: its path holds "java" but it is a
    spawn stub) or ``python`` (the driver's and Spark's Python processes), by the program."""
    program = os.path.basename(cmdline.split(" ", 1)[0])
    if program == "java":
        return "jvm"
    return "helper" if program == "jspawnhelper" else "python"


def _proc_field_kib(path: str, field: str) -> int:
    """The first ``field`` line's value (kB) in a /proc file, 0 when absent."""
    with open(path) as handle:
        return next((int(line.split()[1]) for line in handle if line.startswith(field)), 0)


def _pss_and_kind(pid: int) -> tuple[int, str]:
    """The process's proportional set size (bytes) and :func:`process_kind`.

    PSS, not RSS, for Python processes: Spark's Python workers are forked from one daemon
    and share its pages; summed, their RSS counted those pages once per worker (the bench
    printed 4.7 GiB of workers). A JVM shares no pages with the others (its spawn helpers
    exec), so its RSS is its PSS (1,760,816 against 1,749,569 kB, measured mid-run), and
    RSS is a counter the kernel keeps: ``smaps_rollup`` walks every page of the process
    (22-43 ms for a 1.7 GB driver JVM, more as it grows) while holding its memory map's
    lock, and twice a second that took ~14% of a core from the run it measured.
    Kernels without ``smaps_rollup`` give RSS.
    """
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            cmd = handle.read().replace(b"\0", b" ").decode(errors="replace")
        kind = process_kind(cmd)
        if kind == "jvm":
            kib = _proc_field_kib(f"/proc/{pid}/status", "VmRSS:")
        else:
            try:
                kib = _proc_field_kib(f"/proc/{pid}/smaps_rollup", "Pss:")
            except FileNotFoundError:
                kib = _proc_field_kib(f"/proc/{pid}/status", "VmRSS:")
    except (OSError, ValueError):
        return 0, "gone"
    return kib * 1024, kind


class MemorySampler:
    """Peak memory of this process's tree, split into the JVM and the Python processes (PSS,
    the JVM's by its RSS: :func:`_pss_and_kind`)."""

    def __init__(self, root: int | None = None, interval: float = 0.5) -> None:
        self.root = root or os.getpid()
        self.interval = interval
        self.peak = {"jvm": 0, "python_workers": 0, "driver_python": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="anycdc-memory")

    def sample(self) -> dict[str, int]:
        now = {"jvm": 0, "python_workers": 0, "driver_python": 0}
        now["driver_python"] = _pss_and_kind(self.root)[0]
        todo = [(child, "python") for child in _children(self.root)]
        # a process can show up under two of its parent's threads (one that forked it and
        # one it was handed to when that thread ended): count it once
        seen = {self.root}
        while todo:
            pid, parent_kind = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            size, kind = _pss_and_kind(pid)
            # a JVM's child that reads as a JVM is one being spawned: until it runs its
            # program it shares the JVM's pages and shows the JVM's command line and RSS
            # (the sampler once reported the driver at twice its size); helpers are stubs
            if kind == "jvm" and parent_kind != "jvm":
                now["jvm"] += size
            elif kind == "python":
                now["python_workers"] += size
            todo += [(child, kind) for child in _children(pid)]
        for name, value in now.items():
            self.peak[name] = max(self.peak[name], value)
        return now

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self) -> MemorySampler:
        self.peak = dict.fromkeys(self.peak, 0)
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="anycdc-memory")
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()


# --------------------------------------------------------------------------- traffic
def workload_messages(
    settings: BenchSettings, stamp_now: bool = False, stamp_ms: int | None = None
) -> Iterator[tuple[bytes | None, bytes, int]]:
    """(key, message, partition) of the simulated stream, generated lazily (10M fits in no
    list); ``stamp_now``: each event's source time is when it is generated; ``stamp_ms``:
    this one for every event."""
    from anycdc.formats import get_format

    fmt = get_format(settings.format)
    workload = settings.workload(settings.events, settings.seed)
    for event in workload.events(settings.format):
        if stamp_now:
            event = _restamp(event, int(time.time() * 1000))
        elif stamp_ms is not None:
            event = _restamp(event, stamp_ms)
        key = fmt.encode_key(event)
        partition = partition_of(key, settings.partitions)
        for message in fmt.encode(event):
            yield key, message, partition


def _restamp(event: ChangeEvent, ts_ms: int) -> ChangeEvent:
    import msgspec

    return msgspec.structs.replace(event, ts_ms=ts_ms)


STAMP_MS: Final = 4_102_444_800_123
"""The source time a pre-generated message carries until it is sent (2100-01-01, ms): no
simulated change has it, and the current time in ms has as many digits."""
_STAMP: Final = str(STAMP_MS).encode()
_RECORD: Final = struct.Struct(">iiI")  # partition, key length (-1: no key), value length


def pregenerate(settings: BenchSettings, path: Path, count: int) -> bool:
    """Write ``count`` messages of the sustained stream to ``path``, each carrying
    :data:`STAMP_MS` as its source time; False when the format does not write that time
    as the digits of milliseconds (binary formats, seconds): then nothing is usable."""
    with path.open("wb") as out:
        written = 0
        for key, value, partition in workload_messages(settings, stamp_ms=STAMP_MS):
            if written == 0 and _STAMP not in value:
                return False
            out.write(_RECORD.pack(partition, -1 if key is None else len(key), len(value)))
            if key is not None:
                out.write(key)
            out.write(value)
            written += 1
            if written >= count:
                break
    return True


def stamped_messages(path: Path) -> Iterator[tuple[bytes | None, bytes, int]]:
    """The messages of :func:`pregenerate`, each stamped with the current time (ms) as it
    is taken, which is when the paced producer sends it."""
    header = _RECORD.size
    with path.open("rb") as stream:
        while True:
            head = stream.read(header)
            if len(head) < header:
                return
            partition, key_size, value_size = _RECORD.unpack(head)
            key = stream.read(key_size) if key_size >= 0 else None
            value = stream.read(value_size)
            now = str(int(time.time() * 1000)).encode()
            yield key, value.replace(_STAMP, now), partition


# --------------------------------------------------------------------------- measurements
@dataclass
class Measured:
    name: str
    events: int
    seconds: float
    batches: list[float] = field(default_factory=list)
    memory: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    staleness: dict[str, list[float]] = field(default_factory=dict)
    """Per target (``15s``, ``60s``, ...): each table apply's staleness, its time minus the
    oldest source time it held (sustained runs, whose events carry their produce time)."""
    behind: list[str] = field(default_factory=list)
    """Tables whose oldest pending change was older than their target plus one cycle
    when the run ended."""
    exactness: Exactness | None = None
    """Its tables against the simulator's truth (catch-up runs, when the peer is measured)."""

    @property
    def rate(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[max(0, min(98, int(pct) - 1))]


def copy_floor(
    spark: SparkSession, bootstrap: str, topic: str, folder: Path, cap: int, events: int
) -> Measured:
    """Kafka -> one Delta table, raw bytes, no decoding: the floor any pipeline pays."""
    frame = topic_stream(spark, bootstrap, topic, cap)
    batches: list[float] = []
    query = (
        frame.writeStream.format("delta")
        .option("checkpointLocation", str(folder / "checkpoint"))
        .trigger(availableNow=True)
        .start(str(folder / "raw"))
    )
    with MemorySampler() as memory:
        started = time.monotonic()
        query.awaitTermination()
        seconds = time.monotonic() - started
    batches = [p["durationMs"]["triggerExecution"] / 1000 for p in query.recentProgress]
    return Measured("copy floor (raw append)", events, seconds, batches, memory.peak)


def ingest_seconds(until_last_batch: float, history: Sequence[BatchMetrics]) -> float:
    """A run's ingest: its seconds until its last batch ended, less the applies those
    batches made (tables applied when due are not ingest; the final apply is after).

    >>> from anycdc.spark.batch_metrics import BatchMetrics
    >>> batches = [BatchMetrics(batch_id=0, apply_seconds=30.0), BatchMetrics(batch_id=1)]
    >>> ingest_seconds(50.0, batches + [BatchMetrics(batch_id=2, flush=True, apply_seconds=9)])
    20.0
    """
    return until_last_batch - sum(m.apply_seconds for m in history if not m.flush)


def anycdc_run(
    spark: SparkSession, config: PipelineConfig, events: int, name: str
) -> list[Measured]:
    """The pipeline on the whole topic; two rows: end to end (with the final apply), and
    ingest (the batches without their applies: every event durable in the changelog),
    both from one run."""
    from anycdc.spark.pipeline import Pipeline

    ends: list[float] = []

    def on_batch(metrics: BatchMetrics) -> None:
        if not metrics.flush:
            ends.append(time.monotonic())

    with MemorySampler() as memory:
        started = time.monotonic()
        pipeline = Pipeline(spark, config, on_batch=on_batch)
        pipeline.run()
        history = pipeline.reports
        seconds = time.monotonic() - started
    applied = sum(m.events for m in history)
    assert applied >= events, f"anycdc applied {applied} of {events} events"
    applies = sum(len(m.tables) for m in history)
    batch_seconds = [m.seconds for m in history if not m.flush]
    named = "" if config.format == "auto" else f", format {config.format}"
    label = f"{name}: end to end ({applies} table applies, {config.apply_engine} engine{named})"
    out = [Measured(label, events, seconds, batch_seconds, memory.peak)]
    if any(m.flush for m in history):
        ingest = ingest_seconds(ends[-1] - started, history)
        out.append(Measured(f"{name}: ingest only", events, ingest, batch_seconds))
    return out


def sustained(
    spark: SparkSession, bootstrap: str, settings: BenchSettings, target: Path
) -> Measured:
    """Produce at ``settings.rate`` while the pipeline runs; latency per batch."""
    from anycdc.spark.pipeline import Pipeline

    create_topic(bootstrap, SUSTAINED_TOPIC, settings.partitions)
    config = PipelineConfig.from_mapping(
        {
            "kafka_bootstrap": bootstrap,
            "topics": [SUSTAINED_TOPIC],
            "target": str(target),
            "trigger": f"interval={settings.trigger_seconds:g}s",
            "query_name": "anycdc-bench-sustained",
            "freshness": settings.freshness,
            "table_freshness": settings.table_freshness(),
            "apply_engine": settings.apply_engine,
            "apply_beside_ingest": settings.apply_beside,
            **settings.format_config(),
            **settings.metrics_config(),
        }
    )
    policy = config.freshness_policy
    sent_at: list[tuple[int, float]] = [(0, time.time())]
    ends: list[tuple[int, float]] = []
    staleness: dict[str, list[float]] = {}
    done = 0

    def on_batch(metrics: BatchMetrics) -> None:
        nonlocal done
        now = time.time()
        if not metrics.flush:
            done += metrics.messages
            ends.append((done, now))
        for table in metrics.tables:
            if table.min_ts_ms is not None:
                target = f"{policy.target_s(table.table):g}s"
                staleness.setdefault(target, []).append(now - table.min_ts_ms / 1000)

    stream_settings = dataclasses.replace(settings, events=10**9, seed=settings.seed + 1)
    target.parent.mkdir(parents=True, exist_ok=True)
    stream_file = target.with_name(target.name + "-stream.bin")
    count = int(settings.rate * settings.sustained_seconds * 1.05) + 1000
    messages: Iterator[tuple[bytes | None, bytes, int]]
    if pregenerate(stream_settings, stream_file, count):
        messages = stamped_messages(stream_file)
    else:  # a format without a millisecond time in digits: generated while sent
        messages = workload_messages(stream_settings, stamp_now=True)
    pipeline = Pipeline(spark, config, on_batch=on_batch)
    query = pipeline.start()
    produced = 0
    with MemorySampler() as memory:
        started = time.monotonic()
        try:
            produced = produce(
                bootstrap, SUSTAINED_TOPIC, messages,
                rate=settings.rate,
                until=started + settings.sustained_seconds, sent_at=sent_at,
            )  # fmt: skip
            deadline = time.monotonic() + max(120.0, settings.sustained_seconds * 2)
            while done < produced and time.monotonic() < deadline and query.isActive:
                time.sleep(0.5)
            behind = falling_behind(pipeline, settings.trigger_seconds)
        finally:
            query.stop()
            pipeline.settle()  # an apply beside the last batch's ingest ends, and is counted
        seconds = time.monotonic() - started
    latencies = batch_latencies(sent_at, ends)
    measured = Measured(
        f"sustained {settings.rate:,}/s", produced, seconds, [], memory.peak, latencies,
        staleness, behind,
    )  # fmt: skip
    if done < produced:
        measured.name += f" (fell behind: {done:,} of {produced:,} applied)"
    return measured


def falling_behind(pipeline: Any, cycle_s: float) -> list[str]:
    """The tables whose oldest pending change has waited longer than their freshness
    target plus one trigger cycle (what a reader of the table would notice)."""
    from anycdc.schedule import qualified_name

    schedule = pipeline.schedule()
    policy = pipeline.config.freshness_policy
    now_ms = time.time() * 1000
    late = []
    for ident, pending in schedule.pending.items():
        name = qualified_name(ident)
        if pending.since_ms is not None and (now_ms - pending.since_ms) / 1000 > (
            policy.target_s(name) + cycle_s
        ):
            late.append(name)
    return sorted(late)


def batch_latencies(sent_at: list[tuple[int, float]], ends: list[tuple[int, float]]) -> list[float]:
    """Per batch: commit time minus the produce time of the oldest message it held.

    ``sent_at`` is (messages sent so far, wall time) every 1,000 messages; batch
    k held the messages after the previous batch's total, so its oldest was
    sent at about the time the producer passed that total.
    """
    out = []
    previous = 0
    for total, finished in ends:
        if total == previous:
            continue
        first = next((t for n, t in sent_at if n > previous), sent_at[-1][1])
        out.append(max(0.0, finished - first))
        previous = total
    return out


# --------------------------------------------------------------------------- the whole bench
def run_bench(
    spark: SparkSession,
    bootstrap: str,
    settings: BenchSettings,
    say: Callable[[str], None] = print,
) -> list[Measured]:
    work = settings.work_dir.resolve()
    results: list[Measured] = []
    if settings.events > 0:
        results += catch_up(spark, bootstrap, settings, work, say)
    if settings.sustained_seconds > 0:
        say(f"sustained: {settings.rate:,} events/s for {settings.sustained_seconds:.0f}s")
        results.append(sustained(spark, bootstrap, settings, work / "sustained"))
    return results


def catch_up(
    spark: SparkSession,
    bootstrap: str,
    settings: BenchSettings,
    work: Path,
    say: Callable[[str], None] = print,
) -> list[Measured]:
    """The whole topic at once: the copy floor, then each of ``settings.runs``."""
    create_topic(bootstrap, TOPIC, settings.partitions)
    say(f"producing {settings.events:,} {settings.format} events over {settings.tables} tables")
    started = time.monotonic()
    produced = produce(
        bootstrap, TOPIC, workload_messages(settings),
        progress=lambda n: say(f"  {n:,} produced") if n % 100_000 == 0 else None,
    )  # fmt: skip
    say(f"produced {produced:,} messages in {time.monotonic() - started:.0f}s")
    results: list[Measured] = []
    say("copy floor: Kafka -> one Delta table, raw")
    results.append(
        copy_floor(
            spark, bootstrap, TOPIC, work / "floor", settings.max_offsets_per_trigger, produced
        )
    )
    say(f"  {results[-1].seconds:.1f}s")
    judged: list[tuple[Measured, Callable[[str], str]]] = []
    for run, freshness in (("every-batch", 0.0), ("deferred", settings.freshness)):
        if run not in settings.runs:
            continue
        name = "anycdc " + run.replace("-", " ")
        say(f"{name} (freshness {freshness:g}s): Kafka -> decode -> one Delta table per table")
        config = PipelineConfig.from_mapping(
            {
                "kafka_bootstrap": bootstrap,
                "topics": [TOPIC],
                "target": str(work / name.replace(" ", "-")),
                "max_offsets_per_trigger": settings.max_offsets_per_trigger,
                "query_name": "anycdc-bench",
                "freshness": freshness,
                "apply_engine": settings.apply_engine,
                "apply_beside_ingest": settings.apply_beside,
                **settings.format_config(),
                **settings.metrics_config(),
            }
        )
        measured = anycdc_run(spark, config, produced, name)
        results += measured
        say(f"  {results[-1].seconds:.1f}s")
        judged.append((measured[0], partial(_anycdc_path, config)))
    if "peer" in settings.runs:
        say("peer: Kafka -> from_json per table -> one MERGE per table per batch (hand-written)")
        results.append(peer_run(spark, bootstrap, settings, work / "peer", produced))
        say(f"  {results[-1].seconds:.1f}s")
        judged.append((results[-1], partial(_peer_path, work / "peer")))
        say("exactness: each run's tables against the simulator's truth")
        judge(spark, settings, judged)
    return results


def _anycdc_path(config: PipelineConfig, qualified: str) -> str:
    database, table = qualified.split(".", 1)
    return config.table_path(database, None, table)


def _peer_path(target: Path, qualified: str) -> str:
    return str(target.joinpath(*qualified.split(".", 1)))


def peer_run(
    spark: SparkSession, bootstrap: str, settings: BenchSettings, target: Path, events: int
) -> Measured:
    """The hand-written peer (:mod:`anycdc.bench.peer`) on the whole topic, with the
    schemas its author writes from the tables as declared before the stream."""
    from anycdc.bench.peer import PEER_NAME, peer_tables, run_peer

    if settings.format != "canal-json":
        raise ValueError(f"the peer reads canal-json only, not {settings.format}")
    declared = settings.workload(0, settings.seed).source_tables
    tables = peer_tables(declared, settings.format)
    with MemorySampler() as memory:
        seconds, batches, applies = run_peer(
            spark, bootstrap, TOPIC, tables, target, settings.max_offsets_per_trigger
        )
    return Measured(f"{PEER_NAME} ({applies} MERGEs)", events, seconds, batches, memory.peak)


def judge(
    spark: SparkSession,
    settings: BenchSettings,
    runs: list[tuple[Measured, Callable[[str], str]]],
) -> None:
    """Set each run's :attr:`Measured.exactness`: its tables (``path_of`` a qualified
    name) against the truth of the simulated stream (generated again from its seed)."""
    from anycdc.bench.peer import compare_with_truth, exactness, read_tables

    workload = settings.workload(settings.events, settings.seed)
    for _ in workload.events(settings.format):
        pass
    specs, truth = workload.tables, workload.truth
    for measured, path_of in runs:
        actual = read_tables(spark, {s.qualified: path_of(s.qualified) for s in specs})
        diffs, absent = compare_with_truth(specs, truth, actual)
        measured.exactness = exactness(measured.name, diffs, absent)


def report_rows(results: list[Measured]) -> list[list[str]]:
    floor = (results[0].seconds if results else 0.0) or 1.0
    rows = []
    for m in results:
        mib = {k: f"{v / 2**20:,.0f}" for k, v in m.memory.items()}
        rows.append(
            [
                m.name,
                f"{m.events:,}",
                f"{m.seconds:,.1f}",
                f"{m.rate:,.0f}",
                f"{m.seconds / floor:.2f}x" if not m.latencies else "",
                f"{percentile(m.batches, 50):.1f} / {percentile(m.batches, 95):.1f}"
                if m.batches
                else "",
                f"{percentile(m.latencies, 50):.1f} / {percentile(m.latencies, 95):.1f}"
                if m.latencies
                else "",
                f"{mib.get('jvm', '?')} / {mib.get('python_workers', '?')}",
            ]
        )
    return rows


def staleness_summary(measured: Measured) -> dict[str, dict[str, float]]:
    """Per freshness target: applies, staleness p50/p95/max (seconds).

    >>> m = Measured("s", 0, 1.0, staleness={"15s": [3.0, 9.0, 12.0]})
    >>> staleness_summary(m)["15s"]["max"]
    12.0
    """
    return {
        target: {
            "applies": len(values),
            "p50": round(percentile(values, 50), 1),
            "p95": round(percentile(values, 95), 1),
            "max": round(max(values), 1),
        }
        for target, values in sorted(measured.staleness.items(), key=lambda i: float(i[0][:-1]))
    }


def exactness_lines(results: list[Measured]) -> list[str]:
    """Each judged run's exactness, then a few of its wrong values."""
    lines = []
    for m in results:
        if m.exactness is None:
            continue
        lines.append(m.exactness.line())
        lines += [
            f"  {column}: expected {want}, got {got}" for column, want, got in m.exactness.examples
        ]
    return lines


def freshness_lines(results: list[Measured]) -> list[str]:
    """What the tables' readers saw in the sustained run: staleness per target."""
    lines = []
    for m in results:
        for target, figures in staleness_summary(m).items():
            lines.append(
                f"{m.name}: tables with target {target}: {figures['applies']:g} applies, "
                f"staleness at apply p50 {figures['p50']:g}s, p95 {figures['p95']:g}s, "
                f"max {figures['max']:g}s"
            )
        if m.staleness:
            late = ", ".join(m.behind[:10]) + (" ..." if len(m.behind) > 10 else "")
            lines.append(
                f"{m.name}: behind their target + one cycle at the end: "
                + (f"{len(m.behind)} tables ({late})" if m.behind else "none")
            )
    return lines


REPORT_HEADERS = [
    "run", "events", "seconds", "events/s", "vs floor", "batch s p50/p95",
    "latency s p50/p95", "peak MiB jvm/workers",
]  # fmt: skip


def results_json(settings: BenchSettings, results: list[Measured]) -> dict[str, Any]:
    return {
        "settings": {k: str(v) for k, v in dataclasses.asdict(settings).items()},
        "results": [
            {
                "name": m.name,
                "events": m.events,
                "seconds": round(m.seconds, 2),
                "events_per_second": round(m.rate),
                "batch_seconds_p50": round(percentile(m.batches, 50), 2),
                "batch_seconds_p95": round(percentile(m.batches, 95), 2),
                "latency_seconds_p50": round(percentile(m.latencies, 50), 2),
                "latency_seconds_p95": round(percentile(m.latencies, 95), 2),
                "peak_memory_bytes": m.memory,
                "staleness_seconds": staleness_summary(m),
                "tables_behind": m.behind,
                "exactness": m.exactness.as_json() if m.exactness else None,
            }
            for m in results
        ],
    }
