"""Each format's one typed Capabilities declaration, and what reads it: ``anycdc formats``,
the README's formats table and the simulator's profiles (issue #18)."""

from __future__ import annotations

from pathlib import Path

import pytest

from anycdc.cli import main
from anycdc.cli.formats import README_BEGIN, README_END, markdown_table, readme_with_table
from anycdc.formats import format_class, format_ids
from anycdc.formats.base import BeforeImage, Capabilities, TypeInfo
from anycdc.simulate import FORMAT_PROFILES, SIMULATION

README = Path(__file__).parents[2] / "README.md"
FLAGS = ("truncate", "tx_markers", "heartbeats", "snapshots", "key_names", "partial_updates",
         "owner_as_schema", "documents", "value_typed")  # fmt: skip


@pytest.mark.parametrize("format_id", format_ids())
def test_every_format_declares_typed_capabilities(format_id: str) -> None:
    cls = format_class(format_id)
    caps = cls.capabilities
    assert isinstance(caps, Capabilities)
    assert isinstance(caps.before_image, BeforeImage)
    assert isinstance(caps.types, TypeInfo)
    assert caps.position, f"{format_id}: no ordering position described"
    assert all(isinstance(note, str) and note for note in caps.notes)
    # declared in the class itself (or inherited from a family whose messages are the same)
    assert "capabilities" in cls.__dict__


def test_the_readme_formats_table_is_rendered_from_the_declarations() -> None:
    text = README.read_text("utf-8")
    assert text.count(README_BEGIN) == 1 and text.count(README_END) == 1
    assert readme_with_table(text) == text, (
        "README.md's formats table differs from the formats' Capabilities: run "
        "`anycdc formats --readme README.md`"
    )
    rows = markdown_table().splitlines()[2:]
    assert [r.split(" | ")[0] for r in rows] == [f"| `{f}`" for f in format_ids()]


def test_the_readme_table_changes_with_a_declaration() -> None:
    """The check above is not vacuous: a changed flag changes the rendered row."""
    caps = format_class("ogg-json").capabilities
    assert "TRUNCATE" in caps.carries and "DDL" not in caps.carries
    row = next(r for r in markdown_table().splitlines() if r.startswith("| `ogg-json`"))
    assert row.endswith("| TRUNCATE, OWNER.TABLE |")


def test_readme_without_markers_is_an_error() -> None:
    with pytest.raises(ValueError, match="formats-table"):
        readme_with_table("# no table here\n")


@pytest.mark.parametrize("format_id", sorted(FORMAT_PROFILES))
def test_the_simulator_reads_the_declared_flags(format_id: str) -> None:
    caps = format_class(format_id).capabilities
    profile = FORMAT_PROFILES[format_id]
    assert {f: getattr(profile, f) for f in FLAGS} == {f: getattr(caps, f) for f in FLAGS}
    assert profile.ddl == (caps.ddl and not caps.documents)
    assert (profile.types == "text") == (caps.types is TypeInfo.NONE)
    assert profile.notes[: len(caps.notes)] == caps.notes


def test_simulation_extras_name_simulated_formats_only() -> None:
    assert set(SIMULATION) <= set(FORMAT_PROFILES)


def test_formats_command_prints_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["formats"]) == 0
    out = capsys.readouterr().out
    assert all(f in out for f in format_ids())
    assert "carries" in out and "value-typed" in out and "OWNER.TABLE" in out
    assert main(["formats", "--markdown"]) == 0
    assert capsys.readouterr().out == markdown_table()


def test_formats_readme_rewrites_the_block(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n\n{README_BEGIN}\n| stale |\n{README_END}\nafter\n", "utf-8")
    assert main(["formats", "--readme", str(readme)]) == 0
    text = readme.read_text("utf-8")
    assert "| stale |" not in text and text.endswith(f"{README_END}\nafter\n")
    assert f"{README_BEGIN}\n{markdown_table()}{README_END}" in text
