"""The hand-written peer on a real topic: it builds its tables, and the bench's
exactness comparison finds the values its naive ``from_json`` schema gets wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from anycdc.bench.peer import compare_with_truth, exactness, peer_tables, read_tables, run_peer
from anycdc.devtools.kafka import produce
from anycdc.formats import get_format
from anycdc.simulate import Workload, partition_of

pytestmark = [pytest.mark.spark, pytest.mark.kafka]


def test_peer_builds_its_tables_and_exactness_finds_its_wrong_values(
    spark: Any, kafka_bootstrap: str, kafka_topic: Any, tmp_path: Path
) -> None:
    topic = kafka_topic(partitions=2)
    fmt = get_format("canal-json")
    workload = Workload(seed=5, rows=20, events=300, database="db", tables=3, profile="rich")
    declared = peer_tables(workload.source_tables)  # before any DDL: what the user wrote
    messages = []
    for event in workload.events("canal-json"):
        key = fmt.encode_key(event)
        messages += [(key, m, partition_of(key, 2)) for m in fmt.encode(event)]
    assert produce(kafka_bootstrap, topic, messages) == len(messages)

    target = tmp_path / "peer"
    _seconds, batches, applies = run_peer(spark, kafka_bootstrap, topic, declared, target, 150)
    assert len(batches) >= 2 and applies >= len(batches) and applies >= 3

    specs, truth = workload.tables, workload.truth
    actual = read_tables(spark, {s.qualified: str(target / "db" / s.name) for s in specs})
    assert all(actual[s.qualified] for s in specs), "the peer made every table"
    found = exactness("peer", *compare_with_truth(specs, truth, actual))
    assert not found.exact

    # an unsigned BIGINT above 2^63 does not fit the user's LongType: try_cast makes it NULL,
    # and every such value in the truth must be reported, no more (the others fit)
    big = [r for r in truth["db.all_types"].values() if (r["c_ubigint"] or 0) >= 2**63]
    kept = {r["id"] for r in actual["db.all_types"] or []}
    assert big, "the stream has unsigned values above 2^63"
    assert found.wrong_columns["db.all_types.c_ubigint"] == sum(r["id"] in kept for r in big)
    shown = [(want, got) for column, want, got in found.examples if column.endswith("c_ubigint")]
    assert shown and shown[0][1] == "NULL" and int(shown[0][0]) >= 2**63
    # canal sends VARBINARY as ISO-8859-1 text; the peer's cast to binary takes its UTF-8
    assert found.wrong_columns.get("db.all_types.c_binary", 0) > 0
    # DDL after the schema was written: ADD COLUMN values are absent from the peer's tables
    assert found.wrong_columns.get("db.order_lines.gift_note", 0) > 0
    # columns the peer maps exactly: no wrong value reported for them
    for exact in ("c_int", "c_money", "c_datetime", "c_varchar"):
        assert f"db.all_types.{exact}" not in found.wrong_columns
    # key changes leave the old key's row behind (an extra row), TRUNCATE is skipped
    assert found.extra > 0
    assert found.line().startswith("peer: NOT exact")
