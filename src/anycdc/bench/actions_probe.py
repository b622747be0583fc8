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

``--fold`` then times the fold of those actions into each key's state the same way: the
anchored fold (:func:`anycdc.spark.apply.fold_actions`, the default: a key's last delete or
full image by ``max_by``, only the partial images after it ordered) against the reference
(``anchored=False``: every action collected, sorted and stepped through), and checks that
both give every key the same state.

Run: ``python -m anycdc.bench.actions_probe --target WORK_DIR/anycdc-deferred [--rounds 3]
[--fold]``, e.g.::

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
    parser.add_argument("--fold", action="store_true", help="also time the fold of the actions: anchored against the reference")  # fmt: skip
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

    guarded_most = actions.COMMON_CHECKS_MAX
    a, b = (frame(m).select(*_ROW_COLUMNS) for m in (guarded_most, 0))
    differ = _side_by_side(
        ("guarded", lambda: frame(guarded_most)),
        ("lambda only", lambda: frame(0)),
        args.rounds,
        (a, b, "actions"),
    )
    if args.fold and not differ:
        differ = _folds(spark, frame(guarded_most), args.rounds)
    return 1 if differ else 0


def _side_by_side(
    first: tuple[str, Any], second: tuple[str, Any], rounds: int, compared: tuple[Any, Any, str]
) -> int:
    """Time the frames ``first`` and ``second`` make (name, function) into the ``noop`` sink,
    A B A B after one warm-up of each, print the seconds and their medians, and whether the
    ``compared`` frames hold the same rows; returns the rows that differ."""

    def seconds(make: Any) -> float:
        started = time.perf_counter()
        make().write.format("noop").mode("overwrite").save()
        return time.perf_counter() - started

    seconds(first[1]), seconds(second[1])  # compile and warm both plans
    print(f"round  {first[0]}  {second[0]}")
    pairs = []
    for index in range(rounds):
        pairs.append((seconds(first[1]), seconds(second[1])))
        print(f"{index + 1:<6} {pairs[-1][0]:6.2f} s   {pairs[-1][1]:6.2f} s", flush=True)
    one = statistics.median(p for p, _ in pairs)
    two = statistics.median(p for _, p in pairs)
    a, b, what = compared
    differ = int(a.exceptAll(b).count() + b.exceptAll(a).count())
    same = f"the same {a.count():,} {what} either way" if not differ else f"{differ} {what} DIFFER"
    print(f"median {one:6.2f} s   {two:6.2f} s   ({one / two:.2f}x); {same}")
    return differ


def _folds(spark: Any, round_actions: Any, rounds: int) -> int:
    """The anchored fold against the reference on the round's good actions (held in memory:
    the folds, not the actions, are timed); returns the keys whose states differ."""
    from pyspark.sql import functions as F

    from anycdc.config import PipelineConfig
    from anycdc.spark.apply import fold_actions
    from anycdc.spark.apply_round import apply_settings

    good = round_actions.filter(F.col("_bad").isNull()).drop("_bad")
    good = good.localCheckpoint(eager=True)
    by = ("_t", "_key")

    def states(anchored: bool) -> Any:  # a map is not comparable: its entries, sorted
        folded = fold_actions(good, by, anchored=anchored)
        row = F.to_json(F.array_sort(F.map_entries("st.row")))
        return folded.select(*by, "st.kind", "st.full", "st.pos", "st.ts", "st.op", row)

    print(f"the fold of {good.count():,} actions")
    with apply_settings(spark, PipelineConfig()):  # the apply's: an overlay's newer value wins
        return _side_by_side(
            ("anchored", lambda: fold_actions(good, by)),
            ("reference", lambda: fold_actions(good, by, anchored=False)),
            rounds,
            (states(True), states(False), "keys' states"),
        )


if __name__ == "__main__":
    sys.exit(main())
