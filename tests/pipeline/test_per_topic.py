"""``per_topic`` through real Spark and Delta: one run reads two sources written in two
formats, each decoded with its own settings; ``replay-dead-letters`` routes the same way."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.helpers import encode_all, ev, rows, run, system, write_messages

pytestmark = pytest.mark.spark


def _two_sources(src: Path) -> None:
    # a folder per "topic": the canonical-json one can only be read with its own format
    write_messages(src / "audit", "001.jsonl", encode_all("canonical-json", [
        ev("insert", 1, {"id": 1, "name": "a", "qty": 1, "price": Decimal("1.50")}),
        ev("insert", 2, {"id": 2, "name": "b", "qty": 2, "price": Decimal("2.50")}),
    ]))  # fmt: skip
    write_messages(src / "shop", "001.jsonl", encode_all("dataworks-json", [
        ev("insert", 1, {"id": 7, "name": "x", "qty": 7, "price": Decimal("7.00")},
           table="stock"),
    ]))  # fmt: skip


def test_each_folder_is_decoded_with_its_topics_format(spark: Any, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    _two_sources(src)
    run(
        spark, src, out,
        format="dataworks-json", per_topic={"audit": {"format": "canonical-json"}},
    )  # fmt: skip
    assert system(spark, out, "dead_letter") == []
    assert [(r["id"], r["price"]) for r in rows(spark, out)] == [
        (1, Decimal("1.50")),
        (2, Decimal("2.50")),
    ]
    assert [r["id"] for r in rows(spark, out, table="stock")] == [7]
    formats = {r["source"].split("/")[-2]: r["format"] for r in system(spark, out, "changelog")}
    assert formats == {"audit": "canonical-json", "shop": "dataworks-json"}


def test_replayed_dead_letters_take_their_topics_route(spark: Any, tmp_path: Path) -> None:
    from anycdc.config import PipelineConfig
    from anycdc.spark.pipeline import replay_dead_letters

    src, out = tmp_path / "in", tmp_path / "out"
    _two_sources(src)
    run(spark, src, out, format="dataworks-json")  # the audit folder's messages: dead letters
    assert len(system(spark, out, "dead_letter")) == 2
    fixed = PipelineConfig.from_mapping({
        "source_dir": str(src), "target": str(out), "format": "dataworks-json",
        "per_topic": {"audit": {"format": "canonical-json"}},
    })  # fmt: skip
    assert replay_dead_letters(spark, fixed) == (2, 0)
    assert [r["id"] for r in rows(spark, out)] == [1, 2]
    assert system(spark, out, "dead_letter") == []


def test_a_detected_topic_of_one_format_is_advised_once(
    spark: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # detection costs more than decoding: a run says once which detected topics carried
    # one format only; a topic whose format is named gets no advice
    src, out = tmp_path / "in", tmp_path / "out"
    _two_sources(src)
    write_messages(src / "audit", "002.jsonl", encode_all("canonical-json", [
        ev("insert", 3, {"id": 3, "name": "c", "qty": 3, "price": Decimal("3.50")}),
    ]))  # fmt: skip
    caplog.set_level("INFO", logger="anycdc.pipeline")
    run(spark, src, out, per_topic={"shop": {"format": "dataworks-json"}}, max_files_per_trigger=1)
    assert [r["id"] for r in rows(spark, out)] == [1, 2, 3]
    advice = [r.getMessage() for r in caplog.records if "every message so far" in r.getMessage()]
    assert advice == [
        "topic 'audit': every message so far is canonical-json; if it carries no other format, "
        "name it (per_topic: {audit: {format: canonical-json}}): detecting each message's "
        "format costs more than decoding it"
    ]
