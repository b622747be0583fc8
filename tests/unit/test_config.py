"""Pipeline configuration: validation, precedence, secrets never printed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main as cli
from anycdc.config import PipelineConfig
from anycdc.errors import OptionError
from tests.unit.printed import printed_config

SECRET = "s3cr3t-Pa55"


def test_secrets_are_masked_in_the_printed_config(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli([
        "run", "--kafka-bootstrap", "127.0.0.1:9093", "--topics", "t", "--target", "lake",
        "--kafka-option", "kafka.security.protocol=SASL_SSL",
        "--kafka-option", f'kafka.sasl.jaas.config=x required username="u" password="{SECRET}";',
        "--kafka-option", f"kafka.ssl.truststore.password={SECRET}", "--print-config",
    ])  # fmt: skip
    out = capsys.readouterr()
    assert code == 0
    assert SECRET not in out.out + out.err
    printed = json.loads(out.out)["kafka_options"]
    assert printed["kafka.security.protocol"] == "SASL_SSL"
    assert printed["kafka.sasl.jaas.config"] == "***"


def test_unknown_keys_and_conflicting_sources_are_errors() -> None:
    with pytest.raises(OptionError, match="unknown configuration key"):
        PipelineConfig.from_mapping({"targte": "x"})
    with pytest.raises(OptionError, match="choose one source"):
        PipelineConfig.from_mapping({"source_dir": "a", "kafka_bootstrap": "h:1", "topics": "t"})
    with pytest.raises(OptionError, match="trigger"):
        PipelineConfig.from_mapping({"trigger": "sometimes"})


def test_flags_override_the_file_and_paths_become_absolute(tmp_path: Path) -> None:
    path = tmp_path / "pipeline.yaml"
    path.write_text("target: lake\ntrigger: interval=10s\nprimary_keys:\n  shop.audit: [id, ts]\n")
    config = PipelineConfig.from_file(path, {"trigger": "available-now"})
    assert config.trigger == "available-now"
    assert Path(config.target).is_absolute()
    assert config.key_override("shop", "audit") == ("id", "ts")
    assert config.key_override("other", "audit") is None


def test_table_paths_cannot_escape_the_target() -> None:
    config = PipelineConfig(target="/lake")
    assert config.table_path("shop", None, "orders") == "/lake/shop/orders"
    assert config.table_path(None, "HR", "EMP") == "/lake/HR/EMP"
    assert config.table_path("..", None, "x/../../etc") == "/lake/_../x_.._.._etc"
    assert config.table_path("_anycdc", None, "changelog").startswith("/lake/__anycdc")


@pytest.mark.parametrize(
    ("trigger", "spark_interval"),
    [("interval=10s", "10 seconds"), ("interval=500ms", "500 milliseconds"),
     ("interval=2m", "2 minutes"), ("available-now", None)],
)  # fmt: skip
def test_interval_trigger_in_sparks_words(trigger: str, spark_interval: str | None) -> None:
    config = PipelineConfig.from_mapping({"source_dir": "in", "target": "out", "trigger": trigger})
    assert config.processing_interval == spark_interval


def test_catalog_flags_set_the_table_name_template(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["run", "--source-dir", "in", "--target", "lake", "--print-config"]
    for extra, template in (
        (["--catalog"], "{database}.{table}"),
        (["--table-name", "lake.{database}_{table}"], "lake.{database}_{table}"),
        ([], None),
    ):
        assert cli([*base, *extra]) == 0
        assert json.loads(capsys.readouterr().out)["table_name"] == template


def test_catalog_names_come_from_the_template_part_by_part() -> None:
    config = PipelineConfig(target="/t", table_name="{database}.{table}")
    # a dot inside a source name stays inside its part (each part is quoted on its own)
    assert config.catalog_name("shop", None, "a.b") == ["shop", "a.b"]
    assert config.catalog_name(None, "HR", "EMP") == ["HR", "EMP"]  # SharePlex OWNER.TABLE
    assert config.catalog_name(None, None, "t") == ["default", "t"]


@pytest.mark.parametrize("template", ["{db}.{table}", "{table}.", "a.b.c.{table}", "{0}"])
def test_a_bad_catalog_template_is_refused_up_front(template: str) -> None:
    with pytest.raises(OptionError, match="table_name"):
        PipelineConfig.from_mapping({"source_dir": "in", "target": "lake", "table_name": template})


def test_every_configuration_key_has_a_flag(tmp_path: Path) -> None:
    """Flags override the file key by key: each key of the file can be given as a flag."""
    import argparse
    from dataclasses import fields

    from anycdc.cli.run import add_arguments, config_from_args

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([
        "--kafka-bootstrap", "h:9092", "--topics", "a,b", "--kafka-option", "kafka.x=1",
        "--starting-offsets", "latest", "--max-offsets-per-trigger", "500",
        "--max-files-per-trigger", "7", "--format", "dts-canal-json", "-o", "legacy=true",
        "--topic-format", "cn=drs-json", "--topic-option", "cn:timezone=Asia/Shanghai",
        "--decimal-default", "20,4", "--target", str(tmp_path / "lake"), "--include", "shop\\..*",
        "--exclude", "shop\\.tmp", "--primary-key", "shop.audit=id,ts",
        "--table-name", "lake.{table}", "--checkpoint", str(tmp_path / "ck"),
        "--trigger", "interval=5s", "--mode", "scd2", "--tombstone-retention-hours", "1.5",
        "--max-concurrent-tables", "2", "--key-range-min-mb", "0", "--query-name", "orders_sync", "--master", "local[1]",
        "--no-auto-compact", "--vacuum-every-hours", "6", "--vacuum-retain-hours", "48",
        "--spark-conf", "spark.driver.memory=6g",
        "--table-property", "delta.enableChangeDataFeed=true", "--column-names", "portable",
        "--schema-changes", "evolve",
        "--freshness", "15m", "--table-freshness", "shop\\.orders=10s", "--max-pending-rows", "9",
        "--apply-engine", "merge", "--ingest-engine", "cached", "--rewrite-max-mb", "16",
        "--catch-up-batches", "3", "--apply-beside-ingest", "--hold-open-transactions", "5",
        "--metrics-port", "9108", "--metrics-address", "0.0.0.0", "--metrics-max-tables", "50",
        "--table-setting", "shop.*:mode=scd1",
    ])  # fmt: skip
    config = config_from_args(args)
    defaults = PipelineConfig()
    unset = [
        f.name
        for f in fields(PipelineConfig)
        if getattr(config, f.name) == getattr(defaults, f.name)
    ]
    # the other sources: each excludes the Kafka topics given above
    assert unset == ["source_dir", "topic_pattern"]
    other = config_from_args(parser.parse_args(["--source-dir", str(tmp_path)]))
    assert other.source_dir == str(tmp_path)
    pattern = config_from_args(
        parser.parse_args(["--kafka-bootstrap", "h:1", "--topic-pattern", "db_.*"])
    )
    assert pattern.topic_pattern == "db_.*"
    assert config.decimal_default == (20, 4)
    assert config.tombstone_retention_hours == 1.5
    assert config.spark_conf == {"spark.driver.memory": "6g"}
    assert config.master == "local[1]"
    assert config.table_properties == {"delta.enableChangeDataFeed": "true"}
    assert (config.freshness, config.max_pending_rows) == (900.0, 9)
    assert config.table_freshness == {"shop\\.orders": 10.0}
    assert config.freshness_policy.target_s("shop.orders") == 10.0


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ({"freshness": "soon"}, "freshness: expected seconds or a duration"),
        ({"freshness": -1}, "freshness: must be >= 0"),
        ({"table_freshness": {"(": "10s"}}, "table_freshness: invalid regex '('"),
        ({"table_freshness": {"a": "x"}}, "table_freshness 'a': expected seconds"),
        ({"max_pending_rows": 0}, "max_pending_rows must be an integer >= 1"),
        ({"max_concurrent_tables": "4"}, "max_concurrent_tables: expected an integer, got '4'"),
        ({"auto_compact": "yes"}, "auto_compact must be true or false, got 'yes'"),
        ({"vacuum_every_hours": True}, "vacuum_every_hours: expected a number, got True"),
    ],
)
def test_settings_of_a_wrong_type_or_value_are_errors_naming_the_key(
    raw: dict[str, Any], error: str
) -> None:
    with pytest.raises(OptionError, match=re.escape(error)):
        PipelineConfig.from_mapping({"source_dir": "in", **raw})


def test_spark_settings_from_flags_and_files_with_secrets_masked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pipeline.toml"
    text = (
        'source_dir = "in"\n[spark_conf]\n"spark.driver.memory" = "8g"\n'
        f'"spark.hadoop.fs.s3a.secret.key" = "{SECRET}"\n'
    )
    config, output = printed_config(
        capsys, path, text, "--target", "lake",
        "--spark-conf", f"spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net={SECRET}",
        "--spark-conf", "spark.driver.memory=10g",
    )  # fmt: skip
    assert SECRET not in output
    printed = config["spark_conf"]
    # flags are merged into the file's mapping, setting by setting
    assert printed == {
        "spark.driver.memory": "10g",
        "spark.hadoop.fs.s3a.secret.key": "***",
        "spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net": "***",
    }
    file_only = PipelineConfig.from_file(path)
    assert file_only.redacted()["spark_conf"] == {
        "spark.driver.memory": "8g",
        "spark.hadoop.fs.s3a.secret.key": "***",
    }
    assert file_only.spark_conf["spark.hadoop.fs.s3a.secret.key"] == SECRET  # masked, not lost


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"spark_conf": {"driver.memory": "8g"}}, "not a Spark setting"),
        ({"decimal_default": "38"}, "decimal_default must be P,S"),
        ({"decimal_default": "p,s"}, "two integers"),
        ({"decimal_default": [10, 12]}, "0 <= S <= P <= 38"),
        ({"decimal_default": "39,2"}, "0 <= S <= P <= 38"),
        ({"max_offsets_per_trigger": 0}, "max_offsets_per_trigger must be >= 1"),
        ({"tombstone_retention_hours": -1}, "tombstone_retention_hours must be >= 0"),
        ({"vacuum_every_hours": -1}, "vacuum_every_hours must be >= 0"),
        ({"key_range_min_mb": -1}, "key_range_min_mb must be >= 0"),
        ({"table_properties": {"anycdc.truncatePosition": "1"}}, "anycdc.* properties"),
        ({"vacuum_retain_hours": -2}, "vacuum_retain_hours must be >= 0"),
        ({"auto_compact": "sometimes"}, "auto_compact must be true or false"),
    ],
)
def test_bad_settings_are_refused_with_their_name(raw: dict[str, object], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        PipelineConfig.from_mapping({"source_dir": "in", **raw})


def test_a_malformed_secret_pair_is_not_echoed(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli([
        "run", "--source-dir", "in", "--print-config",
        "--spark-conf", f"spark.hadoop.fs.s3a.secret.key:{SECRET}",
    ])  # fmt: skip
    err = capsys.readouterr().err
    assert code != 0 and "--spark-conf expects K=V" in err
    assert SECRET not in err
