"""Build canonical events, write them as messages, run the pipeline, read the tables back."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from anycdc.config import PipelineConfig
from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.formats import get_format
from anycdc.values import LogicalType

ORDER_COLUMNS = {
    "id": Column(LogicalType("int64"), "bigint"),
    "name": Column(LogicalType("string"), "varchar(20)"),
    "qty": Column(LogicalType("int32"), "int"),
    "price": Column(LogicalType("decimal", 12, 2), "decimal(12,2)"),
}


def ev(
    op: str,
    pos: int,
    row: dict[str, Any] | None = None,
    before: dict[str, Any] | None = None,
    *,
    table: str = "orders",
    database: str = "shop",
    columns: dict[str, Column] | None = None,
    key: tuple[str, ...] | None = ("id",),
    partial: tuple[str, ...] = (),
    **extra: Any,
) -> ChangeEvent:
    """A canonical event: ``row`` is the after image (before image for deletes)."""
    kind = Op(op)
    after = row if kind not in (Op.DELETE,) else None
    if kind is Op.DELETE:
        before = row
    cols = columns or ORDER_COLUMNS
    return ChangeEvent(
        op=kind,
        format="canonical-json",
        database=database,
        table=table,
        key=key,
        before=before,
        after=after,
        columns={k: v for k, v in cols.items()},
        ts_ms=1_700_000_000_000 + pos,
        position=Position((pos,)),
        partial=partial,
        **extra,
    )


def write_messages(folder: Path, name: str, messages: Iterable[bytes | None]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    with path.open("wb") as handle:
        for message in messages:
            handle.write((message if message is not None else b"null").replace(b"\n", b" ") + b"\n")
    return path


def encode_all(format_id: str, events: Sequence[ChangeEvent], **options: str) -> list[bytes]:
    fmt = get_format(format_id, options)
    return [m for e in events for m in fmt.encode(e)]


def small_jvm_args() -> list[str]:
    """``--spark-conf`` flags that give an ``anycdc run`` started as a process of its own the
    test session's settings (C1 JIT, serial GC, a 1 GiB heap, no whole-stage code generation:
    :func:`anycdc.spark.session.base_conf`). On a few hundred events a fresh JVM spends most of
    its time compiling; the production defaults made each restart of the kill -9 test ~2x
    slower."""
    from anycdc.spark.session import base_conf

    return [
        arg
        for key, value in base_conf(for_tests=True).items()
        if key.startswith("spark.") and key != "spark.driver.host"
        for arg in ("--spark-conf", f"{key}={value}")
    ]


def run(spark: Any, source: Path, target: Path, **config: Any) -> Any:
    from anycdc.spark.pipeline import Pipeline

    cfg = PipelineConfig.from_mapping({"source_dir": str(source), "target": str(target), **config})
    return Pipeline(spark, cfg).run()


def rows(
    spark: Any, target: Path, table: str = "orders", database: str | None = "shop"
) -> list[dict[str, Any]]:
    """The table's source columns (no _cdc_ metadata), sorted by their values."""
    path = "/".join(p for p in (str(target), database, table) if p)
    frame = spark.read.format("delta").load(path)
    cols = [c for c in frame.columns if not c.startswith("_cdc_")]
    out = [r.asDict() for r in frame.select(*cols).collect()]
    return sorted(out, key=lambda r: [str(r[c]) for c in cols])


def system(spark: Any, target: Path, name: str) -> list[dict[str, Any]]:
    path = target / "_anycdc" / name
    if not path.exists():
        return []
    return [r.asDict() for r in spark.read.format("delta").load(str(path)).collect()]


def reset(*paths: Path) -> None:
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)


# What each commit of a table did, whichever apply engine made it: the MERGE engine creates
# by CREATE TABLE AS SELECT and rewrites by MERGE; the batched one commits Delta WRITEs whose
# save mode tells them apart (ErrorIfExists: the table's first commit, Overwrite: the files
# it replaced, Append: new files only).
WRITE_KINDS = {"ErrorIfExists": "create", "Overwrite": "rewrite", "Append": "append"}
OPERATION_KINDS = {
    "CREATE TABLE AS SELECT": "create",
    "CREATE TABLE": "create empty",
    "MERGE": "rewrite",
}


def writes(table: Path) -> list[str]:
    """The table's commits, oldest first, as delta-rs reads its log: ``create``,
    ``create empty`` (no write: the schema only), ``append`` or ``rewrite``, engine-independent
    (auto compaction's OPTIMIZE left out: upkeep, not the apply's write)."""
    from deltalake import DeltaTable

    kinds = []
    for entry in sorted(DeltaTable(str(table)).history(), key=lambda e: e["version"]):
        operation = entry["operation"]
        if operation == "OPTIMIZE":
            continue
        if operation == "WRITE":
            mode = str((entry.get("operationParameters") or {}).get("mode", "")).strip('"')
            kinds.append(WRITE_KINDS.get(mode, f"WRITE {mode}"))
        else:
            kinds.append(OPERATION_KINDS.get(operation, operation))
    return kinds


def accounted(spark: Any, target: Path, **expected: int) -> dict[str, Any]:
    """The audit of ``target`` (:func:`anycdc.spark.accounting.account`) as a dict, after
    checking that every changelog row has its one outcome and that the totals ``expected``
    (``applied=3``, ``dead_lettered=1``, ``pending=0``, ...) hold."""
    from anycdc.spark.accounting import account

    result = account(spark, str(target))
    report = result.as_dict()
    assert result.ok, report
    total = report["total"]
    assert {name: total[name] for name in expected} == expected, report
    return report


def simulated_copies(base: Path, databases: Iterable[str], events: int = 120) -> Path:
    """The simulated rich stream (canal-json, 4 rows, seed 11, 4 partitions) once per
    database of ``databases`` (the same seed: the same stream under another database name),
    each partition's file holding every copy's messages of that partition, the files'
    times in their names' order (the folder source reads oldest first): the folder."""
    from anycdc.cli import main as cli

    messages = base / "messages"
    messages.mkdir()
    for database in databases:
        assert cli([
            "simulate", "--format", "canal-json", "--rows", "4", "--events", str(events),
            "--seed", "11", "--partitions", "4", "--database", database,
            "--out", str(base / database),
        ]) == 0  # fmt: skip
        for part in sorted((base / database / "messages").iterdir()):
            with (messages / part.name).open("ab") as handle:
                handle.write(part.read_bytes())
    for second, path in enumerate(sorted(messages.iterdir())):
        os.utime(path, (1_700_000_000 + second, 1_700_000_000 + second))
    return messages
