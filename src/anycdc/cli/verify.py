"""``anycdc verify``: compare target tables with a ground truth, value by value."""

from __future__ import annotations

import argparse
import json
from typing import Any

from anycdc.cli.base import Command, fail
from anycdc.console import print_table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target", "-t", required=True, metavar="DIR", help="the run's target folder"
    )
    parser.add_argument(
        "--truth", required=True, metavar="DIR", help="ground truth (anycdc simulate)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON for machines")


def verify(spark: Any, target: str, truth: str) -> dict[str, Any]:
    """Per table: expected and actual rows, missing/extra rows, differing values, schema.

    Tables with a primary key are matched by key; a table without one as a multiset
    (a row twice in the truth must be twice in the target). The schema check names
    missing and extra columns and, per column, the Spark type of the truth's logical
    type versus the target's (``_cdc_`` metadata columns aside). SCD2 history tables
    (``anycdc run --mode scd2``) are compared by their current versions
    (``_cdc_is_current``): those are the source's rows.
    """
    from delta.tables import DeltaTable

    from anycdc.config import PipelineConfig
    from anycdc.naming import is_reserved, source_of
    from anycdc.verify import compare_table, load_truth

    config = PipelineConfig(target=target)
    tables, expected_dead = load_truth(truth)
    report = []
    for table in tables:
        path = config.table_path(table.database, None, table.table)
        actual: list[dict[str, Any]] = []
        schema: dict[str, str] = {}
        if DeltaTable.isDeltaTable(spark, path):
            frame = spark.read.format("delta").load(path)
            if "_cdc_is_current" in frame.columns:
                frame = frame.filter("_cdc_is_current")
            # compared under the source's names: a renamed column names its source in its
            # comment; anycdc's own columns (no such comment) are left out first
            names = {
                f.name: source_of(f.name, f.metadata.get("comment"))
                for f in frame.schema.fields
                if not (
                    is_reserved(f.name) and source_of(f.name, f.metadata.get("comment")) == f.name
                )
            }
            schema = {
                names[f.name]: f.dataType.simpleString()
                for f in frame.schema.fields
                if f.name in names
            }
            actual = [
                {names[k]: v for k, v in r.asDict().items() if k in names} for r in frame.collect()
            ]
        diff = compare_table(
            table.qualified, table.key, table.types, table.rows, actual, schema,
            config.decimal_default,
        )  # fmt: skip
        report.append(
            {
                "table": diff.table, "key": list(diff.key), "expected_rows": diff.expected_rows,
                "rows": diff.actual_rows, "exists": bool(schema),
                "missing": [_jsonable(k) for k in diff.missing],
                "extra": [_jsonable(k) for k in diff.extra],
                "different": [[_jsonable(k), c, _text(e), _text(a)] for k, c, e, a in diff.different],
                "schema": [list(item) for item in diff.schema],
                "columns": list(diff.columns),
            }
        )  # fmt: skip
    dead_path = f"{config.system_dir}/dead_letter"
    dead = (
        spark.read.format("delta").load(dead_path).count()
        if DeltaTable.isDeltaTable(spark, dead_path)
        else 0
    )
    ok = all(_table_ok(t) for t in report) and dead == expected_dead
    return {
        "ok": ok,
        "tables": report,
        "dead_letters": dead,
        "expected_dead_letters": expected_dead,
    }


def _table_ok(t: dict[str, Any]) -> bool:
    return not (t["missing"] or t["extra"] or t["different"] or t["schema"])


def _text(value: Any) -> str | None:
    return None if value is None else describe_value(value)


def describe_value(value: Any) -> str:
    from anycdc.verify import describe

    return describe(value, limit=200)


def _jsonable(values: tuple[Any, ...]) -> list[Any]:
    from anycdc.event import value_to_json

    out = []
    for value in values:
        try:
            out.append(value_to_json(value))
        except TypeError:
            out.append(str(value))
    return out


DETAILS_PER_KIND = 5


def print_report(result: dict[str, Any]) -> None:
    """The readable report: one line per table, then the first differences of each kind."""
    from anycdc.verify import describe

    rows = [
        [t["table"], "(none)" if not t["key"] else ",".join(t["key"]), t["expected_rows"],
         t["rows"] if t["exists"] else "no table", len(t["missing"]), len(t["extra"]),
         len(t["different"]), len(t["schema"]), "ok" if _table_ok(t) else "DIFF"]
        for t in result["tables"]
    ]  # fmt: skip
    print_table(
        "anycdc verify",
        ["table", "key", "expected", "rows", "missing", "extra", "different", "schema", ""],
        rows,
    )
    for t in result["tables"]:
        name = t["table"]
        for column, want, got in t["schema"]:
            if want is None:
                print(f"  {name} schema: extra column {column} ({got})")
            elif got is None:
                print(f"  {name} schema: missing column {column} ({want})")
            else:
                print(f"  {name} schema: {column} is {got}, expected {want}")
        label = "row" if not t["key"] else "key"
        for kind in ("missing", "extra"):
            items = t[kind]
            for item in items[:DETAILS_PER_KIND]:
                shown = (
                    ", ".join(
                        f"{c}={describe(v, 40)}" for c, v in zip(t["columns"], item, strict=False)
                    )
                    if not t["key"]
                    else ", ".join(
                        f"{c}={describe(v, 40)}" for c, v in zip(t["key"], item, strict=False)
                    )
                )
                print(f"  {name} {kind} {label}: {shown}")
            if len(items) > DETAILS_PER_KIND:
                print(f"  {name} ... and {len(items) - DETAILS_PER_KIND} more {kind}")
        for key, column, want, got in t["different"][:DETAILS_PER_KIND]:
            print(f"  {name} key={key} {column}: expected {want}, got {got}")
        if len(t["different"]) > DETAILS_PER_KIND:
            print(
                f"  {name} ... and {len(t['different']) - DETAILS_PER_KIND} more different values"
            )
    print(f"dead letters: {result['dead_letters']} (expected {result['expected_dead_letters']})")
    print("verify: OK" if result["ok"] else "verify: DIFFERENCES")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from anycdc.spark.session import get_spark

    # both folders looked at before Spark starts: a typo is one line, at once
    if not (Path(args.truth) / "manifest.json").is_file():
        return fail(
            f"--truth {args.truth}: no ground truth there (no manifest.json; "
            "`anycdc simulate` writes one)"
        )
    if not Path(args.target).is_dir():
        return fail(f"--target {args.target}: no such folder")
    spark = get_spark("anycdc verify")
    try:
        result = verify(spark, args.target, args.truth)
    except FileNotFoundError as exc:
        return fail(str(exc))
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print_report(result)
    return 0 if result["ok"] else 1


COMMAND = Command(
    name="verify",
    help="compare target tables with a ground truth",
    description="Compare every table of the ground truth (written by `anycdc simulate`) with the\n"
    "Delta table under --target: missing rows, extra rows, differing values (exact,\n"
    "per logical type), schema differences (missing or extra columns, a column whose\n"
    "type is not the one its logical type maps to) and the dead-letter count. Tables\n"
    "without a primary key are compared as multisets (a row twice in the truth must\n"
    "be there twice). Exits 1 on any difference.\n\n"
    "Example:\n  anycdc verify --target lake/ --truth sim/truth",
    add_arguments=add_arguments,
    run=run,
)
