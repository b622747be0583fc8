"""``python -m anycdc.bench.key_ranges``: MERGEs into a big table, with and without key ranges.

A MERGE joins the batch with its target table. Without bounds it reads the whole table
in every micro-batch, so its cost grows with the table; with them (``key_range_min_mb``,
see :meth:`anycdc.spark.apply.TableApplier.key_ranges`) Delta skips the files whose key
statistics lie outside the batch's keys.

The bench loads one table of ``--rows`` rows (an ``id`` key and four columns) in
``--files`` files of ascending key ranges — as a snapshot read in key order, or rows with
auto-increment ids, are laid out — into two targets. Then ``--rounds`` micro-batches, each
``--batch`` updates of recent keys and as many inserts of new ones, are applied by
``anycdc run`` (a folder source) to both targets side by side, one with the bounds
(``key_range_min_mb=0``) and one without, alternating which goes first. It prints each
round's apply seconds and the ratio of the medians, then checks that both targets hold
the same rows.

Run: ``python -m anycdc.bench.key_ranges [--rows 5000000] [--files 32] [--batch 1000]
[--rounds 5] [--work-dir var/bench-key-ranges]``
"""

from __future__ import annotations

import argparse
import statistics
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from anycdc.config import PipelineConfig
from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.formats import get_format
from anycdc.scratch import tool_scratch
from anycdc.values import LogicalType

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

COLUMNS = {
    "id": Column(LogicalType("int64"), "bigint"),
    "name": Column(LogicalType("string"), "varchar(32)"),
    "qty": Column(LogicalType("int32"), "int"),
    "price": Column(LogicalType("decimal", 12, 2), "decimal(12,2)"),
}
WITHOUT_BOUNDS_MB = 1e9  # a size no table here reaches: every MERGE reads the whole table


def change(op: Op, key: int, position: int, name: str) -> ChangeEvent:
    row = {"id": key, "name": name, "qty": key % 1000, "price": Decimal(key % 10_000) / 100}
    return ChangeEvent(
        op=op, format="canonical-json", database="bench", table="big", key=("id",),
        after=row, columns=COLUMNS, ts_ms=1_700_000_000_000 + position,
        position=Position((position,)),
    )  # fmt: skip


def write_round(folder: Path, number: int, events: list[ChangeEvent]) -> None:
    encoder = get_format("canonical-json")
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"{number:05}.jsonl").open("wb") as out:
        for event in events:
            for message in encoder.encode(event):
                out.write(message + b"\n")


def apply_seconds(spark: SparkSession, source: Path, target: Path, min_mb: float) -> float:
    """Run the pipeline over what is new in ``source``; the apply stage's seconds."""
    from anycdc.spark.pipeline import Pipeline

    config = PipelineConfig.from_mapping({
        "source_dir": str(source), "target": str(target), "key_range_min_mb": min_mb,
        "auto_compact": False, "vacuum_every_hours": 0,
    })  # fmt: skip
    batches = Pipeline(spark, config).run()
    return sum(batch.phases.get("apply", 0.0) for batch in batches)


def load_table(spark: SparkSession, table: Path, rows: int, files: int) -> None:
    """Append ``rows`` rows in ``files`` files of ascending id ranges (position 1: older
    than every change of the rounds)."""
    frame = spark.range(rows).selectExpr(
        "id", "concat('n', id) AS name", "CAST(id % 1000 AS INT) AS qty",
        "CAST(id % 10000 / 100 AS DECIMAL(12,2)) AS price",
        f"'{Position((1,)).sort_key()}' AS _cdc_position",
        "timestamp_millis(1700000000000) AS _cdc_ts", "'snapshot' AS _cdc_op",
        "CAST(0 AS BIGINT) AS _cdc_batch",
    )  # fmt: skip
    frame.repartitionByRange(files, "id").sortWithinPartitions("id").write.format("delta").mode(
        "append"
    ).save(str(table))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m anycdc.bench.key_ranges", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--files", type=int, default=32)
    parser.add_argument("--batch", type=int, default=1000, help="updates (and inserts) a round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--work-dir", type=Path, default=Path("var/bench-key-ranges"))
    args = parser.parse_args(argv)

    from anycdc.spark.session import get_spark

    work = args.work_dir.resolve()
    tool_scratch(work, "python -m anycdc.bench.key_ranges", ("messages", "bounded", "whole"))
    source = work / "messages"
    targets = {"bounded": (work / "bounded", 0.0), "whole": (work / "whole", WITHOUT_BOUNDS_MB)}
    spark = get_spark("anycdc-bench-key-ranges")
    # round 0 creates both tables (one row, below the loaded range), then the load
    write_round(source, 0, [change(Op.INSERT, -1, 2, "first")])
    for target, min_mb in targets.values():
        apply_seconds(spark, source, target, min_mb)
        load_table(spark, target / "bench" / "big", args.rows, args.files)
    print(f"loaded {args.rows:,} rows in {args.files} files into both targets")
    times: dict[str, list[float]] = {name: [] for name in targets}
    position = 10
    for number in range(1, args.rounds + 1):
        recent = args.rows - args.batch * 10  # the newest tenth-of-a-file: hot rows
        events = []
        for i in range(args.batch):
            events.append(
                change(Op.UPDATE, recent + i * 7 % (args.batch * 10), position, f"r{number}")
            )
            events.append(
                change(Op.INSERT, args.rows + (number - 1) * args.batch + i, position + 1, "new")
            )
            position += 2
        write_round(source, number, events)
        order = list(targets) if number % 2 else list(reversed(targets))
        for name in order:
            target, min_mb = targets[name]
            times[name].append(apply_seconds(spark, source, target, min_mb))
        print(f"round {number}: apply " + ", ".join(f"{n} {times[n][-1]:.2f} s" for n in targets))
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(
        f"median apply: bounded {medians['bounded']:.2f} s, whole {medians['whole']:.2f} s "
        f"= {medians['whole'] / medians['bounded']:.2f}x"
    )
    left, right = (
        spark.read.format("delta").load(str(t / "bench" / "big")) for t, _ in targets.values()
    )
    columns = list(COLUMNS)
    differ = left.select(*columns).exceptAll(right.select(*columns)).count()
    differ += right.select(*columns).exceptAll(left.select(*columns)).count()
    print(f"rows: {left.count():,} in each target, {differ} differences")
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
