"""``python -m anycdc.bench.actions_probe``: seconds of an apply round's row actions, with
the round's common cast checks tested in generated code and without.

An apply round turns every due table's pending changelog rows into row actions in one plan
(:func:`anycdc.spark.actions.round_actions`), and each action's ``_bad`` says why a value
cannot be cast to its column. That reason comes from a lambda over the table's checks, which
Spark evaluates without generated code; the round guards it with a generated test of its
most shared checks (:data:`~anycdc.spark.actions.COMMON_CHECKS_MAX`), so the lambda runs
only for actions that may hold a bad value. ``--common 0`` is the round without the guard
(the lambda for every action, as before), the reference this probe compares with.

It reads the changelog and the tables of a target an ``anycdc bench`` run left (its
``--work-dir``'s ``anycdc-deferred``: every event is pending there when the run stops before
its final apply, or is kept in the changelog after it), holds the changelog rows in memory,
then writes the actions of all its tables to Spark's ``noop`` sink, A B A B, and checks that
both give the same actions. The key of each table is the one its changelog rows name; its
checked types are its Delta table's.

Run: ``python -m anycdc.bench.actions_probe --target WORK_DIR/anycdc-deferred [--rounds 3]``,
e.g.::

    1,000,000 changelog rows, 50 tables, 9 common checks
    round  guarded  lambda only
    1       2.97 s       7.26 s
    ...
    median  2.95 s       7.20 s   (0.41x); the same 1,123,456 actions either way
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

_ROW_COLUMNS = ("_t", "_key", "kind", "position", "partition", "offset", "event_index", "_bad")


def _specs(spark: Any, target: Path, changelog: Any) -> list[Any]:
    from anycdc.spark.actions import ActionSpec, checked_columns

    keys = {
        (row["database"], row["schema"], row["table"]): tuple(row["key"] or ())
        for row in changelog.groupBy("database", "schema", "table").agg({"key": "first"})
        .withColumnRenamed("first(key)", "key").collect()
    }  # fmt: skip
    specs = []
    for index, ((database, schema, table), key) in enumerate(sorted(keys.items(), key=str)):
        folder = target.joinpath(*(p for p in (database, schema, table) if p))
        if not (folder / "_delta_log").is_dir() or not key:
            continue
        fields = spark.read.format("delta").load(str(folder)).schema.fields
        types = {
            f.name: f.dataType.simpleString().upper()
            for f in fields
            if not f.name.startswith("_cdc_")
        }
        checks = checked_columns(types)
        specs.append(ActionSpec(str(index), database, schema, table, key, checks=checks))
    return specs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anycdc.bench.actions_probe", description=__doc__.split("\n\n")[0])  # fmt: skip
    parser.add_argument("--target", type=Path, required=True, help="a bench run's anycdc-deferred target")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds (A B each), after one warm-up of each")  # fmt: skip
    args = parser.parse_args(argv)
    changelog_dir = args.target / "_anycdc" / "changelog"
    if not (changelog_dir / "_delta_log").is_dir():
        print(f"actions_probe: --target {args.target}: no changelog at {changelog_dir}")
        return 2
    if args.rounds < 1:
        print("actions_probe: --rounds: at least 1")
        return 2

    from anycdc.spark import actions
    from anycdc.spark.session import get_spark

    spark = get_spark()
    spark.sparkContext.setLogLevel("ERROR")
    changelog = spark.read.format("delta").load(str(changelog_dir)).drop("raw")
    specs = _specs(spark, args.target, changelog)
    if not specs:
        print(f"actions_probe: --target {args.target}: no table with a key and a Delta folder")
        return 2
    changelog = changelog.localCheckpoint(eager=True)  # the rows, not their read, are timed
    common = actions.common_checks(specs)
    print(f"{changelog.count():,} changelog rows, {len(specs)} tables, {len(common)} common checks")

    def frame(most: int) -> Any:
        return actions.round_actions(spark, changelog, specs, most)

    def seconds(most: int) -> float:
        started = time.perf_counter()
        frame(most).write.format("noop").mode("overwrite").save()
        return time.perf_counter() - started

    guarded_most = actions.COMMON_CHECKS_MAX
    seconds(guarded_most), seconds(0)  # compile and warm both plans
    print("round  guarded  lambda only")
    pairs = []
    for index in range(args.rounds):
        pairs.append((seconds(guarded_most), seconds(0)))
        print(f"{index + 1:<6} {pairs[-1][0]:6.2f} s   {pairs[-1][1]:6.2f} s", flush=True)
    guarded = statistics.median(a for a, _ in pairs)
    lambda_only = statistics.median(b for _, b in pairs)
    a, b = (frame(m).select(*_ROW_COLUMNS) for m in (guarded_most, 0))
    differ = a.exceptAll(b).count() + b.exceptAll(a).count()
    same = (
        f"the same {a.count():,} actions either way" if not differ else f"{differ} actions DIFFER"
    )
    print(
        f"median {guarded:6.2f} s   {lambda_only:6.2f} s   ({guarded / lambda_only:.2f}x); {same}"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
