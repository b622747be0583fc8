"""``python -m anycdc.bench.merge_probe``: seconds and Spark jobs of one small upsert MERGE.

What one micro-batch costs per table, measured on its own: ``--tables`` Delta tables of
``--table-rows`` rows each get ``--rounds`` rounds of one MERGE of ``--rows`` source rows
(half updates of existing keys, half inserts of new ones), table after table. The MERGE has
the shape the pipeline writes (:meth:`anycdc.spark.apply.TableApplier._merge_staged`): keys
matched with ``<=>``, every clause guarded by the source position, partial images overlaid
column by column, the batch's ``txnAppId``/``txnVersion`` set and the source not
materialized again (as :meth:`anycdc.spark.pipeline.Pipeline.process_batch` does). The
session is anycdc's own (:func:`anycdc.spark.session.get_spark`), so its settings are what
is measured.

Each MERGE runs in a job group of its own; the jobs it started (its group's, plus any
started meanwhile outside a group) are counted from Spark's status tracker. The first
``--warmup`` rounds compile the plans and are not counted.

Run: ``python -m anycdc.bench.merge_probe [--tables 8] [--rounds 5] [--rows 4000]
[--table-rows 20000] [--master local[2]] [--conf K=V]... [--jfr FILE] [--json] [--stages]``

Over the measured rounds it also reads the driver JVM's CPU seconds per thread (Linux
``/proc``), summed into groups (executor tasks, the driver's Python-facing thread, Spark's
query-stage threads, JIT compilers, GC, other) and divided by the MERGEs: where a difference
between two stacks or two settings goes. ``--jfr FILE`` records the same rounds with Java
Flight Recorder (JDK 11+; the ``profile`` settings: a stack sample of each running Java thread
every 10-20 ms); read it with ``jfr summary FILE`` or ``jfr print --events
jdk.ExecutionSample FILE``. ``--conf`` adds Spark settings to the session (e.g. a candidate
setting, or ``spark.driver.extraJavaOptions=-XX:FlightRecorderOptions:stackdepth=256``).

It prints the versions (pyspark, the Delta jar), the JVM's default time zone, and the
median seconds and jobs per MERGE, e.g.::

    pyspark 4.0.1, delta-spark_2.13-4.0.1.jar, master local[2], JVM zone UTC, session zone UTC
    40 MERGEs (8 tables x 5 rounds, 4,000 rows into 20,000): median 1.94 s (min 1.70, max 2.61), jobs 12 (12-12)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anycdc.scratch import tool_scratch
from anycdc.spark.action_rules import Effect, merge_clauses_sql, newer_than_row, writes_column_sql
from anycdc.spark.merge_sql import q

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# what the pipeline sets per batch (anycdc.spark.pipeline); named here so that the probe runs
# against any checkout's session module
TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"
MATERIALIZE_SOURCE = "spark.databricks.delta.merge.materializeSource"
QUERY_NAME = "anycdc-merge-probe"
GROUP_PREFIX = "anycdc-merge-probe-"

COLUMNS = (("id", "BIGINT"), ("name", "STRING"), ("qty", "INT"), ("price", "DECIMAL(12,2)"))
META = (
    ("_cdc_position", "STRING"),
    ("_cdc_ts", "TIMESTAMP"),
    ("_cdc_op", "STRING"),
    ("_cdc_batch", "BIGINT"),
)


@dataclass(frozen=True)
class MergeSample:
    """One measured MERGE: its table, round, wall seconds and the Spark jobs it ran."""

    table: int
    round: int
    seconds: float
    jobs: int
    stages: tuple[str, ...] = ()
    cpu_seconds: float | None = None  # the driver JVM's CPU (Linux /proc), all its threads


@dataclass(frozen=True)
class Summary:
    """Medians (and spread) over the measured MERGEs.

    >>> s = summarize([MergeSample(0, 1, 2.0, 12), MergeSample(1, 1, 1.0, 12),
    ...                MergeSample(0, 2, 4.0, 13)])
    >>> (s.merges, s.median_seconds, s.min_seconds, s.max_seconds, s.median_jobs)
    (3, 2.0, 1.0, 4.0, 12)
    >>> (s.min_jobs, s.max_jobs, s.median_cpu_seconds)
    (12, 13, None)
    """

    merges: int
    median_seconds: float
    min_seconds: float
    max_seconds: float
    median_jobs: float
    min_jobs: int
    max_jobs: int
    median_cpu_seconds: float | None = None


# /proc shows a thread's name cut to 15 characters; the groups a CPU difference is read in
THREAD_GROUPS = (
    ("executor tasks", ("Executor task",)),
    ("driver thread (py4j: planning, Delta)", ("Thread",)),
    ("query-stage threads (AQE)", ("ResultQueryStag", "shuffle-exchang", "broadcast-excha",
                                   "QueryStageCreat")),
    ("JIT compilers", ("C2 CompilerThre", "C1 CompilerThre")),
    ("GC", ("GC Thread", "G1 ", "VM Thread")),
    ("JFR", ("JFR ",)),
)  # fmt: skip


def thread_group(name: str) -> str:
    """The group of a thread's name as ``/proc/<pid>/task/<tid>/comm`` shows it.

    >>> [thread_group(n) for n in ("Executor task l", "Thread-4", "C2 CompilerThre", "G1 Conc#0")]
    ['executor tasks', 'driver thread (py4j: planning, Delta)', 'JIT compilers', 'GC']
    >>> thread_group("dag-scheduler-e")
    'other'
    """
    bare = re.sub(r"[-#]?\d+$", "", name).strip()
    for group, prefixes in THREAD_GROUPS:
        for prefix in prefixes:
            if bare == prefix.strip() or name.startswith(prefix):
                return group
    return "other"


def thread_cpu_ticks(pid: int) -> dict[str, tuple[str, int]]:
    """CPU clock ticks (user + system) of each thread of ``pid``, with its name (``/proc``)."""
    ticks: dict[str, tuple[str, int]] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return ticks
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as handle:
                name = handle.read().strip()
            with open(f"/proc/{pid}/task/{tid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended meanwhile
        ticks[tid] = (name, int(fields[11]) + int(fields[12]))
    return ticks


def cpu_by_group(
    before: dict[str, tuple[str, int]], after: dict[str, tuple[str, int]], merges: int
) -> dict[str, float]:
    """CPU seconds per MERGE of each thread group between two :func:`thread_cpu_ticks`
    (threads that ended in between are not counted), largest first."""
    total: dict[str, int] = defaultdict(int)
    for tid, (name, ticks) in after.items():
        total[thread_group(name)] += ticks - before.get(tid, (name, 0))[1]
    per_tick = 1 / os.sysconf("SC_CLK_TCK") / max(1, merges)
    return {
        group: round(ticks * per_tick, 3)
        for group, ticks in sorted(total.items(), key=lambda item: -item[1])
        if ticks
    }


class Recorder:
    """What the driver JVM does during the measured rounds: CPU seconds per thread group
    (:func:`cpu_by_group`) and, given a file, a Java Flight Recorder recording of the same
    rounds (``jdk.jfr.Recording`` with the JDK's ``profile`` settings, through py4j)."""

    def __init__(self, jfr: Path | None = None) -> None:
        self.jfr = jfr
        self._recording: Any = None
        self._pid: int | None = None
        self._before: dict[str, tuple[str, int]] = {}
        self.started = False

    def start(self, spark: SparkSession) -> None:
        proc = getattr(spark.sparkContext._gateway, "proc", None)
        self._pid = getattr(proc, "pid", None)
        if self.jfr is not None:
            jvm: Any = spark.sparkContext._jvm
            settings = jvm.jdk.jfr.Configuration.getConfiguration("profile")
            self._recording = jvm.jdk.jfr.Recording(settings)
            self._recording.start()
        if self._pid is not None:
            self._before = thread_cpu_ticks(self._pid)
        self.started = True

    def stop(self, spark: SparkSession, merges: int) -> dict[str, float] | None:
        after = thread_cpu_ticks(self._pid) if self._pid is not None else {}
        if self._recording is not None and self.jfr is not None:
            jvm: Any = spark.sparkContext._jvm
            self._recording.stop()
            self._recording.dump(jvm.java.io.File(str(self.jfr)).toPath())
            self._recording.close()
            self._recording = None
        return cpu_by_group(self._before, after, merges) if after else None


def summarize(samples: Sequence[MergeSample]) -> Summary:
    """The medians and extremes of ``samples`` (at least one)."""
    if not samples:
        raise ValueError("no MERGE was measured")
    seconds = [s.seconds for s in samples]
    jobs = [s.jobs for s in samples]
    cpu = [s.cpu_seconds for s in samples if s.cpu_seconds is not None]
    return Summary(
        merges=len(samples),
        median_seconds=statistics.median(seconds),
        min_seconds=min(seconds),
        max_seconds=max(seconds),
        median_jobs=statistics.median(jobs),
        min_jobs=min(jobs),
        max_jobs=max(jobs),
        median_cpu_seconds=statistics.median(cpu) if len(cpu) == len(samples) else None,
    )


@dataclass
class ProbeReport:
    """What the probe prints (``--json`` prints it whole)."""

    tables: int
    rounds: int
    rows: int
    table_rows: int
    master: str
    pyspark: str
    delta_jar: str
    jvm_zone: str
    session_zone: str
    summary: Summary
    samples: list[MergeSample] = field(default_factory=list)
    conf: dict[str, str] = field(default_factory=dict)
    thread_cpu_seconds: dict[str, float] | None = None  # per MERGE, by thread group

    def lines(self) -> list[str]:
        """The human-readable report.

        >>> r = ProbeReport(8, 5, 4000, 20000, "local[2]", "4.0.1", "delta-spark_2.13-4.0.1.jar",
        ...                 "UTC", "UTC", summarize([MergeSample(0, 1, 1.94, 12)]))
        >>> print("\\n".join(r.lines()))
        pyspark 4.0.1, delta-spark_2.13-4.0.1.jar, master local[2], JVM zone UTC, session zone UTC
        1 MERGEs (8 tables x 5 rounds, 4,000 rows into 20,000): median 1.94 s (min 1.94, max 1.94), jobs 12 (12-12)
        """
        s = self.summary
        jobs = f"{s.median_jobs:g}"
        cpu = "" if s.median_cpu_seconds is None else f", JVM CPU {s.median_cpu_seconds:.2f} s"
        lines = [
            f"pyspark {self.pyspark}, {self.delta_jar}, master {self.master}, "
            f"JVM zone {self.jvm_zone}, session zone {self.session_zone}",
            f"{s.merges} MERGEs ({self.tables} tables x {self.rounds} rounds, {self.rows:,} rows "
            f"into {self.table_rows:,}): median {s.median_seconds:.2f} s "
            f"(min {s.min_seconds:.2f}, max {s.max_seconds:.2f}), "
            f"jobs {jobs} ({s.min_jobs}-{s.max_jobs}){cpu}",
        ]
        if self.conf:
            lines.insert(1, "settings: " + ", ".join(f"{k}={v}" for k, v in self.conf.items()))
        if self.thread_cpu_seconds:
            groups = ", ".join(f"{k} {v:.2f}" for k, v in self.thread_cpu_seconds.items())
            lines.append(f"JVM CPU s per MERGE by thread: {groups}")
        return lines

    def as_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


# ---------------------------------------------------------------------------- Spark side
def table_sql(path: str, properties: dict[str, str] | None = None) -> str:
    """The probe table's CREATE TABLE, with ``properties`` (e.g. column mapping) if any.

    >>> table_sql("/t/x", {"delta.columnMapping.mode": "name"}).split(" USING ")[1]
    "delta TBLPROPERTIES ('delta.columnMapping.mode' = 'name')"
    """
    cols = ", ".join(f"`{n}` {t}" for n, t in (*COLUMNS, *META))
    props = ""
    if properties:
        props = (
            " TBLPROPERTIES (" + ", ".join(f"'{k}' = '{v}'" for k, v in properties.items()) + ")"
        )
    return f"CREATE TABLE delta.{q(path)} ({cols}) USING delta{props}"


def merge_sql(path: str, view: str) -> str:
    """The pipeline's MERGE (``TableApplier._merge_staged``) for the probe's columns: its
    clauses, guard and column rule (:mod:`anycdc.spark.action_rules`) over the probe's
    staged names."""
    newer = newer_than_row("s._pos")
    sets = {
        f"`{n}`": f"CASE WHEN {writes_column_sql('s._full', f's.`_has_{n}`', True)} "
        f"THEN s.`{n}` ELSE t.`{n}` END"
        for n, _ in COLUMNS
        if n != "id"
    }
    meta = {"_cdc_position": "s._pos", "_cdc_ts": "s._ts", "_cdc_op": "s._op"}
    meta["_cdc_batch"] = "s._batch"
    inserts = {f"`{n}`": f"s.`{n}`" for n, _ in COLUMNS} | meta
    update_set = ", ".join(f"{k} = {v}" for k, v in (sets | meta).items())
    # the path is quoted by q(), the view and columns are the probe's own names
    insert = f"INSERT ({', '.join(inserts)}) VALUES ({', '.join(inserts.values())})"  # noqa: S608
    then = {Effect.DROP: "DELETE", Effect.UPDATE: f"UPDATE SET {update_set}", Effect.INSERT: insert}
    return (
        f"MERGE INTO delta.{q(path)} t USING {view} s ON t.`id` <=> s.`id` "
        f"{merge_clauses_sql('s._kind', newer, then)}"
    )


def load(
    spark: SparkSession, path: str, rows: int, properties: dict[str, str] | None = None
) -> None:
    """Create the table and append ``rows`` rows (ids 0..rows-1) at position 1."""
    spark.sql(table_sql(path, properties))
    spark.range(rows).selectExpr(
        "id", "concat('n', id) AS name", "CAST(id % 1000 AS INT) AS qty",
        "CAST(id % 10000 / 100 AS DECIMAL(12,2)) AS price",
        "lpad('1', 20, '0') AS _cdc_position", "timestamp_millis(1700000000000) AS _cdc_ts",
        "'snapshot' AS _cdc_op", "CAST(0 AS BIGINT) AS _cdc_batch",
    ).write.format("delta").mode("append").save(path)  # fmt: skip


def source(spark: SparkSession, round_no: int, rows: int, table_rows: int) -> DataFrame:
    """``rows`` upserts: half update existing ids (spread over the table), half insert new
    ids past the loaded ones; every row a full image at a position newer than the table's.
    A local checkpoint, as the pipeline's folded batch is (Delta 4.1+ refuses a ``cache()``d
    MERGE source when the source is not materialized again)."""
    updates = rows // 2
    stride = max(1, table_rows // max(1, updates))
    new_base = table_rows + round_no * rows
    frame = spark.range(rows).selectExpr(
        f"CASE WHEN id < {updates} THEN (id * {stride} + {round_no}) % {table_rows} "
        f"ELSE {new_base} + id END AS id",
        f"concat('r{round_no}-', id) AS name", "CAST(id % 997 AS INT) AS qty",
        "CAST(id % 10000 / 100 AS DECIMAL(12,2)) AS price",
        "'upsert' AS _kind", "true AS _full",
        "true AS `_has_name`", "true AS `_has_qty`", "true AS `_has_price`",
        f"lpad(CAST({round_no + 1} * 1000000 + id AS STRING), 20, '0') AS _pos",
        "timestamp_millis(1700000000000 + id) AS _ts", "'u' AS _op",
        f"CAST({round_no} AS BIGINT) AS _batch",
    )  # fmt: skip
    return frame.localCheckpoint(eager=True)


def _ungrouped_jobs(spark: SparkSession) -> set[int]:
    return set(spark.sparkContext.statusTracker().getJobIdsForGroup(None))


def _job_names(spark: SparkSession, jobs: Iterable[int]) -> tuple[str, ...]:
    """``job N: <description> | <call site>`` from the JVM's status store, per job."""
    store: Any = spark.sparkContext._jsc.sc().statusStore()
    names = []
    for job in sorted(jobs):
        data = store.job(job)
        description = data.description()
        text = str(description.get()) if description.isDefined() else ""
        names.append(f"job {job}: {text} | {data.name()}")
    return tuple(names)


def measure(
    spark: SparkSession,
    path: str,
    view: str,
    table: int,
    round_no: int,
    *,
    stages: bool = False,
    write: Callable[[], None] | None = None,
) -> MergeSample:
    """Run one MERGE of ``view`` into ``path`` (or ``write``: the batched engine's
    commit) in a job group of its own."""
    context = spark.sparkContext
    group = f"{GROUP_PREFIX}{table}-{round_no}"
    before = _ungrouped_jobs(spark)
    context.setJobGroup(group, f"merge probe table {table} round {round_no}")
    cpu_before = jvm_cpu_seconds(spark)
    started = time.perf_counter()
    try:
        if write is None:
            spark.sql(merge_sql(path, view))
        else:
            write()
        seconds = time.perf_counter() - started
        cpu_after = jvm_cpu_seconds(spark)
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        context.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]
    jobs = set(context.statusTracker().getJobIdsForGroup(group))
    jobs |= _ungrouped_jobs(spark) - before
    cpu = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    return MergeSample(
        table, round_no, seconds, len(jobs), _job_names(spark, jobs) if stages else (), cpu
    )


class BatchedWriter:
    """The batched engine's write of the probe's rows (``--engine batched``): the
    pipeline's own :meth:`~anycdc.spark.apply.TableApplier.commit_batched` on a table of
    the probe's columns, fed the same rows as the folded actions the pipeline hands it."""

    def __init__(self, spark: SparkSession, work: Path) -> None:
        from anycdc.config import PipelineConfig
        from anycdc.spark.commit import DeltaTables, LogState

        self.spark = spark
        self.config = PipelineConfig(target=str(work))
        self.tables = DeltaTables(spark)
        self.states: dict[str, LogState | None] = {}

    def path(self, table: int) -> str:
        return self.config.table_path(None, None, f"t{table}")

    def write(self, table: int, frame: DataFrame, round_no: int) -> None:
        from anycdc.spark.apply import TableApplier, TablePlan

        plan = TablePlan(None, None, f"t{table}", key=("id",))
        for name, spark_type in COLUMNS:
            plan.see(name, spark_type.lower())
        applier = TableApplier(self.spark, self.config, plan)
        types = dict(COLUMNS)
        path = applier.path
        self.states[path] = applier.commit_batched(
            frame, types, round_no, self.tables, self.states.get(path), QUERY_NAME
        )


def folded_source(frame: DataFrame) -> DataFrame:
    """The probe's rows (:func:`source`) as the pipeline's folded actions: ``st`` with the
    image as texts, the batch as a column (what :meth:`TableApplier.staged` reads)."""
    from pyspark.sql import functions as F

    image = F.create_map(
        *[part for name, _ in COLUMNS for part in (F.lit(name), F.col(name).cast("string"))]
    )
    state = F.struct(
        F.col("_kind").alias("kind"), image.alias("row"), F.col("_full").alias("full"),
        F.col("_pos").alias("pos"), F.expr("unix_millis(_ts)").alias("ts"),
        F.col("_op").alias("op"),
    )  # fmt: skip
    return frame.select(state.alias("st"), F.col("_batch").alias("_batch"))


def jvm_cpu_seconds(spark: SparkSession) -> float | None:
    """CPU seconds the driver JVM has used, all threads (``/proc``; None elsewhere): less
    sensitive than wall time to other work on a shared machine."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    try:
        with open(f"/proc/{proc.pid}/stat") as handle:  # type: ignore[union-attr]
            fields = handle.read().rsplit(")", 1)[1].split()
    except (AttributeError, OSError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def delta_jar(spark: SparkSession) -> str:
    """File name of the jar the JVM loaded Delta from."""
    jvm: Any = spark.sparkContext._jvm
    loader = jvm.Thread.currentThread().getContextClassLoader()
    cls = jvm.Class.forName("io.delta.tables.DeltaTable", True, loader)
    location = str(cls.getProtectionDomain().getCodeSource().getLocation().getPath())
    return location.rsplit("/", 1)[-1]


def jvm_zone(spark: SparkSession) -> str:
    """The driver JVM's default time zone (``user.timezone``)."""
    jvm: Any = spark.sparkContext._jvm
    return str(jvm.java.util.TimeZone.getDefault().getID())


def run(
    spark: SparkSession,
    work: Path,
    *,
    tables: int,
    rounds: int,
    rows: int,
    table_rows: int,
    warmup: int = 1,
    stages: bool = False,
    properties: dict[str, str] | None = None,
    alternate: bool = False,
    recorder: Recorder | None = None,
    engine: str = "merge",
) -> list[MergeSample]:
    """Load the tables, then ``warmup + rounds`` rounds of one MERGE per table; the samples
    of the measured rounds (``recorder`` started before the first of them). ``properties``
    go to every table, or (``alternate``) to every odd one only: the two kinds measured
    side by side, in the same rounds."""
    batched = BatchedWriter(spark, work) if engine == "batched" else None
    paths = [batched.path(n) if batched else str(work / f"t{n}") for n in range(tables)]
    for n, path in enumerate(paths):
        load(spark, path, table_rows, properties if not alternate or n % 2 else None)
    spark.conf.set(MATERIALIZE_SOURCE, "none")
    samples: list[MergeSample] = []
    for round_no in range(warmup + rounds):
        frame = source(spark, round_no, rows, table_rows)
        folded = folded_source(frame).localCheckpoint(eager=True) if batched else None
        view = f"anycdc_merge_probe_{round_no}"
        frame.createOrReplaceTempView(view)
        spark.conf.set(TXN_APP_ID, QUERY_NAME)
        spark.conf.set(TXN_VERSION, str(round_no))
        try:
            for table, path in enumerate(paths):
                if recorder is not None and round_no >= warmup and not recorder.started:
                    recorder.start(spark)
                write = None
                if batched is not None and folded is not None:
                    write = partial(batched.write, table, folded, round_no)
                sample = measure(spark, path, view, table, round_no, stages=stages, write=write)
                if round_no >= warmup:
                    samples.append(sample)
        finally:
            spark.conf.unset(TXN_APP_ID)
            spark.conf.unset(TXN_VERSION)
            spark.catalog.dropTempView(view)
            frame.unpersist()
            if folded is not None:
                folded.unpersist()
    return samples


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m anycdc.bench.merge_probe",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds")
    parser.add_argument("--rows", type=int, default=4000, help="source rows of one MERGE")
    parser.add_argument("--table-rows", type=int, default=20000, help="rows loaded per table")
    parser.add_argument("--warmup", type=int, default=1, help="rounds run first, not counted")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--work-dir", type=Path, help="where the tables go (default: a temp dir)")
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    parser.add_argument("--stages", action="store_true", help="name each MERGE's jobs")
    parser.add_argument(
        "--table-property", action="append", default=[], metavar="K=V",
        help="a Delta table property of the probe's tables (e.g. delta.columnMapping.mode=name)",
    )  # fmt: skip
    parser.add_argument(
        "--alternate", action="store_true",
        help="give the properties to every other table only, and summarize both kinds",
    )  # fmt: skip
    parser.add_argument(
        "--conf", action="append", default=[], metavar="K=V", help="a Spark setting (repeat)"
    )
    parser.add_argument(
        "--jfr", type=Path, metavar="FILE", help="a Java Flight Recorder recording of the rounds"
    )
    parser.add_argument(
        "--engine", choices=("merge", "batched"), default="merge",
        help="what writes each table: the MERGE (default) or the batched engine's commit",
    )  # fmt: skip
    args = parser.parse_args(argv)
    properties = dict(item.split("=", 1) for item in args.table_property)
    if min(args.tables, args.rounds, args.rows, args.table_rows) < 1 or args.warmup < 0:
        parser.error("--tables, --rounds, --rows and --table-rows must be positive")
    if any("=" not in item for item in args.conf):
        parser.error("--conf takes KEY=VALUE")
    conf = dict(item.split("=", 1) for item in args.conf)

    from anycdc.spark.session import get_spark

    temporary = args.work_dir is None
    work = (args.work_dir or Path(tempfile.mkdtemp(prefix="anycdc-merge-probe-"))).resolve()
    tool_scratch(work, "python -m anycdc.bench.merge_probe", ("t*", "_anycdc"))
    spark = get_spark("anycdc-merge-probe", master=args.master, conf=conf)
    recorder = Recorder(args.jfr.resolve() if args.jfr else None)
    try:
        samples = run(
            spark, work, tables=args.tables, rounds=args.rounds, rows=args.rows,
            table_rows=args.table_rows, warmup=args.warmup, stages=args.stages,
            properties=properties, alternate=args.alternate, recorder=recorder,
            engine=args.engine,
        )  # fmt: skip
        thread_cpu = recorder.stop(spark, len(samples)) if recorder.started else None
        report = ProbeReport(
            tables=args.tables, rounds=args.rounds, rows=args.rows, table_rows=args.table_rows,
            master=args.master, pyspark=metadata.version("pyspark"), delta_jar=delta_jar(spark),
            jvm_zone=jvm_zone(spark),
            session_zone=str(spark.conf.get("spark.sql.session.timeZone")),
            summary=summarize(samples), samples=samples, conf=conf,
            thread_cpu_seconds=thread_cpu,
        )  # fmt: skip
    finally:
        spark.stop()
        if temporary:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(report.as_json())
    else:
        if args.stages:
            for sample in samples:
                print(f"table {sample.table} round {sample.round}: {sample.seconds:.2f} s")
                for name in sample.stages:
                    print(f"    {name}")
        print("\n".join(report.lines()))
        if args.alternate:
            for kind, parity in (("without the properties", 0), ("with them", 1)):
                part = summarize([x for x in samples if x.table % 2 == parity])
                print(
                    f"{kind}: {part.merges} MERGEs, median {part.median_seconds:.2f} s "
                    f"(min {part.min_seconds:.2f}, max {part.max_seconds:.2f}), "
                    f"jobs {part.median_jobs:g}"
                )
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
