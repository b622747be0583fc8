"""Each setting of ``anycdc run`` is declared once (``anycdc.config.SETTINGS``): its flags,
its checks, its ``--help`` line and its README row all come from that declaration."""

from __future__ import annotations

import argparse
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main as cli
from anycdc.cli.run import add_arguments, config_from_args
from anycdc.config import (
    GROUPS,
    SETTINGS,
    PipelineConfig,
)
from anycdc.config_docs import TABLE_END, TABLE_START, markdown_table, with_markdown_table
from anycdc.errors import OptionError

README = Path(__file__).resolve().parents[2] / "README.md"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser


def test_every_field_is_declared_with_a_flag_a_group_and_a_doc() -> None:
    assert list(SETTINGS) == [f.name for f in fields(PipelineConfig)]
    long_flags = [flag.names[0] for s in SETTINGS.values() for flag in s.flags]
    assert len(long_flags) == len(set(long_flags))  # no flag spelled for two settings
    for declared in SETTINGS.values():
        assert declared.flags, declared.name
        assert declared.group in GROUPS
        assert declared.doc and "\n" not in declared.doc
        assert all(flag.names[0].startswith("--") for flag in declared.flags)


def test_readmes_table_is_the_generated_one() -> None:
    """Fails when a declaration changed and ``anycdc dev config-table --update README.md``
    was not run (or when the README's table was edited by hand)."""
    text = README.read_text(encoding="utf-8")
    assert text.count(TABLE_START) == 1 and text.count(TABLE_END) == 1
    assert with_markdown_table(text) == text


def test_every_setting_has_one_readme_row_naming_its_flags() -> None:
    rows = [line for line in markdown_table().splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == sorted(
        SETTINGS, key=lambda name: list(GROUPS).index(SETTINGS[name].group)
    )
    for row, name in zip(rows, (row.split("`")[1] for row in rows), strict=True):
        for flag in SETTINGS[name].flags:
            assert f"`{flag.names[0]}" in row


def test_help_lists_every_flag_under_its_group(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli(["run", "--help"])
    text = capsys.readouterr().out
    sections = {title: body for title, body in re.findall(r"\n(\S[^\n]*):\n((?:  .*\n?)+)", text)}
    for declared in SETTINGS.values():
        for flag in declared.flags:
            assert flag.names[0] in sections[GROUPS[declared.group]], flag.names[0]


def test_the_dev_command_writes_the_table_between_the_markers(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{TABLE_START}\n| stale |\n{TABLE_END}\nafter\n")
    assert cli(["dev", "config-table", "--update", str(readme)]) == 0
    text = readme.read_text()
    assert "| stale |" not in text and text.endswith(f"{TABLE_END}\nafter\n")
    assert markdown_table() in text
    readme.write_text("no markers")
    assert cli(["dev", "config-table", "--update", str(readme)]) == 2


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        # type
        ({"max_concurrent_tables": "4"}, "max_concurrent_tables: expected an integer, got '4' (a text)"),
        ({"max_concurrent_tables": 2.5}, "max_concurrent_tables: expected an integer, got 2.5"),
        ({"key_range_min_mb": "big"}, "key_range_min_mb: expected a number, got 'big' (a text)"),
        ({"vacuum_retain_hours": False}, "vacuum_retain_hours: expected a number, got False"),
        ({"query_name": 7}, "query_name: expected a text, got 7 (an integer)"),
        ({"target": 7}, "target: expected a text, got 7"),
        ({"auto_compact": 1}, "auto_compact must be true or false, got 1"),
        ({"kafka_options": "kafka.x=1"}, "kafka_options: expected a mapping, got 'kafka.x=1'"),
        # minimum
        ({"max_concurrent_tables": 0}, "max_concurrent_tables must be an integer >= 1, got 0"),
        ({"max_files_per_trigger": 0}, "max_files_per_trigger must be >= 1, got 0"),
        ({"key_range_min_mb": -0.5}, "key_range_min_mb must be >= 0, got -0.5"),
        # choices
        ({"mode": "scd3"}, "mode must be scd1 or scd2, got 'scd3'"),
        ({"column_names": "safe"}, "column_names must be exact or portable, got 'safe'"),
        # regex
        ({"include": ["shop\\.(orders"]}, "include: invalid regex 'shop\\\\.(orders'"),
        ({"exclude": "["}, "exclude: invalid regex '['"),
        # its own parsing
        ({"decimal_default": "38"}, "decimal_default must be P,S (two integers), got '38'"),
        ({"freshness": "soon"}, "freshness: expected seconds or a duration"),
    ],
)  # fmt: skip
def test_a_bad_value_of_each_kind_is_an_error_naming_the_key(
    raw: dict[str, Any], error: str
) -> None:
    with pytest.raises(OptionError, match=re.escape(error)):
        PipelineConfig.from_mapping({"source_dir": "in", **raw})


def test_overrides_are_checked_as_the_file_is() -> None:
    config = PipelineConfig.from_mapping({"source_dir": "in"})
    with pytest.raises(OptionError, match="max_concurrent_tables must be an integer >= 1"):
        config.with_overrides(max_concurrent_tables=0)
    with pytest.raises(OptionError, match="mode must be scd1 or scd2"):
        config.with_overrides(mode="history")


def test_a_text_for_an_integer_in_a_yaml_file_is_one_line_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pipeline.yaml"
    path.write_text('source_dir: in\nmax_concurrent_tables: "4"\n')
    assert cli(["run", "--config", str(path), "--print-config"]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        f"anycdc: {path}: max_concurrent_tables: expected an integer, got '4' (a text)\n"
    )


def test_flags_give_the_declared_settings_their_values(tmp_path: Path) -> None:
    """A flag of each kind: a value, a short alias, a list, K=V pairs, a --no-X, --catalog."""
    config = config_from_args(
        _parser().parse_args([
            "-t", str(tmp_path / "lake"), "--source-dir", str(tmp_path), "-f", "maxwell-json",
            "--include", "a", "--include", "b", "--primary-key", "db.t=id,ts",
            "--no-auto-compact", "--catalog", "--max-concurrent-tables", "3",
        ])
    )  # fmt: skip
    assert config.target == str(tmp_path / "lake")
    assert config.format == "maxwell-json"
    assert config.include == ("a", "b")
    assert config.primary_keys == {"db.t": ("id", "ts")}
    assert config.auto_compact is False
    assert config.table_name == "{database}.{table}"
    assert config.max_concurrent_tables == 3
    with pytest.raises(SystemExit):  # argparse refuses a text for an integer flag
        _parser().parse_args(["--max-concurrent-tables", "four"])
