"""A user's mistake, in any subcommand that runs without Spark or Kafka, ends in one line
(``anycdc: ...`` on stderr) that names what was wrong, never in a traceback: exit 2 for
what was asked wrongly (a flag, a path, the configuration), 1 for a run that failed.

Each row is the command line (``{tmp}`` is a folder of prepared inputs), the exit code(s)
allowed, and a text the message must contain: the file, the key or the option."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from anycdc.cli import DEBUG_ENV, describe, exit_code, main, run_guarded
from anycdc.errors import ConfigError, OptionError

USAGE = {2}
ANY_ERROR = {1, 2}  # decode's own choice between them is not what these rows check
CLOSED_PORT_HOST = "127.0.0.1:1"  # port 1 (tcpmux) is closed here: the connection is refused
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

INPUTS = {
    "bad.yaml": "a: [1\n",
    "hold.yaml": "hold_open_transactions: -1\n",
    "bad.toml": "a = \n",
    "topics5.yaml": "topics: 5\n",
    "pk5.yaml": "primary_keys:\n  shop.orders: 5\n",
    "typo.yaml": "topic: [orders]\n",
    "list.yaml": "- source_dir\n",
    "topic_typo.yaml": "source_dir: in\nper_topic:\n  t: {fromat: canal-json}\n",
    "nomark.md": "# no formats table here\n",
    "messages.jsonl": '{"a": 1}\n',
    "unreadable.jsonl": '{"a": 1}\n',
    "not-gzip.jsonl.gz": "plain text, named .gz\n",
}

ROWS: list[tuple[str, Sequence[str], set[int], str]] = [
    # missing inputs
    ("decode missing file", ["decode", "{tmp}/missing.jsonl"], USAGE, "missing.jsonl"),
    ("detect missing file", ["detect", "{tmp}/missing.jsonl"], USAGE, "missing.jsonl"),
    (
        "convert missing IN",
        ["convert", "{tmp}/missing.jsonl", "{tmp}/out.jsonl", "--to", "canal-json"],
        USAGE,
        "missing.jsonl",
    ),
    ("detect not gzip", ["detect", "{tmp}/not-gzip.jsonl.gz"], {1}, "not-gzip.jsonl.gz"),
    ("detect empty folder", ["detect", "{tmp}/empty"], USAGE, "empty"),
    # a folder where a file goes, a file where a folder goes
    ("readme is a folder", ["formats", "--readme", "{tmp}/empty"], USAGE, "is a folder"),
    ("config is a folder", ["run", "--config", "{tmp}/folder.yaml"], USAGE, "folder.yaml"),
    (
        "avro schema_dir is a file",
        [
            "simulate",
            "-f",
            "debezium-avro",
            "-o",
            "schema_dir={tmp}/messages.jsonl",
            "--out",
            "{tmp}/sim",
        ],
        USAGE,
        "messages.jsonl is a file",
    ),
    (
        "run missing source folder",
        ["run", "--source-dir", "{tmp}/missing", "--target", "{tmp}/lake"],
        USAGE,
        "source_dir {tmp}/missing: no such file or folder",
    ),
    # verify: both folders looked at before Spark starts
    (
        "verify without a truth",
        ["verify", "--target", "{tmp}/empty", "--truth", "{tmp}/empty"],
        USAGE,
        "--truth {tmp}/empty: no ground truth there",
    ),
    (
        "verify missing target",
        ["verify", "--target", "{tmp}/missing", "--truth", "{tmp}/avro/truth"],
        USAGE,
        "--target {tmp}/missing: no such folder",
    ),
    # the bench: what cannot be measured, refused before a broker or Spark starts
    ("bench negative events", ["bench", "--events", "-5"], USAGE, "--events: at least 0"),
    ("bench no tables", ["bench", "--tables", "0"], USAGE, "--tables: at least 1"),
    (
        "bench nothing to measure",
        ["bench", "--events", "0", "--sustained-seconds", "0"],
        USAGE,
        "nothing to measure",
    ),
    ("bench unknown run", ["bench", "--runs", "deferred,fast"], USAGE, "unknown run fast"),
    ("bench unknown format", ["bench", "--format", "nope"], USAGE, "--format nope"),
    ("bench work dir is a file", ["bench", "--work-dir", "{tmp}/messages.jsonl"], USAGE, "a file"),
    (
        "out is a file",
        ["simulate", "-f", "canal-json", "--out", "{tmp}/messages.jsonl"],
        USAGE,
        "messages.jsonl is a file",
    ),
    (
        "out cannot be made",
        ["simulate", "-f", "canal-json", "--out", "/proc/anycdc-x"],
        USAGE,
        "/proc/anycdc-x",
    ),
    # the configuration file
    ("config missing", ["run", "--config", "{tmp}/missing.yaml"], USAGE, "missing.yaml"),
    ("yaml syntax", ["run", "--config", "{tmp}/bad.yaml"], USAGE, "bad.yaml:2:1: YAML syntax"),
    ("toml syntax", ["run", "--config", "{tmp}/bad.toml"], USAGE, "bad.toml:1:5: TOML syntax"),
    ("topics: 5", ["run", "--config", "{tmp}/topics5.yaml"], USAGE, "topics5.yaml: topics:"),
    ("primary_keys value", ["run", "--config", "{tmp}/pk5.yaml"], USAGE, "'shop.orders'"),
    ("unknown key", ["run", "--config", "{tmp}/typo.yaml"], USAGE, "did you mean 'topics'?"),
    (
        "top level list",
        ["run", "--config", "{tmp}/list.yaml"],
        USAGE,
        "list.yaml: expected a mapping",
    ),
    (
        "per_topic typo",
        ["run", "--config", "{tmp}/topic_typo.yaml"],
        USAGE,
        "did you mean 'format'?",
    ),
    # run's flags, refused before Spark
    (
        "starting offsets",
        ["run", "--source-dir", "{tmp}", "--starting-offsets", "nope", "--print-config"],
        USAGE,
        "starting_offsets",
    ),
    (
        "run empty primary_key",
        ["run", "--source-dir", "{tmp}", "-o", "primary_key=", "--print-config"],
        USAGE,
        "primary_key",
    ),
    # formats
    ("readme without markers", ["formats", "--readme", "{tmp}/nomark.md"], USAGE, "nomark.md"),
    ("readme missing", ["formats", "--readme", "{tmp}/missing.md"], USAGE, "missing.md"),
    (
        "config table readme missing",
        ["dev", "config-table", "--update", "{tmp}/missing.md"],
        USAGE,
        "missing.md",
    ),
    # simulate's counts, probabilities and options
    (
        "zero tables",
        ["simulate", "-f", "canal-json", "--tables", "0", "--out", "{tmp}/s"],
        USAGE,
        "--tables",
    ),
    (
        "negative events",
        ["simulate", "-f", "canal-json", "--events", "-1", "--out", "{tmp}/s"],
        USAGE,
        "--events",
    ),
    (
        "negative rows",
        ["simulate", "-f", "canal-json", "--rows", "-1", "--out", "{tmp}/s"],
        USAGE,
        "--rows",
    ),
    (
        "zero partitions",
        ["simulate", "-f", "canal-json", "--partitions", "0", "--out", "{tmp}/s"],
        USAGE,
        "--partitions",
    ),
    (
        "duplicates > 1",
        ["simulate", "-f", "canal-json", "--duplicates", "2", "--out", "{tmp}/s"],
        USAGE,
        "--duplicates",
    ),
    (
        "reorder < 0",
        ["simulate", "-f", "canal-json", "--reorder", "-0.1", "--out", "{tmp}/s"],
        USAGE,
        "--reorder",
    ),
    (
        "malformed > 1",
        ["simulate", "-f", "canal-json", "--malformed", "1.5", "--out", "{tmp}/s"],
        USAGE,
        "--malformed",
    ),
    (
        "empty primary_key",
        ["simulate", "-f", "canal-json", "-o", "primary_key=", "--out", "{tmp}/s"],
        USAGE,
        "primary_key",
    ),
    (
        "empty primary_key to decode",
        ["decode", "-f", "canal-json", "-o", "primary_key= ,", "{tmp}/in.jsonl"],
        USAGE,
        "names no column",
    ),
    (
        "unknown primary_key",
        ["simulate", "-f", "canal-json", "-o", "primary_key=nope", "--out", "{tmp}/s"],
        USAGE,
        "'nope'",
    ),
    # a schema store that cannot answer (real Avro messages, written by simulate)
    (
        "schema_dir missing",
        [
            "decode",
            "{tmp}/avro/messages",
            "-f",
            "debezium-avro",
            "-o",
            "schema_dir={tmp}/no-schemas",
        ],
        ANY_ERROR,
        "no-schemas",
    ),
]


# the reads check their configuration and target before Spark starts (no JVM here)
ROWS += [
    ("show without a run", ["show", "--target", "{tmp}/empty", "shop.orders"], USAGE,
     "no anycdc run found under {tmp}/empty"),
    ("cuts without a run", ["cuts", "--target", "{tmp}/empty"], USAGE,
     "no anycdc run found under {tmp}/empty"),
    ("show with a bad setting", ["show", "--target", "{tmp}/empty", "shop.orders", "--config",
     "{tmp}/hold.yaml"], ANY_ERROR, "hold_open_transactions must be an integer >= 0"),
    ("status without a run", ["status", "--target", "{tmp}/empty"], USAGE,
     "no anycdc run found under {tmp}/empty (missing _anycdc/batches)"),
    ("audit without a run", ["audit", "--target", "{tmp}/empty"], USAGE,
     "no anycdc run found under {tmp}/empty"),
    ("replay without a run", ["replay-dead-letters", "--target", "{tmp}/empty"], USAGE,
     "no anycdc run found under {tmp}/empty"),
    ("run into a file, before Spark", ["run", "--source-dir", "{tmp}/empty", "--target",
     "{tmp}/messages.jsonl"], USAGE, "{tmp}/messages.jsonl is a file, not a folder"),
    ("run into its source, before Spark", ["run", "--source-dir", "{tmp}", "--target",
     "{tmp}/lake"], USAGE, "{tmp}/lake is inside source_dir {tmp}"),
]  # fmt: skip
BEFORE_SPARK = [row for row in ROWS if row[0].endswith(("without a run", "before Spark"))]

ROWS.append(
    (
        "registry unreachable",
        ["decode", "{tmp}/avro/messages", "-f", "debezium-avro", "-o",
         f"registry_url=http://{CLOSED_PORT_HOST}"],
        ANY_ERROR,
        CLOSED_PORT_HOST,
    )
)  # fmt: skip


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The prepared inputs, once for every row."""
    tmp = tmp_path_factory.mktemp("bad-inputs")
    for name, text in INPUTS.items():
        (tmp / name).write_text(text, "utf-8")
    (tmp / "unreadable.jsonl").chmod(0)
    (tmp / "empty").mkdir()
    (tmp / "folder.yaml").mkdir()
    code = main(
        [
            "simulate",
            "-f",
            "debezium-avro",
            "--out",
            str(tmp / "avro"),
            "--tables",
            "1",
            "--rows",
            "1",
            "--events",
            "1",
        ]
    )
    assert code == 0
    return tmp


def run_cli(argv: Sequence[str], tmp: Path) -> int:
    """``main`` over ``argv`` with ``{tmp}`` filled in; argparse's own exit is a code too."""
    try:
        return main([arg.replace("{tmp}", str(tmp)) for arg in argv])
    except SystemExit as exc:  # argparse refusing a flag
        return int(exc.code or 0)


@pytest.mark.parametrize(
    ("argv", "codes", "names"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS]
)
def test_a_bad_input_is_one_line_naming_it(
    argv: Sequence[str],
    codes: set[int],
    names: str,
    inputs: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    capsys.readouterr()  # the fixture's own output
    code = run_cli(argv, inputs)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert code in codes, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("anycdc: "), err
    assert names.replace("{tmp}", str(inputs)) in lines[0]


@pytest.mark.parametrize("argv", [r[1] for r in BEFORE_SPARK], ids=[r[0] for r in BEFORE_SPARK])
def test_a_wrong_target_is_told_before_spark_starts(
    argv: Sequence[str], inputs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wrong --target (no run there; for `run`, a file or a folder inside the source) is
    one line at once: no Spark session is asked for (its start-up
    would take seconds and print the JVM's log lines first)."""
    import anycdc.spark.session

    asked: list[str] = []

    def no_spark(*args: object, **kwargs: object) -> None:
        asked.append(str(args or kwargs))
        raise RuntimeError("no Spark here")

    monkeypatch.setattr(anycdc.spark.session, "get_spark", no_spark)
    assert (run_cli(argv, inputs), asked) == (2, [])


@pytest.mark.skipif(IS_ROOT, reason="root reads a file whatever its permissions")
def test_an_unreadable_file_is_named(inputs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = run_cli(["detect", "{tmp}/unreadable.jsonl"], inputs)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert code == 1
    assert "unreadable.jsonl" in err and "ermission" in err


def test_a_config_error_names_the_file_and_the_key() -> None:
    """from_file names the file for its own keys, not for the flags' ones."""
    with pytest.raises(ConfigError, match=r"^p\.yaml: unknown configuration key 'topic'"):
        from anycdc.config import PipelineConfig

        PipelineConfig.from_mapping({"topic": "a"}, source="p.yaml")
    with pytest.raises(OptionError, match=r"^topics: expected a list") as raised:
        PipelineConfig.from_mapping({"topics": 5}, source="p.yaml", from_flags={"topics"})
    assert not isinstance(raised.value, ConfigError)


def test_an_unexpected_error_is_one_line_with_the_way_to_its_traceback() -> None:
    text = describe(KeyError("shop.orders"))
    assert text.startswith("unexpected error: KeyError") and "ANYCDC_DEBUG=1" in text
    assert "\n" not in describe(RuntimeError("first\nsecond"))
    assert exit_code(KeyError("x")) == 1
    assert exit_code(PermissionError(13, "Permission denied", "f")) == 1
    assert describe(PermissionError(13, "Permission denied", "f")) == "f: Permission denied"
    assert exit_code(IsADirectoryError(21, "Is a directory", "d")) == 2


def _broken_command(args: argparse.Namespace) -> int:
    """A command with a bug: what main() runs every command's handler through must not
    show a user its traceback."""
    raise KeyError(args.table)


def test_a_bug_is_one_line_unless_debugging(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = argparse.Namespace(table="shop.orders")
    monkeypatch.delenv(DEBUG_ENV, raising=False)
    assert run_guarded(_broken_command, args) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err == (
        "anycdc: unexpected error: KeyError: 'shop.orders' "
        "(set ANYCDC_DEBUG=1 to see the traceback)\n"
    )
    monkeypatch.setenv(DEBUG_ENV, "1")
    with pytest.raises(KeyError, match=r"shop\.orders"):
        run_guarded(_broken_command, args)
    monkeypatch.setenv(DEBUG_ENV, "0")  # 0 is off, as in most tools' DEBUG variables
    assert run_guarded(_broken_command, args) == 1


def test_a_yaml_error_escaping_a_command_names_its_place() -> None:
    import yaml

    try:
        yaml.safe_load("a: [1\n")
    except yaml.YAMLError as exc:
        text, code = describe(exc), exit_code(exc)
    assert text.startswith("YAML syntax error at line 2, column 1: ")
    assert code == 2


def test_a_table_fits_the_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``anycdc formats`` on an 80-column terminal (``COLUMNS``, which a terminal's size
    gives shutil too): no line wider than it, where it used to be 200 wide."""
    width = 80
    monkeypatch.setenv("COLUMNS", str(width))
    assert main(["formats"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) > 1
    assert max(len(line) for line in lines) <= width


@pytest.mark.parametrize(
    ("argv", "told_by"),
    [
        (["decode", "{tmp}/messages.jsonl", "--out", "x.jsonl"], "anycdc decode"),
        (["dev", "kafka", "status", "--bogus"], "anycdc dev"),
        (["--bogus"], "anycdc"),
    ],
)
def test_an_unknown_flag_is_told_by_its_subcommand(
    argv: Sequence[str], told_by: str, inputs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``anycdc decode FILE --out x`` shows decode's usage and names decode, not the top
    level's ``anycdc [-h] [--version] COMMAND``, which does not say what takes which flag."""
    capsys.readouterr()
    assert run_cli(argv, inputs) == 2
    err = capsys.readouterr().err
    assert f"usage: {told_by} " in err
    assert f"{told_by}: error: unrecognized arguments: " in err
    assert argv[-1] in err.rsplit("unrecognized arguments: ", 1)[1]
    assert "Traceback" not in err
