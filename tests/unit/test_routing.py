"""Per-topic decoding (``per_topic``): each source's messages go through its own format and
options — in the Python workers' decode stage (``decode_rows``), without Spark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anycdc.cli import main as cli
from anycdc.config import PipelineConfig
from anycdc.errors import OptionError
from anycdc.source.routing import DecodeRoute, SourceRouting
from anycdc.spark.decode import RawRecord, decode_rows
from tests.unit.printed import printed_config

CANAL = Path(__file__).parents[1] / "cases" / "dts-canal-json" / "constructed_new_insert.json"


def message(pk_names: bool = True) -> bytes:
    body = json.loads(CANAL.read_text())
    if not pk_names:
        body["pkNames"] = None
    return json.dumps(body).encode()


def kafka(**extra: object) -> PipelineConfig:
    return PipelineConfig.from_mapping(
        {"kafka_bootstrap": "127.0.0.1:9092", "topics": "dts,other", **extra}
    )


def test_each_topic_decodes_with_its_own_format_and_options() -> None:
    # auto classifies these messages as dts-canal-json; topic "dts" is told canal-json
    config = kafka(per_topic={"dts": {"format": "canal-json", "options": {"primary_key": "id"}}})
    records: list[RawRecord] = [
        ("dts", 0, 1, None, message(pk_names=False), None),
        ("other", 0, 1, None, message(pk_names=False), None),
        ("dts", 0, 2, None, message(), None),
        ("other", 0, 2, None, message(), None),
    ]
    rows = list(decode_rows(records, config.routing))
    assert [(r["source"], r["offset"]) for r in rows] == [(s, o) for s, _, o, _, _, _ in records]
    seen = [(r["source"], r["format"], r["key"], r["error"]) for r in rows]
    assert seen == [
        ("dts", "canal-json", ["id"], None),  # the key came from the topic's option
        ("other", "dts-canal-json", None, None),  # detected; the run has no primary_key
        ("dts", "canal-json", ["id"], None),
        ("other", "dts-canal-json", ["id"], None),
    ]


def test_without_per_topic_every_source_gets_the_runs_route() -> None:
    config = kafka(format="canal-json", format_options={"primary_key": "id"})
    rows = list(decode_rows([("dts", 0, 1, None, message(False), None)], config.routing))
    assert (rows[0]["format"], rows[0]["key"]) == ("canal-json", ["id"])


@pytest.mark.parametrize(
    ("source", "topic"),
    [
        ("file:/in/dts_old/0001.jsonl", "dts_old"),
        ("file:///in/dts_old/2024/0001.jsonl", "dts_old"),  # deeper: still its first folder
        ("/in/dts_old/0001.jsonl", "dts_old"),
        ("file:/in/0001.jsonl", ""),  # directly in the folder: no topic
        ("file:/elsewhere/dts_old/0001.jsonl", ""),
        ("file:/in/dts%20old/1.jsonl", "dts old"),
    ],
)
def test_a_files_topic_is_its_first_folder_under_the_source(source: str, topic: str) -> None:
    routing = SourceRouting(DecodeRoute("auto"), root="/in")
    assert routing.topic_of(source) == topic


def test_a_folder_source_routes_by_folder() -> None:
    config = PipelineConfig.from_mapping(
        {"source_dir": "/in", "per_topic": {"dts_old": {"format": "dts-canal-json"}}}
    )
    assert config.routing.route("file:/in/dts_old/a.jsonl").format == "dts-canal-json"
    assert config.routing.route("file:/in/a.jsonl").format == "auto"


def test_the_runs_options_reach_a_topics_format_only_where_they_apply() -> None:
    config = kafka(
        format_options={"legacy": "true", "timezone": "Asia/Shanghai"},
        per_topic={"cn": {"format": "drs-json"}, "dts": {"format": "dts-canal-json"}},
    )
    assert config.routing.route("cn").option_map == {"timezone": "Asia/Shanghai"}
    assert config.routing.route("dts").option_map == {"legacy": "true", "timezone": "Asia/Shanghai"}
    assert config.routing.route("elsewhere").option_map == {
        "legacy": "true",
        "timezone": "Asia/Shanghai",
    }


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"format": "canal-json", "options": {"legacy": "true"}}, "per_topic 'dts': canal-json"),
        ({"format": "no-such-format"}, "per_topic 'dts': unknown format"),
        ({"fromat": "canal-json"}, "expected keys format and/or options"),
        ({"options": "legacy=true"}, "options must be a mapping"),
    ],
)
def test_a_bad_topic_entry_is_refused_with_the_topic(entry: object, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        kafka(per_topic={"dts": entry})


def test_topic_flags_add_to_the_files_topics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        "kafka_bootstrap: 127.0.0.1:9092\ntopics: [dts, cn]\n"
        "per_topic:\n  dts:\n    format: dts-canal-json\n    options: {legacy: true}\n"
    )
    config, _ = printed_config(
        capsys, tmp_path / "pipeline.yaml", text,
        "--topic-option", "dts:primary_key=id", "--topic-format", "cn=drs-json",
        "--topic-option", "cn:timezone=Asia/Shanghai",
    )  # fmt: skip
    assert config["per_topic"] == {
        "dts": {"format": "dts-canal-json", "options": {"legacy": "true", "primary_key": "id"}},
        "cn": {"format": "drs-json", "options": {"timezone": "Asia/Shanghai"}},
    }
    assert cli(["run", "--source-dir", "in", "--topic-option", "legacy=true"]) != 0
    assert "--topic-option expects TOPIC:K=V" in capsys.readouterr().err
