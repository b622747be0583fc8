"""``tables:``: per-table settings over the run-wide ones (``anycdc.config.TableSettings``),
the most specific pattern winning; every bad entry is one error naming ``tables.<pattern>``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main as cli
from anycdc.config import PipelineConfig
from anycdc.config_docs import TABLES_END, TABLES_START, tables_markdown_table
from anycdc.errors import OptionError
from anycdc.table_settings import TABLE_SETTINGS, TableSettings, pattern_rank

README = Path(__file__).resolve().parents[2] / "README.md"


def _config(tables: dict[str, Any], **run: Any) -> PipelineConfig:
    return PipelineConfig.from_mapping({"source_dir": "in", "tables": tables, **run})


def test_the_most_specific_pattern_wins_whatever_the_order() -> None:
    config = _config(
        {
            "re:orders": {"freshness": "1h"},
            "*": {"freshness": "30m"},
            "shop.*": {"freshness": "15m"},
            "*.orders": {"freshness": "5m"},
            "shop.orders": {"freshness": "10s"},
            "shop.orde?s": {"freshness": "20s"},
        }
    )
    assert config.table_pattern("shop.orders") == "shop.orders"  # exact
    # one wildcard each: more literal text wins
    assert config.table_pattern("shop.ordeRs") == "shop.orde?s"
    assert config.table_pattern("shop.items") == "shop.*"
    assert config.table_pattern("crm.orders") == "*.orders"  # more literal text than shop.*
    assert config.table_pattern("crm.users") == "*"
    assert config.table_settings("crm.users").freshness == 1800.0
    # a regex loses to any glob; alone, it applies
    assert _config({"re:orders": {"mode": "scd2"}}).table_pattern("a.orders_2") == "re:orders"


def test_equal_ranks_first_in_file_wins() -> None:
    assert pattern_rank("shop.a*") == pattern_rank("shop.*b")
    config = _config({"shop.a*": {"mode": "scd2"}, "shop.*b": {"mode": "scd1"}})
    assert config.table_pattern("shop.ab") == "shop.a*"
    config = _config({"re:^shop": {"mode": "scd2"}, "re:ab$": {"mode": "scd1"}})
    assert config.table_pattern("shop.ab") == "re:^shop"


def test_globs_match_the_whole_name_and_case_matters() -> None:
    config = _config({"shop.*": {"mode": "scd2"}})
    assert config.table_pattern("shop.a.b") == "shop.*"  # * crosses dots
    assert config.table_pattern("myshop.a") is None
    assert config.table_pattern("SHOP.a") is None


def test_an_entry_wins_over_the_run_wide_settings_and_keeps_the_others() -> None:
    config = _config(
        {
            "shop.orders": {
                "mode": "scd2",
                "primary_key": "tenant, id",
                "freshness": "10s",
                "table_properties": {"delta.appendOnly": False, "b": 2},
                "cluster_by": ["customer_id"],
                "exclude_columns": ["ssn"],
                "mask_columns": ["email", "phone=null"],
            },
            "shop.items": {"partition_by": "region"},
        },
        mode="scd1",
        freshness="1m",
        table_freshness={"items": "30s"},
        primary_keys={"shop.items": ["sku"]},
        table_properties={"b": "1", "c": "3"},
    )
    orders = config.table_settings(("shop", None, "orders"))
    assert (orders.pattern, orders.mode, orders.primary_key, orders.freshness) == (
        "shop.orders", "scd2", ("tenant", "id"), 10.0,
    )  # fmt: skip
    assert dict(orders.table_properties) == {"b": "2", "c": "3", "delta.appendOnly": "false"}
    assert orders.cluster_by == ("customer_id",) and orders.partition_by == ()
    assert orders.exclude_columns == ("ssn",)
    assert dict(orders.mask_columns) == {"email": "sha256", "phone": "null"}
    assert orders.redacts
    items = config.table_settings("shop.items")
    assert (items.mode, items.primary_key, items.freshness) == ("scd1", ("sku",), 30.0)
    assert items.partition_by == ("region",) and not items.redacts
    assert dict(items.table_properties) == {"b": "1", "c": "3"}
    other = config.table_settings("crm.users")
    assert (other.pattern, other.mode, other.primary_key, other.freshness) == (
        None, "scd1", None, 60.0,
    )  # fmt: skip
    # the schedule asks the same resolver
    policy = config.freshness_policy
    assert policy.target_s("shop.orders") == 10.0 and policy.target_s("shop.items") == 30.0
    assert 10.0 in policy.targets


@pytest.mark.parametrize(
    ("tables", "error"),
    [
        ({"shop.*": {"mod": "scd2"}}, "tables.shop.*: unknown key 'mod'; valid: mode, primary_key"),
        ({"shop.*": {"mode": "scd3"}}, "tables.shop.*.mode must be scd1 or scd2, got 'scd3'"),
        ({"shop.*": {"freshness": "soon"}}, "tables.shop.*.freshness: expected seconds or a duration"),
        ({"shop.*": {"freshness": -1}}, "tables.shop.*.freshness: must be >= 0"),
        ({"re:shop(": {"mode": "scd2"}}, "tables.re:shop(: invalid regex"),
        ({"shop.*": "scd2"}, "tables.shop.*: expected a mapping of settings, got 'scd2'"),
        ({"": {}}, "tables: an empty pattern"),
        ({"shop.*": {"cluster_by": 3}}, "tables.shop.*.cluster_by: expected a list of column names"),
        ({"shop.*": {"partition_by": []}}, "tables.shop.*.partition_by: expected one or more column"),
        ({"shop.*": {"exclude_columns": ["a", "a"]}}, "tables.shop.*.exclude_columns: a column is named twice"),
        ({"shop.*": {"table_properties": "x"}}, "tables.shop.*.table_properties: expected a mapping"),
        ({"shop.*": {"table_properties": {"anycdc.x": 1}}}, "tables.shop.*.table_properties: 'anycdc.x' cannot be set"),
        ({"shop.*": {"mask_columns": {"e": "md5"}}}, "tables.shop.*.mask_columns: 'e' must be masked by sha256 or null, got 'md5'"),
        ({"shop.*": {"mask_columns": 5}}, "tables.shop.*.mask_columns: expected a list of columns"),
        ({"shop.*": {"exclude_columns": ["e"], "mask_columns": ["e"]}}, "tables.shop.*: 'e' is both in exclude_columns and mask_columns"),
        ({"shop.*": {"cluster_by": ["a"], "partition_by": ["b"]}}, "tables.shop.*: cluster_by and partition_by cannot both be set"),
        ({"shop.*": {"primary_key": ["id"], "exclude_columns": ["id"]}}, "tables.shop.*.primary_key: 'id' is in exclude_columns"),
        ({"shop.*": {"cluster_by": ["ssn"], "exclude_columns": ["ssn"]}}, "tables.shop.*.cluster_by: 'ssn' is in exclude_columns"),
        ({"shop.*": {"primary_key": ["id"], "mask_columns": {"id": None}}}, "tables.shop.*.mask_columns: key column 'id' can only be masked by sha256"),
        ("shop", "tables must map patterns over database.schema.table to settings"),
    ],
)  # fmt: skip
def test_a_bad_entry_is_one_error_naming_the_key(tables: Any, error: str) -> None:
    with pytest.raises(OptionError, match=re.escape(error)):
        PipelineConfig.from_mapping({"source_dir": "in", "tables": tables})


def test_a_toml_file_and_flags_give_entries_flags_winning_key_by_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pipeline.toml"
    path.write_text(
        'source_dir = "in"\n'
        '[tables."shop.*"]\nmode = "scd2"\ncluster_by = ["customer_id"]\n'
        '[tables."re:^crm\\\\."]\nexclude_columns = ["ssn"]\n'
    )
    flags = [
        "--table-setting", "shop.*:freshness=5s",
        "--table-setting", "shop.*:table_properties=delta.enableChangeDataFeed=true",
        "--table-setting", "shop.orders:mask_columns=email,phone=null",
        "--table-setting", "shop.*:mode=scd1",
    ]  # fmt: skip
    assert cli(["run", "--config", str(path), "--print-config", *flags]) == 0
    printed = json.loads(capsys.readouterr().out)["tables"]
    # most specific first: the order the entries are tried in
    assert list(printed) == ["shop.orders", "shop.*", "re:^crm\\."]
    assert printed["shop.*"] == {
        "matches": "glob",
        "mode": "scd1",  # the flag over the file's
        "primary_key": "(the run's)",
        "freshness": 5.0,
        "table_properties": {"delta.enableChangeDataFeed": "true"},
        "cluster_by": ["customer_id"],  # the file's, kept
        "partition_by": [],
        "exclude_columns": [],
        "mask_columns": {},
    }
    assert printed["shop.orders"]["matches"] == "exact name"
    assert printed["shop.orders"]["mask_columns"] == {"email": "sha256", "phone": "null"}
    assert printed["re:^crm\\."]["exclude_columns"] == ["ssn"]


def test_a_bad_flag_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["run", "--source-dir", "in", "--print-config", "--table-setting", "shop.*=x"]) == 2
    assert "--table-setting expects PATTERN:KEY=VALUE" in capsys.readouterr().err
    assert cli(["run", "--source-dir", "in", "--print-config",
                "--table-setting", "shop.*:mode=scd9"]) == 2  # fmt: skip
    assert (
        capsys.readouterr().err == "anycdc: tables.shop.*.mode must be scd1 or scd2, got 'scd9'\n"
    )


def test_every_key_is_declared_once_and_in_the_readme() -> None:
    assert list(TABLE_SETTINGS) == [
        "mode", "primary_key", "freshness", "table_properties", "cluster_by", "partition_by",
        "exclude_columns", "mask_columns", "schema_changes", "column_names",
    ]  # fmt: skip
    for declared in TABLE_SETTINGS.values():
        assert declared.doc and "\n" not in declared.doc
        # each example parses as its key's value
        TableSettings.from_entry("x", {declared.name: _yaml(declared.example)})
    text = README.read_text(encoding="utf-8")
    start, end = text.index(TABLES_START), text.index(TABLES_END)
    assert text[start + len(TABLES_START) : end] == "\n" + tables_markdown_table()


def _yaml(text: str) -> Any:
    import yaml

    return yaml.safe_load(text)
