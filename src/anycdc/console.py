"""Tables people can read: rich on a terminal, fitted to its width; wide when piped.

Shared by the commands, the demo and the benchmarks (below all of them: it prints, and
knows nothing of what it prints).
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Sequence
from typing import Any, Final

from rich.console import Console
from rich.table import Table

FALLBACK_SIZE: Final = (200, 24)
"""The width (and height) when there is no terminal (a pipe, a file, CI): wide, so that a
cell (a file path) stays on one line for grep; ``COLUMNS`` overrides it."""
MIN_WIDTH: Final = 40  # a narrower report (some CI) would fold every cell to a few letters


def terminal_width() -> int:
    """Columns to fit a table into: the terminal's (or ``$COLUMNS``), else the fallback."""
    return max(MIN_WIDTH, shutil.get_terminal_size(FALLBACK_SIZE).columns)


def print_table(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], *, stderr: bool = False
) -> None:
    """Print a table people can read (to stdout unless ``stderr``)."""
    console = Console(
        file=sys.stderr if stderr else sys.stdout, soft_wrap=False, width=terminal_width()
    )
    table = Table(title=title, show_lines=False, header_style="bold")
    for header in headers:
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*("" if cell is None else str(cell) for cell in row))
    console.print(table)


def age_text(seconds: float) -> str:
    """``4.1s``, ``12m``, ``5h``, ``3d`` (a lag in words a reader can take in at once).

    >>> age_text(4.12), age_text(720), age_text(81112469.2)
    ('4.1s', '12m', '939d')
    """
    if seconds < 120:
        return f"{seconds:.1f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    if seconds < 172800:
        return f"{seconds / 3600:.0f}h"
    return f"{seconds / 86400:.0f}d"


def utc_time(ts_ms: int | None) -> str:
    """Unix milliseconds as a table shows a time (UTC); "" for none.

    >>> utc_time(1_700_000_000_000), utc_time(None)
    ('2023-11-14 22:13:20Z', '')
    """
    if not ts_ms:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ts_ms / 1000)) + "Z"
