"""``python -m anycdc.bench.write_floor``: what Delta's own write and commit cost per table.

The batched engine's per-table apply is, at its core, one Delta ``writeFiles`` job and one
commit through Delta's transaction (:class:`anycdc.spark.commit.DeltaTables`). This probe
measures that core alone, with none of the pipeline's round around it (no changelog, no
fold, no tombstones, no ledger), so that a pipeline figure per table can be read against
the floor under it:

- **create**: ``--tables`` new tables of ``--rows`` rows each, each created by its first
  write (:meth:`DeltaTables.create`: version 0, metadata and files in one commit);
- **append**: one more write of ``--rows`` new rows to each (:meth:`DeltaTables.commit`, a
  ``writeFiles`` job and a commit with the write's ``SetTransaction``);
- **one job**: every table's rows of a round written by **one** Spark job (a Parquet write
  partitioned by table), then per table a commit that holds only its ``SetTransaction``.
  This is a lower bound of "one Spark job writes many tables, then N cheap commits", not an
  engine: its files are not added to the tables, and it computes none of the per-file
  statistics Delta's writer records (the ``stats`` of each ``AddFile``).

The creates and appends run ``--threads`` tables at a time (comma-separated counts are
measured in turn, as ``max_concurrent_tables`` would run them), in the session anycdc
builds (:func:`anycdc.spark.session.get_spark`). The first ``--warmup`` rounds compile the
plans and are not counted. The figures are wall seconds per table; compare two settings in
one run only.

Run: ``python -m anycdc.bench.write_floor [--tables 40] [--rows 400] [--rounds 2]
[--threads 1,4] [--master local[2]] [--work-dir DIR] [--json]``, e.g.::

    40 tables of 400 rows, 2 rounds (1 warmup), master local[2], seconds per table (median of rounds)
    1 table at a time: create 0.386, append 0.226
    4 tables at a time: create 0.263, append 0.165
    one job for every table's rows 0.081 + a SetTransaction-only commit 0.039 = 0.120
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from anycdc.scratch import tool_scratch

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

APP_ID = "anycdc-write-floor"


@dataclass
class FloorReport:
    """Seconds per table, each a list over the measured rounds.

    >>> report = FloorReport(tables=2, rows=10, rounds=1, warmup=0, master="local[2]")
    >>> report.create[1] = [0.5]; report.append[1] = [0.25]
    >>> report.one_job_write = [0.5]; report.one_job_commit = [0.125]
    >>> print(report.lines()[1]); print(report.lines()[2])
    1 table at a time: create 0.500, append 0.250
    one job for every table's rows 0.500 + a SetTransaction-only commit 0.125 = 0.625
    """

    tables: int
    rows: int
    rounds: int
    warmup: int
    master: str
    create: dict[int, list[float]] = field(default_factory=dict)
    append: dict[int, list[float]] = field(default_factory=dict)
    one_job_write: list[float] = field(default_factory=list)
    one_job_commit: list[float] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The report as a reader sees it: one line per thread count, one for the one job."""
        median = statistics.median
        lines = [
            f"{self.tables} tables of {self.rows} rows, {self.rounds} rounds ({self.warmup} "
            f"warmup), master {self.master}, seconds per table (median of rounds)"
        ]
        for threads in sorted(self.create):
            at_a_time = "table" if threads == 1 else "tables"
            lines.append(
                f"{threads} {at_a_time} at a time: create {median(self.create[threads]):.3f}, "
                f"append {median(self.append[threads]):.3f}"
            )
        if self.one_job_write:
            write, commit = median(self.one_job_write), median(self.one_job_commit)
            lines.append(
                f"one job for every table's rows {write:.3f} + a SetTransaction-only commit "
                f"{commit:.3f} = {write + commit:.3f}"
            )
        return lines

    def as_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def rows_frame(spark: SparkSession, first: int, rows: int) -> DataFrame:
    """``rows`` rows of a small orders-like table (a key, text, a decimal, a timestamp)."""
    return spark.range(first, first + rows).selectExpr(
        "id",
        "concat('name-', id) AS name",
        "CAST(id * 1.25 AS DECIMAL(18,2)) AS amount",
        "timestamp_seconds(id) AS ts",
    )


def per_table(tables: int, threads: int, write: Callable[[int], object]) -> float:
    """Wall seconds per table of ``write`` over ``tables`` tables, ``threads`` at a time."""
    started = time.perf_counter()
    with ThreadPoolExecutor(threads, thread_name_prefix="anycdc-write-floor") as pool:
        list(pool.map(write, range(tables)))
    return (time.perf_counter() - started) / tables


def run(
    spark: SparkSession,
    work: Path,
    *,
    tables: int,
    rows: int,
    rounds: int,
    threads: Sequence[int],
    warmup: int = 1,
    master: str = "local[2]",
) -> FloorReport:
    """Measure the rounds (see the module docstring); every round writes fresh tables."""
    from pyspark.sql import functions as F

    from anycdc.spark.commit import DeltaTables, LogState
    from anycdc.spark.session import activate_in_thread

    delta = DeltaTables(spark)
    report = FloorReport(tables=tables, rows=rows, rounds=rounds, warmup=warmup, master=master)
    for round_no in range(warmup + rounds):
        counted = round_no >= warmup
        states_by_count: dict[int, dict[int, LogState]] = {}
        for count in threads:
            root = work / f"round{round_no}-threads{count}"
            states = states_by_count.setdefault(count, {})

            def create(table: int, root: Path = root, states: dict[int, LogState] = states) -> None:
                activate_in_thread(spark)
                frame = rows_frame(spark, 0, rows)
                states[table] = delta.create(str(root / f"t{table}"), frame, {}, APP_ID, 0)

            def append(table: int, root: Path = root, states: dict[int, LogState] = states) -> None:
                activate_in_thread(spark)
                frame = rows_frame(spark, rows, rows)
                states[table] = delta.commit(
                    str(root / f"t{table}"), states[table], lambda *_: (frame, []), APP_ID, 1
                )

            created, appended = per_table(tables, count, create), per_table(tables, count, append)
            if counted:
                report.create.setdefault(count, []).append(created)
                report.append.setdefault(count, []).append(appended)
        # one job writes every table's rows, then each table commits its SetTransaction only
        tagged = None
        for table in range(tables):
            frame = rows_frame(spark, 2 * rows, rows).withColumn("__table", F.lit(table))
            tagged = frame if tagged is None else tagged.unionByName(frame)
        assert tagged is not None  # tables >= 1
        started = time.perf_counter()
        staging = str(work / f"round{round_no}-one-job")
        tagged.repartition("__table").write.partitionBy("__table").parquet(staging)
        written = (time.perf_counter() - started) / tables
        root = work / f"round{round_no}-threads{threads[0]}"
        started = time.perf_counter()
        for table in range(tables):
            path = str(root / f"t{table}")
            delta.commit(path, states_by_count[threads[0]][table], lambda *_: (None, []), APP_ID, 2)
        committed = (time.perf_counter() - started) / tables
        if counted:
            report.one_job_write.append(written)
            report.one_job_commit.append(committed)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m anycdc.bench.write_floor",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--rows", type=int, default=400, help="rows per table and write")
    parser.add_argument("--rounds", type=int, default=2, help="measured rounds")
    parser.add_argument("--warmup", type=int, default=1, help="rounds run first, not counted")
    parser.add_argument(
        "--threads", default="1,4", help="tables at a time, comma-separated (default 1,4)"
    )
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--work-dir", type=Path, help="where the tables go (default: a temp dir)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    try:
        threads = [int(item) for item in args.threads.split(",")]
    except ValueError:
        parser.error(f"--threads takes comma-separated counts, got {args.threads!r}")
    if min(args.tables, args.rows, args.rounds, *threads) < 1 or args.warmup < 0:
        parser.error("--tables, --rows, --rounds and --threads must be positive")

    from anycdc.spark.session import get_spark

    temporary = args.work_dir is None
    work = (args.work_dir or Path(tempfile.mkdtemp(prefix="anycdc-write-floor-"))).resolve()
    tool_scratch(work, "python -m anycdc.bench.write_floor", ("round*",))
    spark = get_spark("anycdc-write-floor", master=args.master)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        report = run(
            spark, work, tables=args.tables, rows=args.rows, rounds=args.rounds,
            threads=threads, warmup=args.warmup, master=args.master,
        )  # fmt: skip
    finally:
        spark.stop()
        if temporary:
            shutil.rmtree(work, ignore_errors=True)
    print(report.as_json() if args.json else "\n".join(report.lines()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
