"""The hand-written peer: what a data engineer writes without anycdc, for ``anycdc bench``.

Spark Structured Streaming reads the bench's canal-json topic; each micro-batch
(``foreachBatch``) is split by table, each table's rows are parsed with ``from_json``
and a schema written from the table's declared MySQL types, the last change per key
is kept (canal ``es``, then ``id``, then the row's place in ``data``) and one Delta
MERGE per table applies them, as in Delta's documented CDC upsert pattern. A table is
created by its first batch.

What a user finds on the first run, and so what this peer does: canal-json carries
every value as a JSON *string*, and ``from_json`` reads a string as LongType, IntType
or DoubleType as NULL (DECIMAL, TIMESTAMP and STRING it reads). So the per-table
schema parses the row as strings and casts each column to its declared type;
``try_cast``, because Spark 4's ANSI cast fails the whole query on the first value that
does not fit (an unsigned BIGINT above 2^63) and its error message suggests it.

Deliberately not done (anycdc's exactness work, not a user's first job): unsigned
types, binary text, DDL (messages with ``isDdl`` are skipped: the schema is the one
written at the start), TRUNCATE, key changes (an UPDATE is applied to its new key;
the old key's row stays). Tables without a primary key are MERGEd on all columns.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anycdc.simulate import TableSpec, adapt_column
from anycdc.verify import TableDiff, compare_rows, describe

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

PEER_NAME = "peer: from_json + MERGE per table"

_NAIVE: dict[str, str] = {
    "tinyint": "tinyint", "smallint": "smallint", "mediumint": "int", "int": "int",
    "integer": "int", "bigint": "bigint", "float": "float", "double": "double",
    "real": "double", "date": "date", "datetime": "timestamp", "timestamp": "timestamp",
    "bit": "boolean", "bool": "boolean", "boolean": "boolean", "year": "int",
    "binary": "binary", "varbinary": "binary", "blob": "binary", "tinyblob": "binary",
    "mediumblob": "binary", "longblob": "binary",
}  # fmt: skip


def peer_type(mysql_type: str) -> str:
    """The Spark type (DDL) a user maps a Canal ``mysqlType`` to: by its base name,
    ``unsigned`` ignored, DECIMAL(p,s) as declared (precision at most Spark's 38), and
    text, JSON, TIME, ENUM and SET as strings.

    >>> peer_type("bigint unsigned"), peer_type("decimal(12,2)"), peer_type("datetime(6)")
    ('bigint', 'decimal(12,2)', 'timestamp')
    """
    text = mysql_type.strip().lower()
    base = re.split(r"[\s(]", text, maxsplit=1)[0]
    if base in ("decimal", "numeric", "dec", "fixed"):
        found = re.search(r"\((\d+)\s*(?:,\s*(\d+))?\)", text)
        precision, scale = (int(found[1]), int(found[2] or 0)) if found else (10, 0)
        return f"decimal({min(precision, 38)},{min(scale, 38)})"
    return _NAIVE.get(base, "string")


@dataclass(frozen=True)
class PeerTable:
    """One table as the peer's author wrote it down: key and Spark types per column."""

    database: str
    table: str
    key: tuple[str, ...]
    columns: dict[str, str]

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.table}"

    @property
    def merge_key(self) -> tuple[str, ...]:
        """The key MERGE matches on: the primary key, or every column without one."""
        return self.key or tuple(self.columns)


def peer_tables(specs: Iterable[TableSpec], format_id: str = "canal-json") -> list[PeerTable]:
    """The peer's schemas from the tables as declared before the stream starts, with the
    type names the format's messages carry (``mysqlType``)."""
    out = []
    for spec in specs:
        columns = {}
        for name, column in spec.columns.items():
            adapted = adapt_column(format_id, column)
            if adapted is not None:
                columns[name] = peer_type(adapted.vendor_type or str(adapted.type))
        out.append(PeerTable(spec.database, spec.name, spec.key, columns))
    return out


# --------------------------------------------------------------------------- the streaming job
def _row_schema(table: PeerTable) -> str:
    data = ", ".join(f"`{name}`: string" for name in table.columns)
    return (
        f"struct<type: string, isDdl: boolean, es: bigint, id: bigint, data: array<struct<{data}>>>"
    )


def _apply_table(
    spark: SparkSession, batch: DataFrame, table: PeerTable, path: str, created: set[str]
) -> None:
    from delta.tables import DeltaTable
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rows = (
        batch.filter((F.col("database") == table.database) & (F.col("table") == table.table))
        .select(F.from_json("value", _row_schema(table)).alias("m"))
        .filter(~F.coalesce(F.col("m.isDdl"), F.lit(False)) & F.col("m.data").isNotNull())
        .select("m.type", "m.es", "m.id", F.posexplode("m.data").alias("pos", "row"))
        .select(
            F.col("type").alias("_op"), F.col("es").alias("_es"), F.col("id").alias("_id"),
            F.col("pos").alias("_pos"),
            *[F.col(f"row.`{c}`").try_cast(t).alias(c) for c, t in table.columns.items()],
        )
    )  # fmt: skip
    order = Window.partitionBy(*[F.col(f"`{k}`") for k in table.merge_key]).orderBy(
        F.col("_es").desc(), F.col("_id").desc(), F.col("_pos").desc()
    )
    latest = rows.withColumn("_n", F.row_number().over(order)).filter("_n = 1").drop("_n")
    if path not in created and not DeltaTable.isDeltaTable(spark, path):
        # first sight: the batch's rows are the table's first commit
        columns = [F.col(f"`{c}`") for c in table.columns]
        latest.filter("_op != 'DELETE'").select(*columns).write.format("delta").save(path)
        created.add(path)
        return
    created.add(path)
    equal = "=" if table.key else "<=>"
    condition = " AND ".join(f"t.`{k}` {equal} s.`{k}`" for k in table.merge_key)
    values: dict[str, str | Column] = {f"`{c}`": f"s.`{c}`" for c in table.columns}
    (
        DeltaTable.forPath(spark, path)
        .alias("t")
        .merge(latest.alias("s"), condition)
        .whenMatchedDelete(condition="s._op = 'DELETE'")
        .whenMatchedUpdate(set=values)
        .whenNotMatchedInsert(condition="s._op != 'DELETE'", values=values)
        .execute()
    )


def peer_table_path(target: Path, table: PeerTable) -> str:
    return str(target / table.database / table.table)


def run_peer(
    spark: SparkSession,
    bootstrap: str,
    topic: str,
    tables: list[PeerTable],
    target: Path,
    cap: int,
) -> tuple[float, list[float], int]:
    """The peer on the whole topic (available-now): seconds, batch seconds, MERGEs+creates."""
    from pyspark.sql import functions as F

    by_name = {(t.database, t.table): t for t in tables}
    created: set[str] = set()
    applies = 0

    def each_batch(frame: DataFrame, _batch_id: int) -> None:
        nonlocal applies
        batch = frame.select(
            F.col("value").cast("string").alias("value"),
            F.get_json_object(F.col("value").cast("string"), "$.database").alias("database"),
            F.get_json_object(F.col("value").cast("string"), "$.table").alias("table"),
        ).persist()
        try:
            present = batch.select("database", "table").distinct().collect()
            for row in present:
                table = by_name.get((row["database"], row["table"]))
                if table is not None:
                    _apply_table(spark, batch, table, peer_table_path(target, table), created)
                    applies += 1
        finally:
            batch.unpersist()

    query = (
        topic_stream(spark, bootstrap, topic, cap)
        .writeStream.foreachBatch(each_batch)
        .option("checkpointLocation", str(target / "_checkpoint"))
        .queryName("anycdc-bench-peer")
        .trigger(availableNow=True)
        .start()
    )
    started = time.monotonic()
    query.awaitTermination()
    seconds = time.monotonic() - started
    batches = [p["durationMs"]["triggerExecution"] / 1000 for p in query.recentProgress]
    return seconds, batches, applies


def topic_stream(spark: SparkSession, bootstrap: str, topic: str, cap: int) -> DataFrame:
    """The whole topic from its start, ``cap`` messages per micro-batch (the floor's and
    the peer's source: the same as anycdc's)."""
    return (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(cap))
        .load()
    )


# --------------------------------------------------------------------------- exactness
@dataclass
class Exactness:
    """How a run's tables differ from the simulator's truth (:func:`exactness`)."""

    run: str
    tables: int
    expected_rows: int
    missing: int = 0
    extra: int = 0
    wrong_rows: int = 0
    """Rows present on both sides with at least one wrong value."""
    wrong_values: int = 0
    absent_tables: list[str] = field(default_factory=list)
    examples: list[tuple[str, str, str]] = field(default_factory=list)
    """(table.column, expected, got) for a few wrong values, one per column first."""
    wrong_columns: dict[str, int] = field(default_factory=dict)
    """table.column -> how many wrong values."""

    @property
    def exact(self) -> bool:
        return not (self.missing or self.extra or self.wrong_rows or self.absent_tables)

    def line(self) -> str:
        verdict = "exact" if self.exact else "NOT exact"
        text = (
            f"{self.run}: {verdict}: {self.expected_rows:,} rows expected in {self.tables} "
            f"tables; {self.missing:,} missing, {self.extra:,} extra, {self.wrong_rows:,} rows "
            f"with wrong values ({self.wrong_values:,} values)"
        )
        if self.absent_tables:
            text += f"; no table for {', '.join(self.absent_tables)}"
        return text

    def as_json(self) -> dict[str, Any]:
        return {
            "run": self.run, "exact": self.exact, "tables": self.tables,
            "expected_rows": self.expected_rows, "missing_rows": self.missing,
            "extra_rows": self.extra, "rows_with_wrong_values": self.wrong_rows,
            "wrong_values": self.wrong_values, "absent_tables": self.absent_tables,
            "wrong_values_per_column": self.wrong_columns,
            "examples": [
                {"column": c, "expected": e, "got": g} for c, e, g in self.examples
            ],
        }  # fmt: skip


def exactness(
    run: str, diffs: list[TableDiff], absent: Iterable[str] = (), examples: int = 6
) -> Exactness:
    """Sum :class:`~anycdc.verify.TableDiff` s into counts, with a few wrong values shown
    (the first of each wrong column before any second one).

    >>> d = compare_rows("db.t", ("id",), [{"id": 1, "v": 2}], [{"id": 1, "v": 3}], {"v": "int64"})
    >>> e = exactness("x", [d])
    >>> (e.wrong_rows, e.wrong_values, e.examples)
    (1, 1, [('db.t.v', '2', '3')])
    """
    out = Exactness(run, len(diffs), sum(d.expected_rows for d in diffs))
    out.absent_tables = sorted(absent)
    firsts: list[tuple[str, str, str]] = []
    seconds: list[tuple[str, str, str]] = []
    for diff in diffs:
        out.missing += len(diff.missing)
        out.extra += len(diff.extra)
        out.wrong_values += len(diff.different)
        out.wrong_rows += len({key for key, *_ in diff.different})
        for _key, column, want, got in diff.different:
            name = f"{diff.table}.{column}"
            shown = (name, _show(want), _show(got))
            (seconds if name in out.wrong_columns else firsts).append(shown)
            out.wrong_columns[name] = out.wrong_columns.get(name, 0) + 1
    out.examples = (firsts + seconds)[:examples]
    return out


def _show(value: Any) -> str:
    return "NULL" if value is None else describe(value, 40)


def compare_with_truth(
    specs: Iterable[TableSpec],
    truth: Mapping[str, Mapping[Any, Mapping[str, Any]]],
    actual: Mapping[str, list[dict[str, Any]] | None],
) -> tuple[list[TableDiff], list[str]]:
    """Each truth table against the rows a run stored (None: no table): the diffs, and
    the tables that do not exist. Values are compared as ``anycdc verify`` does."""
    diffs, absent = [], []
    for spec in specs:
        rows = actual.get(spec.qualified)
        if rows is None:
            absent.append(spec.qualified)
        types = {name: column.type for name, column in spec.columns.items()}
        expected = list(truth[spec.qualified].values())
        diffs.append(compare_rows(spec.qualified, spec.key, expected, rows or [], types))
    return diffs, absent


def read_tables(
    spark: SparkSession, paths: Mapping[str, str]
) -> dict[str, list[dict[str, Any]] | None]:
    """Each Delta table's rows (None where there is no table), ``_cdc_`` columns aside."""
    from delta.tables import DeltaTable

    out: dict[str, list[dict[str, Any]] | None] = {}
    for name, path in paths.items():
        if not DeltaTable.isDeltaTable(spark, path):
            out[name] = None
            continue
        frame = spark.read.format("delta").load(path)
        keep = [c for c in frame.columns if not c.startswith("_cdc_")]
        out[name] = [row.asDict() for row in frame.select(*keep).collect()]
    return out
