"""The batched engine against the MERGE, on the same streams (issue #26, item 3).

One folder source carries simulated source histories chosen for what an apply must get
right: the ``rich`` profile (a composite key, key changes, hot keys, ADD COLUMN and
widenings mid-stream, a table without a key and its TRUNCATE, every type), the ``names``
profile (identifiers Delta and file systems refuse as they are: column mapping, shortened
folders), the shop (deletes, key changes) in Maxwell's untyped JSON, and a MongoDB
collection (``$set``/``$unset`` patches: partial images). The files are read one per
micro-batch with ``freshness 0`` (every table applied in every batch), and the first file is
read again at the end (a replay: every event older than its row). Each engine gets its
own target; then every table must be the same, row for row with its ``_cdc_`` metadata,
read by Spark and by delta-rs, and the batched run must have committed through its own
transactions (its tables' history shows them).

Every format through the batched engine (the default) is checked against the simulator's
truth by ``test_formats_e2e.py``; here the two engines are checked against each other.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from anycdc.config import PipelineConfig
from anycdc.formats import get_format
from anycdc.simulate import MONGO_FORMAT, Workload
from anycdc.spark.apply import q

pytestmark = pytest.mark.spark

FILES = 4  # micro-batches of the stream (one file each), then the replay of the first
STREAMS = (
    # format, profile, database, tables
    ("canonical-json", "rich", "rich", 3),
    ("canonical-json", "names", "names", 3),
    ("maxwell-json", "shop", "shop", 3),
    (MONGO_FORMAT, "shop", "mongo", 1),
)
ENGINES = ("merge", "batched")


def _write_stream(source: Path) -> dict[str, list[str]]:
    """The streams, interleaved and cut into :data:`FILES` files (oldest first), plus the
    first file again; returns the primary keys the untyped format needs."""
    messages: list[bytes] = []
    keys: dict[str, list[str]] = {}
    streams = []
    for format_id, profile, database, tables in STREAMS:
        workload = Workload(7, 4, 90, database, tables, profile=profile)
        fmt = get_format(format_id)
        streams.append([m for event in workload.events(format_id) for m in fmt.encode(event)])
        if format_id == "maxwell-json":
            keys.update({t.qualified: list(t.key) for t in workload.tables if t.key})
    messages = [s[i] for i in range(max(map(len, streams))) for s in streams if i < len(s)]
    topic = source / "cdc"
    topic.mkdir(parents=True)
    size = -(-len(messages) // FILES)
    chunks = [messages[i : i + size] for i in range(0, len(messages), size)]
    chunks.append(chunks[0])  # a replay of the first batch: older than every row it reaches
    base = int(time.time()) - 1000
    for index, chunk in enumerate(chunks):
        path = topic / f"part-{index:02d}.jsonl"
        path.write_bytes(b"".join(m.replace(b"\n", b" ") + b"\n" for m in chunk))
        os.utime(path, (base + index, base + index))  # the source takes files oldest first
    return keys


def _tables(target: Path) -> list[Path]:
    """Every Delta table under ``target`` but anycdc's own, by path relative to it."""
    found = [p.parent for p in target.rglob("_delta_log") if "_anycdc" not in p.parts]
    return sorted(p.relative_to(target) for p in found)


def _spark_rows(spark: Any, path: Path) -> list[tuple[Any, ...]]:
    frame = spark.read.format("delta").load(str(path))
    columns = sorted(c for c in frame.columns if c != "_cdc_ts")
    picked = frame.select(*[q(c) for c in columns]).collect()
    return sorted((tuple(str(v) for v in r) for r in picked), key=str)


def _rs_rows(path: Path) -> list[tuple[Any, ...]]:
    """The rows as delta-rs reads them (DataFusion: it follows column mapping)."""
    import pyarrow as pa
    from deltalake import DeltaTable, QueryBuilder

    table = pa.table(
        QueryBuilder().register("t", DeltaTable(str(path))).execute("SELECT * FROM t").read_all()
    )
    columns = sorted(c for c in table.column_names if c != "_cdc_ts")
    rows = table.select(columns).to_pylist()
    return sorted((tuple(str(r[c]) for c in columns) for r in rows), key=str)


@pytest.fixture(scope="module")
def engine_targets(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from anycdc.spark.pipeline import Pipeline

    root = tmp_path_factory.mktemp("engines")
    source = root / "source"
    keys = _write_stream(source)
    targets = {}
    for engine in ENGINES:
        target = root / engine
        config = PipelineConfig.from_mapping(
            {
                "source_dir": str(source),
                "target": str(target),
                "max_files_per_trigger": 1,
                "freshness": 0,
                "primary_keys": keys,
                "apply_engine": engine,
            }
        )
        history = Pipeline(spark, config).run()
        assert len(history) == FILES + 1, "one micro-batch per file"
        assert not any(t.error for m in history for t in m.tables), engine
        targets[engine] = target
    yield targets
    shutil.rmtree(root, ignore_errors=True)


def test_both_engines_write_the_same_tables(spark: Any, engine_targets: dict[str, Path]) -> None:
    merged, batched = engine_targets["merge"], engine_targets["batched"]
    tables = _tables(merged)
    assert tables == _tables(batched)
    # every stream's tables are there: the rich profile's three, the odd names', the shop's
    # and the collection
    assert len(tables) == sum(count for *_, count in STREAMS)
    read_by_rs = 0
    for table in tables:
        expected = _spark_rows(spark, merged / table)
        assert expected, f"{table}: the stream leaves rows in every table"
        assert _spark_rows(spark, batched / table) == expected, str(table)
        try:
            reference = _rs_rows(merged / table)
        except Exception as exc:  # delta-rs refuses a feature (type widening): both alike
            assert "Unsupported table features" in str(exc), exc
            with pytest.raises(Exception, match="Unsupported table features"):
                _rs_rows(batched / table)
            continue
        assert _rs_rows(batched / table) == reference, str(table)
        read_by_rs += 1
    assert read_by_rs >= len(tables) - 1  # only the widened table is beyond delta-rs


def test_the_batched_engine_commits_through_its_own_transactions(
    spark: Any, engine_targets: dict[str, Path]
) -> None:
    """Its tables' history shows the engine's WRITE commits (rewrites and appends), each
    with the apply's idempotent-write id, and no MERGE; the MERGE run's shows MERGEs."""
    from delta.tables import DeltaTable

    def operations(target: Path) -> set[str]:
        found: set[str] = set()
        for table in _tables(target):
            history = DeltaTable.forPath(spark, str(target / table)).history().collect()
            found |= {row["operation"] for row in history}
        return found

    assert "MERGE" in operations(engine_targets["merge"])
    batched = operations(engine_targets["batched"])
    assert "MERGE" not in batched
    assert "WRITE" in batched
    # the replayed first file, and every apply, left each table's idempotent-write version
    from deltalake import DeltaTable as RsTable

    for table in _tables(engine_targets["batched"]):
        txns = RsTable(str(engine_targets["batched"] / table)).transaction_version("anycdc:apply")
        assert txns is not None and txns >= 1, str(table)
