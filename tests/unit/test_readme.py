"""The README stays true: its runnable examples are run and their output compared, and its
shape is kept (length, no issue numbers or commit hashes, every command mentioned).

A runnable example is a fenced ``console`` block right after the line
``<!-- readme-test: run -->``. In it, a line ``$ CMD`` is a shell command and the lines up to
the next ``$`` line are its shown output (stdout, then stderr). The shown output may elide:

- a line that is exactly ``...`` stands for any number of lines (none included);
- a line ending in ``...`` stands for one line that starts with the text before the ``...``.

Lines are compared without trailing spaces (the rich tables pad their titles). The blocks of
one README run in order in one temporary folder, so a later block may read what an earlier one
wrote; ``tests`` in that folder links to the repository's ``tests`` (the examples' inputs are
``tests/cases/...``), ``anycdc`` is this interpreter's, and the terminal is 100 columns wide.
None of them needs Spark, Java or Kafka.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from anycdc.cli import COMMAND_MODULES

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MARK = "<!-- readme-test: run -->"
MAX_LINES = 450


def _text() -> str:
    return README.read_text(encoding="utf-8")


def runnable_blocks(text: str) -> list[list[str]]:
    """The lines of every ``console`` block that follows the marker line."""
    lines = text.splitlines()
    blocks: list[list[str]] = []
    for i, line in enumerate(lines):
        if line.strip() != MARK:
            continue
        assert lines[i + 1] == "```console", f"README line {i + 2}: {MARK} must precede ```console"
        end = lines.index("```", i + 2)
        blocks.append(lines[i + 2 : end])
    return blocks


def commands_of(block: list[str]) -> list[tuple[str, list[str]]]:
    """``(command, shown output lines)`` pairs of a block."""
    pairs: list[tuple[str, list[str]]] = []
    for line in block:
        if line.startswith("$ "):
            pairs.append((line[2:], []))
        else:
            assert pairs, f"output before the first `$` line: {line!r}"
            pairs[-1][1].append(line)
    return pairs


def matches(shown: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` fits ``shown`` with its ``...`` elisions (see the module doc)."""
    shown = [line.rstrip() for line in shown]
    actual = [line.rstrip() for line in actual]

    def fit(s: int, a: int) -> bool:
        if s == len(shown):
            return a == len(actual)
        line = shown[s]
        if line == "...":
            return any(fit(s + 1, k) for k in range(a, len(actual) + 1))
        if a == len(actual):
            return False
        if line.endswith("..."):
            ok = actual[a].startswith(line[:-3])
        else:
            ok = actual[a] == line
        return ok and fit(s + 1, a + 1)

    return fit(0, 0)


def test_elision_rules() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "b"], ["a", "b"])
    assert matches(["ab..."], ["abc  "])
    assert not matches(["ab..."], ["xbc"])
    assert not matches(["a"], ["a", "b"])
    assert not matches(["a", "...", "d"], ["a", "b"])


def test_readme_examples_run_as_shown(tmp_path: Path) -> None:
    blocks = runnable_blocks(_text())
    assert len(blocks) >= 5, "the README lost its runnable examples"
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(COLUMNS="100", LINES="50", NO_COLOR="1", TERM="dumb")
    env.pop("FORCE_COLOR", None)
    for block in blocks:
        for command, shown in commands_of(block):
            assert command.startswith("anycdc "), f"an example runs anycdc only: {command!r}"
            done = subprocess.run(
                command,
                shell=True,
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            actual = done.stdout + ("\n" if done.stdout and not done.stdout.endswith("\n") else "")
            actual += done.stderr
            assert done.returncode == 0, f"$ {command}\nexit {done.returncode}\n{actual}"
            assert matches(shown, actual.splitlines()), (
                f"README example `$ {command}` printed:\n{actual}\nbut the README shows:\n"
                + "\n".join(shown)
            )


def test_readme_is_short() -> None:
    lines = _text().count("\n")
    assert lines <= MAX_LINES, (
        f"README.md has {lines} lines (at most {MAX_LINES}: move detail to docs/)"
    )


def test_readme_has_no_issue_numbers_or_commit_hashes() -> None:
    text = _text()
    issues = re.findall(r"(?<![\w&/])#\d+\b", text)
    assert not issues, f"issue references in README.md: {issues}"
    words = re.findall(r"\b[0-9a-f]{7,40}\b", text)
    hashes = [w for w in words if re.search(r"[a-f]", w) and re.search(r"\d", w)]
    assert not hashes, f"commit hashes in README.md: {sorted(set(hashes))}"


def _command_names() -> list[str]:
    """The subcommand names as typed, from each module of ``COMMAND_MODULES`` (the module
    ``replay`` is the command ``replay-dead-letters``)."""
    import importlib

    return [importlib.import_module(f"anycdc.cli.{m}").COMMAND.name for m in COMMAND_MODULES]


def test_readme_mentions_every_command() -> None:
    text = _text()
    names = _command_names()
    missing = [name for name in names if f"anycdc {name}" not in text]
    assert not missing, f"README.md does not mention: {missing}"


@pytest.mark.parametrize(
    "format_id",
    ["maxwell-json", "ogg-json", "aws-dms-json"],
)
def test_readme_names_the_newer_formats_in_the_vendor_table(format_id: str) -> None:
    text = _text()
    vendor_table = text[text.index("| vendor | format ids |") : text.index("<!-- formats-table")]
    assert f"`{format_id}`" in vendor_table
