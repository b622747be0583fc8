"""``anycdc status``: what the pipeline has applied, table by table."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, Final

from anycdc.cli.base import Command, fail, no_run_under
from anycdc.console import age_text, print_table, utc_time


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target", "-t", required=True, metavar="DIR", help="the run's target folder"
    )
    parser.add_argument("--json", action="store_true", help="print JSON for machines")


def collect(spark: Any, target: str) -> dict[str, Any]:
    """Per table: rows, last position, last source time, freshness, dead letters.

    ``rows`` counts what a reader of the table sees as the source's rows: for an SCD2
    history table the current versions; ``versions`` counts every row of it (None for SCD1).
    The facts the metrics serve per table (:mod:`anycdc.metrics`) are here too: ``applies``,
    ``last_applied_ts_ms``, ``pending_rows``, ``staleness_s`` and ``dead_letters_by_reason``.
    """
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from anycdc.metrics import SCHEMA_CHANGE
    from anycdc.spark.accounting import skipped_by_reason

    error = F.col("error")
    reasons = {
        "cast": error.isNull(),
        "schema": error.startswith(SCHEMA_CHANGE),
        "failed": error.isNotNull() & ~error.startswith(SCHEMA_CHANGE),
    }

    system = f"{target.rstrip('/')}/_anycdc"
    if not DeltaTable.isDeltaTable(spark, f"{system}/batches"):
        raise FileNotFoundError(f"no anycdc run found under {target} (missing _anycdc/batches)")
    batches = spark.read.format("delta").load(f"{system}/batches")
    per_table = (
        batches.filter(
            F.col("table").isNotNull() & F.col("path").isNotNull() & (F.col("path") != "")
        )
        .groupBy("table", "path")
        .agg(
            F.max("max_position").alias("last_position"),
            F.max("max_ts_ms").alias("last_ts_ms"),
            F.sum("dead_letters").alias("dead_letters"),
            F.sum("events").alias("events"),
            F.max("batch_id").alias("last_batch"),
            F.max_by("error", "batch_id").alias("last_error"),
            F.count(F.when(error.isNull(), 1)).alias("applies"),
            F.max(F.when(error.isNull(), F.col("processed_at"))).alias("last_applied_at"),
            *(
                F.sum(F.when(where, F.col("dead_letters"))).alias(f"dead_{reason}")
                for reason, where in reasons.items()
            ),
        )
        .collect()
    )
    heartbeat = batches.agg(F.max("heartbeat_ts_ms")).first()[0]
    dead_total = 0
    if DeltaTable.isDeltaTable(spark, f"{system}/dead_letter"):
        dead_total = spark.read.format("delta").load(f"{system}/dead_letter").count()
    now_ms = int(time.time() * 1000)
    deferral = _deferral(spark, target, system, batches, now_ms)
    tables = []
    for row in sorted(per_table, key=lambda r: r["table"]):
        count, versions, renamed, keyless = _table_facts(spark, row["path"])
        newest = max(row["last_ts_ms"] or 0, heartbeat or 0)
        extra = deferral.pop(row["path"], {})
        tables.append(
            {
                "table": row["table"],
                "path": row["path"],
                "rows": count,
                "versions": versions,
                "events_applied": int(row["events"] or 0),
                "last_position": _position_text(row["last_position"]),
                "last_source_ts_ms": row["last_ts_ms"],
                "freshness_s": round((now_ms - newest) / 1000, 1) if newest else None,
                "dead_letters": int(row["dead_letters"] or 0),
                "dead_letters_by_reason": {r: int(row[f"dead_{r}"] or 0) for r in reasons},
                "applies": int(row["applies"]),
                "last_applied_ts_ms": _ts_ms(row["last_applied_at"]),
                "last_batch": row["last_batch"],
                "last_error": row["last_error"],
                "renamed_columns": renamed,
                "folder_shortened": _shortened(row["path"]),
                "full_row_identity": keyless,
                **_deferral_fields(extra),
            }
        )
    for path, extra in sorted(deferral.items()):  # pending, never applied yet
        tables.append(
            {
                "table": extra["table"], "path": path, "rows": 0, "versions": None,
                "events_applied": 0, "last_position": None, "last_source_ts_ms": None,
                "freshness_s": None, "dead_letters": 0,
                "dead_letters_by_reason": dict.fromkeys(reasons, 0), "applies": 0,
                "last_applied_ts_ms": None, "last_batch": None,
                "last_error": None, "renamed_columns": {}, "folder_shortened": False,
                "full_row_identity": False, **_deferral_fields(extra),
            }
        )  # fmt: skip
    run = (
        batches.filter(F.col("table").isNull())
        .agg(
            F.max("batch_id").alias("batch"),
            F.max("max_ts_ms").alias("ts"),
            F.max("processed_at").alias("at"),
            F.sum("dead_letters").alias("undecoded"),
        )
        .first()
    )
    ingested_ts = max(run["ts"] or 0, heartbeat or 0) if run else 0
    return {
        "target": target,
        "tables": tables,
        "dead_letters": dead_total,
        "dead_letters_by_reason": {
            "decode": int(run["undecoded"] or 0) if run else 0,
            **{r: sum(t["dead_letters_by_reason"][r] for t in tables) for r in reasons},
        },
        "skipped": dict(skipped_by_reason(batches)),
        "heartbeat_ts_ms": heartbeat,
        "last_batch": run["batch"] if run else None,
        "ingest_lag_s": round((now_ms - ingested_ts) / 1000, 1) if ingested_ts else None,
    }


def _deferral_fields(extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "applied_through_batch": extra.get("through"),
        "pending_rows": extra.get("pending", 0),
        "staleness_s": extra.get("staleness_s"),
        "freshness_target_s": extra.get("target_s"),
    }


def _deferral(
    spark: Any, target: str, system: str, batches: Any, now_ms: int
) -> dict[str, dict[str, Any]]:
    """Per table path: the ingest batch it is applied through (``_anycdc/applied``), its
    pending changelog rows, how long the oldest has waited, and its freshness target."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from anycdc.config import PipelineConfig
    from anycdc.schedule import qualified_name
    from anycdc.spark.ledger import INGEST_BATCH, pending_per_batch

    config = PipelineConfig(target=target)
    out: dict[str, dict[str, Any]] = {}
    through: dict[tuple[Any, ...], int] = {}
    if DeltaTable.isDeltaTable(spark, f"{system}/applied"):
        applied = spark.read.format("delta").load(f"{system}/applied")
        rows = (
            applied.filter(F.col("source_table").isNotNull())
            .groupBy("database", "schema", "source_table")
            .agg(
                F.max("through").alias("through"),
                F.max_by("freshness_s", "applied_at").alias("target_s"),
            )
            .collect()
        )
        for row in rows:
            ident = (row["database"], row["schema"], row["source_table"])
            through[ident] = int(row["through"])
            out[config.table_path(*ident)] = {
                "table": qualified_name(ident),
                "through": int(row["through"]),
                "target_s": row["target_s"],
            }
    if not DeltaTable.isDeltaTable(spark, f"{system}/changelog"):
        return out
    changelog = spark.read.format("delta").load(f"{system}/changelog")
    if INGEST_BATCH not in changelog.columns:
        return out
    ingested_at = {
        int(r["batch_id"]): r["at"]
        for r in batches.filter(F.col("table").isNull())
        .groupBy("batch_id")
        .agg(F.min("processed_at").alias("at"))
        .collect()
    }
    per_batch = pending_per_batch(changelog).collect()
    for row in per_batch:
        ident = (row["database"], row["schema"], row["table"])
        batch = int(row[INGEST_BATCH])
        if batch <= through.get(ident, -1):
            continue
        entry = out.setdefault(
            config.table_path(*ident), {"table": qualified_name(ident), "through": None}
        )
        entry["pending"] = entry.get("pending", 0) + int(row["rows"])
        # staleness counts from the Kafka record time where there is one, else the ingest
        at = ingested_at.get(batch)
        since_s = (
            row["produced_ms"] / 1000
            if row["produced_ms"] is not None
            else at.timestamp()
            if at is not None
            else None
        )
        if since_s is not None:
            waited = round(now_ms / 1000 - since_s, 1)
            entry["staleness_s"] = max(entry.get("staleness_s") or 0.0, waited)
    return out


def _table_facts(spark: Any, path: str) -> tuple[int, int | None, dict[str, str], bool]:
    """(rows, history versions, renamed columns, keyless): an SCD2 table's rows are its
    current versions; a renamed column (target -> source) names its source in its comment;
    a table without a key from any source matches its rows by full-row identity (its
    ``_cdc_row_key`` column). A table that could not be created (its events dead-lettered)
    has no rows."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from anycdc.naming import source_of
    from anycdc.spark.merge_sql import ROW_KEY
    from anycdc.spark.table_schema import HISTORY_MARKER

    if not DeltaTable.isDeltaTable(spark, path):
        return 0, None, {}, False
    frame = spark.read.format("delta").load(path)
    renamed = {}
    for f in frame.schema.fields:
        source = source_of(f.name, f.metadata.get("comment"))
        if source != f.name:
            renamed[f.name] = source
    keyless = ROW_KEY in frame.columns
    if HISTORY_MARKER not in frame.columns:
        return frame.count(), None, renamed, keyless
    counts = frame.agg(
        F.count(F.lit(1)).alias("versions"),
        F.sum(F.col(HISTORY_MARKER).cast("int")).alias("current"),
    ).first()
    return int(counts["current"] or 0), int(counts["versions"]), renamed, keyless


def _shortened(path: str) -> bool:
    """Whether the table's folder name is a shortened one (:func:`anycdc.naming.path_segment`:
    cut to the longest folder name at a character boundary, then ``~`` + a hash); the
    ``table`` column holds its full name."""
    from anycdc.naming import HASH_DIGITS, MAX_SEGMENT_BYTES

    folder = path.rstrip("/").rsplit("/", 1)[-1]
    size = len(folder.encode("utf-8", "surrogatepass"))
    return size > MAX_SEGMENT_BYTES - 4 and folder[-HASH_DIGITS - 1] == "~"


KEYLESS_NOTE: Final = "no key: full-row identity"
"""Said of a table no source gave a key: its rows are matched by all their values (give
``--primary-key`` if the table has one)."""


def _names_text(table: dict[str, Any]) -> str:
    """The status column ``names``: renamed columns (``target <- source``) and a shortened
    folder (``folder <name>``).

    >>> _names_text({"renamed_columns": {"name__82a3537f": "name"}, "folder_shortened": True,
    ...              "path": "/t/shop/x~0123456789abcdef"})
    'name__82a3537f <- name; folder x~0123456789abcdef'
    >>> _names_text({"full_row_identity": True})
    'no key: full-row identity'
    """
    renamed = table.get("renamed_columns") or {}
    parts = [KEYLESS_NOTE] if table.get("full_row_identity") else []
    parts += [f"{target} <- {source}" for target, source in renamed.items()]
    if table.get("folder_shortened"):
        parts.append("folder " + table["path"].rstrip("/").rsplit("/", 1)[-1])
    return "; ".join(parts)


def _position_text(sort_key: str | None) -> str | None:
    """``0358.0212`` (the sortable form) -> ``358:12`` (the vendor's parts)."""
    from anycdc.event import Position

    return str(Position.from_sort_key(sort_key)) if sort_key else None


def run(args: argparse.Namespace) -> int:
    from anycdc.spark.session import get_spark

    missing = no_run_under(args.target, "batches")
    if missing:
        return fail(missing)
    spark = get_spark("anycdc status")
    try:
        report = collect(spark, args.target)
    except FileNotFoundError as exc:
        return fail(str(exc))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    history = any(t["versions"] is not None for t in report["tables"])
    rows = [
        [
            t["table"], t["rows"], *([t["versions"] or ""] if history else []),
            t["events_applied"], t["last_position"] or "", utc_time(t["last_source_ts_ms"]),
            _age(t["freshness_s"]),
            "" if t["applied_through_batch"] is None else t["applied_through_batch"],
            t["pending_rows"], _age(t["staleness_s"]), _seconds(t["freshness_target_s"]),
            t["dead_letters"], _names_text(t), t["last_error"] or "",
        ]
        for t in report["tables"]
    ]  # fmt: skip
    headers = ["table", "rows", *(["versions"] if history else []), "events", "last position",
               "last source time", "freshness", "applied through", "pending", "waiting",
               "target", "dead letters", "names", "last error"]  # fmt: skip
    print_table(f"anycdc status: {args.target}", headers, rows)
    print(f"dead letters in total: {report['dead_letters']}")
    if report["skipped"]:
        # the changelog rows no table takes, by documented reason (anycdc audit: each row)
        parts = ", ".join(f"{n} {reason}" for reason, n in report["skipped"].items())
        print(f"skipped (applied to no table): {parts}")
    if report["last_batch"] is not None:
        lag = report["ingest_lag_s"]
        when = "at an unknown time" if lag is None else f"{age_text(lag)} ago"
        print(f"last batch: {report['last_batch']}; newest source change ingested {when}")
    return 0


def _ts_ms(at: Any) -> int | None:
    """Unix milliseconds of a timestamp read back from Delta (None stays None)."""
    return None if at is None else int(at.timestamp() * 1000)


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:g}s"


def _age(seconds: float | None) -> str:
    """A lag as people read it; "" for none (``--json`` keeps the seconds).

    >>> _age(81917992.0), _age(3725.0), _age(None)
    ('948d', '62m', '')
    """
    return "" if seconds is None else age_text(seconds)


COMMAND = Command(
    name="status",
    help="show what a run has applied, table by table",
    description="For every target table of a run: row count, events applied, the last source\n"
    "position and commit time applied, freshness (now minus the newest source time or\n"
    "heartbeat), the ingest batch it is applied through, its pending changes (ingested,\n"
    "waiting for the table to be due), how long the oldest has waited, its freshness\n"
    "target, dead letters, names (columns renamed in the table, a shortened folder) and\n"
    "the last error of a table whose last apply failed; then the run's dead letters,\n"
    "the events applied to no table by reason (control records, DDL naming no table,\n"
    "excluded tables), the last batch and the ingest lag. --json for machines: the same facts with stable keys, and those the\n"
    "metrics serve (applies, last apply time, dead letters by reason).\n\n"
    "Example:\n  anycdc status --target lake/",
    add_arguments=add_arguments,
    run=run,
)
