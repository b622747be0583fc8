"""The README's tables of the configuration, derived from the declarations: every run
setting (:data:`anycdc.config.SETTINGS`) and every key of a ``tables:`` entry
(:data:`anycdc.table_settings.TABLE_SETTINGS`). ``anycdc dev config-table --update
README.md`` writes them; a test fails when the README's copy is stale."""

from __future__ import annotations

from typing import Final

from anycdc.config import GROUPS, SETTINGS, Flag
from anycdc.errors import OptionError
from anycdc.table_settings import TABLE_SETTINGS


def markdown_table() -> str:
    """The README's table of the settings (``anycdc dev config-table`` writes it there),
    group by group as ``anycdc run --help`` lists them.

    >>> print(markdown_table().splitlines()[2])
    | `source_dir` | `--source-dir DIR` | — | folder of message files ...
    """
    rows = ["| key | flag | default | meaning |", "|---|---|---|---|"]
    for group in GROUPS:
        for declared in SETTINGS.values():
            if declared.group != group:
                continue
            cells = (
                f"`{declared.name}`",
                ", ".join(flag_text(flag) for flag in declared.flags),
                declared.default_text,
                declared.doc,
            )
            rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"


TABLE_START: Final = (
    "<!-- config-table:start (anycdc dev config-table --update README.md writes it from "
    "the declarations in src/anycdc/config.py: edit those) -->"
)
TABLE_END: Final = "<!-- config-table:end -->"


TABLES_START: Final = (
    "<!-- tables-table:start (anycdc dev config-table --update README.md writes it from "
    "the declarations of TableSettings in src/anycdc/table_settings.py: edit those) -->"
)
TABLES_END: Final = "<!-- tables-table:end -->"


def tables_markdown_table() -> str:
    """The README's table of the keys of a ``tables:`` entry (:class:`TableSettings`).

    >>> print(tables_markdown_table().splitlines()[2])
    | `mode` | `scd2` | `scd1` or `scd2`, over the run's `mode` |
    """
    rows = ["| key | example | meaning |", "|---|---|---|"]
    for declared in TABLE_SETTINGS.values():
        cells = (f"`{declared.name}`", f"`{declared.example}`", declared.doc)
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"


def with_markdown_table(text: str) -> str:
    """``text`` (the README) with :func:`markdown_table` between its markers (and
    :func:`tables_markdown_table` between its own, where it has them).

    >>> with_markdown_table(f"a\\n{TABLE_START}\\nold\\n{TABLE_END}\\nb").count("`max_pending_rows`")
    1
    """
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    if start < 0 or end < start:
        raise OptionError(f"no {TABLE_START!r} ... {TABLE_END!r} markers to put the table between")
    head = text[: start + len(TABLE_START)]
    text = f"{head}\n{markdown_table()}{text[end:]}"
    start, end = text.find(TABLES_START), text.find(TABLES_END)
    if start >= 0 and end > start:
        head = text[: start + len(TABLES_START)]
        text = f"{head}\n{tables_markdown_table()}{text[end:]}"
    return text


def flag_text(flag: Flag) -> str:
    """``--target DIR`` (``-t``), in Markdown."""
    long, *short = flag.names
    text = f"`{long} {flag.metavar}`" if flag.metavar else f"`{long}`"
    return text + "".join(f" (`{alias}`)" for alias in short)
