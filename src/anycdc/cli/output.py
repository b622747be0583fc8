"""Readable output: rich tables on a terminal, plain aligned text otherwise."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table


def print_table(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], *, stderr: bool = False
) -> None:
    """Print a table people can read (to stdout unless ``stderr``)."""
    console = Console(file=sys.stderr if stderr else sys.stdout, soft_wrap=False, width=200)
    table = Table(title=title, show_lines=False, header_style="bold")
    for header in headers:
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*("" if cell is None else str(cell) for cell in row))
    console.print(table)
