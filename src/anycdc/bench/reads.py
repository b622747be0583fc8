"""``python -m anycdc.bench.reads``: a fresh read against a plain read of the same table.

A fresh read (:mod:`anycdc.spark.reads`) is the table's Delta version plus its pending
changelog rows, folded on read. This bench loads one table of ``--rows`` rows (an ``id``
key and four columns; created by the pipeline, then bulk-loaded), then leaves updates of
random existing keys pending in the changelog (the run's query without its final apply),
``--pending`` of the rows (a target per fraction). At each, it reads every row (a full scan into Spark's ``noop`` sink) plainly, by a fresh
read (made and read: the fold of the pending rows, then the scan), and by a query of a
fresh read made once (what each query of :func:`~anycdc.spark.reads.register_views`' views
costs),
A B A B for ``--rounds`` rounds in one session (after one untimed read each), and prints each side's median seconds and
their ratio. It then checks the fresh read against the table once the pending rows are
applied.

``--tables N`` (N > 1): a consistent read instead, of N tables of ``--rows`` rows each
with ``--pending`` of their rows pending (the first fraction given): every table as of
one cut (:meth:`~anycdc.spark.reads.TargetReads.read_many`, made and scanned), against a
plain read of the N Delta tables, and a query of every table of a read made once.

Run: ``python -m anycdc.bench.reads [--rows 1000000] [--pending 0.01 0.1] [--rounds 3]
[--tables 1] [--work-dir var/bench-reads]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anycdc.bench.key_ranges import COLUMNS, change, load_table, write_round
from anycdc.config import PipelineConfig
from anycdc.event import Op
from anycdc.scratch import tool_scratch

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TABLE = "bench.big"
HOUR_S = 3600.0  # a freshness the bench never reaches: what it ingests stays pending


def _config(source: Path, target: Path) -> PipelineConfig:
    return PipelineConfig.from_mapping({
        "source_dir": str(source), "target": str(target), "freshness": HOUR_S,
        "auto_compact": False, "vacuum_every_hours": 0,
    })  # fmt: skip


def _seconds(action: Callable[[], Any]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _list(seconds: list[float]) -> str:
    return ", ".join(f"{s:.2f}" for s in seconds)


def side_by_side(
    spark: SparkSession, target: Path, rounds: int
) -> tuple[list[float], list[float], list[float]]:
    """Seconds of a plain read, a fresh read (made and read) and a query of a fresh read
    made once (a view's), alternating."""
    from anycdc.spark.reads import TargetReads

    path = str(target / "bench" / "big")

    def plain() -> None:
        spark.read.format("delta").load(path).write.format("noop").mode("overwrite").save()

    def fresh() -> None:
        reads = TargetReads(spark, str(target))
        reads.read(TABLE).write.format("noop").mode("overwrite").save()

    built: list[Any] = []

    def query() -> None:  # a query of a read already made (a view's): the fold is done
        built[0].write.format("noop").mode("overwrite").save()

    plain_s: list[float] = []
    fresh_s: list[float] = []
    query_s: list[float] = []
    # warm: the session's first reads compile what the others reuse
    plain()
    fresh()
    built.append(TargetReads(spark, str(target)).read(TABLE))
    for number in range(rounds):
        order = [(plain, plain_s), (fresh, fresh_s), (query, query_s)]
        for action, times in order if number % 2 == 0 else reversed(order):
            times.append(_seconds(action))
    return plain_s, fresh_s, query_s


def consistent_side_by_side(
    spark: SparkSession, target: Path, names: list[str], rounds: int
) -> tuple[list[float], list[float], list[float]]:
    """Seconds of plain reads of every table, a consistent read of them all (made and
    scanned) and a query of each table of a consistent read made once, alternating."""
    from anycdc.spark.reads import TargetReads

    paths = [str(target / Path(*name.split("."))) for name in names]

    def scan(frame: Any) -> None:
        frame.write.format("noop").mode("overwrite").save()

    def plain() -> None:
        for path in paths:
            scan(spark.read.format("delta").load(path))

    def consistent() -> None:
        for frame in TargetReads(spark, str(target)).read_many(names).values():
            scan(frame)

    built: dict[str, Any] = {}

    def query() -> None:
        for frame in built.values():
            scan(frame)

    plain_s: list[float] = []
    consistent_s: list[float] = []
    query_s: list[float] = []
    plain()
    consistent()
    built.update(TargetReads(spark, str(target)).read_many(names))
    for number in range(rounds):
        order = [(plain, plain_s), (consistent, consistent_s), (query, query_s)]
        for action, times in order if number % 2 == 0 else reversed(order):
            times.append(_seconds(action))
    return plain_s, consistent_s, query_s


def consistent_main(
    spark: SparkSession, work: Path, tables: int, rows: int, files: int, fraction: float,
    rounds: int, rng: random.Random,
) -> int:  # fmt: skip
    """The ``--tables`` bench (see the module docstring)."""
    from msgspec.structs import replace

    from anycdc.spark.pipeline import Pipeline
    from anycdc.spark.reads import TargetReads

    source, target = work / "messages", work / "lake"
    config = _config(source, target)
    names = [f"bench.t{n:03}" for n in range(tables)]
    first = change(Op.INSERT, -1, 2, "first")
    write_round(source, 0, [replace(first, table=n.split(".")[1]) for n in names])
    # loaded before the run's first apply, which then has them: a read of a cut reads each
    # table as of its last apply, and a load after it would be no apply's
    for name in names:
        load_table(spark, target / Path(*name.split(".")), rows, files)
    Pipeline(spark, config).run()  # the tables' first apply
    wanted = int(rows * fraction)
    updates = []
    for name in names:
        keys = rng.sample(range(rows), wanted)
        updates += [
            replace(change(Op.UPDATE, k, 10 + i, "u"), table=name.split(".")[1])
            for i, k in enumerate(keys)
        ]
    write_round(source, 1, updates)
    Pipeline(spark, config).start().awaitTermination()  # ingested, left pending
    plain_s, made_s, query_s = consistent_side_by_side(spark, target, names, rounds)
    base = statistics.median(plain_s)
    print(
        f"{tables} tables of {rows:,} rows, {fraction:.0%} pending ({wanted:,} updates each): "
        f"plain reads {base:.2f} s; a consistent read {statistics.median(made_s):.2f} s = "
        f"{statistics.median(made_s) / base:.2f}x; a query of every table of it once made "
        f"{statistics.median(query_s):.2f} s = {statistics.median(query_s) / base:.2f}x\n"
        f"  each: plain {_list(plain_s)}; consistent {_list(made_s)}; query {_list(query_s)}"
    )
    read = {
        name: frame.select(*COLUMNS).cache()
        for name, frame in TargetReads(spark, str(target)).read_many(names).items()
    }
    for frame in read.values():
        frame.count()
    Pipeline(spark, config).run()  # applies what is pending
    differ = 0
    for name, frame in read.items():
        stored = spark.read.format("delta").load(str(target / Path(*name.split("."))))
        stored = stored.select(*COLUMNS)
        differ += frame.exceptAll(stored).count() + stored.exceptAll(frame).count()
        frame.unpersist()
    print(f"  the consistent read vs the tables once applied: {differ} differences")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m anycdc.bench.reads", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=8, help="files the table is loaded in")
    parser.add_argument("--pending", type=float, nargs="+", default=[0.01, 0.1])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--tables", type=int, default=1, help="> 1: a consistent read")
    parser.add_argument("--work-dir", type=Path, default=Path("var/bench-reads"))
    args = parser.parse_args(argv)

    from anycdc.spark.pipeline import Pipeline
    from anycdc.spark.session import get_spark

    work = args.work_dir.resolve()
    tool_scratch(work, "python -m anycdc.bench.reads", ("messages*", "lake*"))
    spark = get_spark("anycdc-bench-reads")
    rng = random.Random(args.seed)
    if args.tables > 1:
        return consistent_main(
            spark, work, args.tables, args.rows, args.files, min(args.pending), args.rounds, rng
        )
    stored = fresh = None
    for number, fraction in enumerate(sorted(args.pending), start=1):
        # a target per fraction: a run that finds rows pending applies them first
        source, target = work / f"messages{number}", work / f"lake{number}"
        config = _config(source, target)
        write_round(source, 0, [change(Op.INSERT, -1, 2, "first")])
        Pipeline(spark, config).run()  # creates the table (its final apply)
        load_table(spark, target / "bench" / "big", args.rows, args.files)
        wanted = int(args.rows * fraction)
        keys = rng.sample(range(args.rows), wanted)
        write_round(source, 1, [change(Op.UPDATE, k, 10 + i, "u") for i, k in enumerate(keys)])
        Pipeline(spark, config).start().awaitTermination()  # ingested, left pending
        plain_s, fresh_s, query_s = side_by_side(spark, target, args.rounds)
        base = statistics.median(plain_s)
        print(
            f"{args.rows:,} rows, {fraction:.0%} pending ({wanted:,} updates): plain read "
            f"{base:.2f} s; fresh read {statistics.median(fresh_s):.2f} s = "
            f"{statistics.median(fresh_s) / base:.2f}x; a query of it once made "
            f"{statistics.median(query_s):.2f} s = {statistics.median(query_s) / base:.2f}x\n"
            f"  each: plain {_list(plain_s)}; fresh {_list(fresh_s)}; query {_list(query_s)}"
        )
        from anycdc.spark.reads import TargetReads

        fresh = TargetReads(spark, str(target)).read(TABLE).select(*COLUMNS).cache()
        fresh.count()
        Pipeline(spark, config).run()  # applies what is pending
        stored = spark.read.format("delta").load(str(target / "bench" / "big")).select(*COLUMNS)
        differ = fresh.exceptAll(stored).count() + stored.exceptAll(fresh).count()
        fresh.unpersist()
        print(f"  the fresh read vs the table once applied: {differ} differences")
        if differ:
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
