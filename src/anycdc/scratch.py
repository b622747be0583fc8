"""Scratch folders: the only folders an anycdc command empties, and only its own.

A benchmark, the demo and the probes start from an empty work folder (``--work-dir``,
``--out``). The folder is the user's choice, so it may be one that holds their files
(``--work-dir ~``, ``--work-dir .``): a command empties a folder only when a run of anycdc
made it, as the marker file it leaves there says (:data:`MARKER`), or, for a folder an older
anycdc made before it left markers, when every name in it is one the command writes
(``outputs``). A folder that is missing or empty is made and marked; anything else is
refused with one line naming the option, the folder and a name in it, before any work
starts. Nothing is deleted outside the folder: links in it are removed, not followed.

>>> import tempfile
>>> work = Path(tempfile.mkdtemp()) / "bench"
>>> fresh_scratch(work, "--work-dir") == work, sorted(p.name for p in work.iterdir())
(True, ['.anycdc-scratch'])
>>> _ = (work / "results.json").write_text("{}")
>>> sorted(p.name for p in fresh_scratch(work, "--work-dir").iterdir())
['.anycdc-scratch']
>>> home = work.parent / "home"
>>> (home / "notes").mkdir(parents=True)
>>> fresh_scratch(home, "--work-dir")
Traceback (most recent call last):
...
anycdc.errors.OptionError: --work-dir .../home: holds files anycdc did not make ('notes'): give a new or empty folder
>>> (home / "notes").is_dir()
True
"""

from __future__ import annotations

import fnmatch
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from anycdc.errors import OptionError

MARKER: Final = ".anycdc-scratch"
"""The file a command leaves in a scratch folder it made: its next run may empty it."""
MARKER_TEXT: Final = (
    "anycdc made this folder as scratch space: the next run that is given it empties it.\n"
)


def fresh_scratch(
    path: Path, option: str, outputs: Sequence[str] = (), *, marked: bool = True
) -> Path:
    """``path`` as an empty, marked folder (see the module docstring); ``option``: the flag
    that named it, for the error; ``outputs``: glob patterns of the names the command
    writes there (an unmarked folder holding only such names is an older run's);
    ``marked=False``: no marker (a folder whose every name ``outputs`` knows, read by
    other tools as it is).

    Raises :class:`~anycdc.errors.OptionError` for a file, or for a folder holding anything
    else (:func:`check_scratch`), and leaves it as it was."""
    for name in check_scratch(path, option, outputs):
        _remove(path / name)
    try:
        path.mkdir(parents=True, exist_ok=True)
        if marked:
            mark(path)
    except OSError as exc:
        raise OptionError(
            f"{option} {path}: cannot make the folder: {exc.strerror or exc}"
        ) from exc
    return path


def check_scratch(path: Path, option: str, outputs: Sequence[str] = ()) -> list[str]:
    """The names in ``path`` a command may remove (none when it is missing), or
    :class:`~anycdc.errors.OptionError` when it is a file or holds anything that is not
    its own (see :func:`fresh_scratch`)."""
    if path.is_symlink() and not path.is_dir():
        raise OptionError(f"{option} {path}: a link to nothing, not a folder")
    if path.exists() and not path.is_dir():
        raise OptionError(f"{option} {path}: a file, not a folder")
    if not path.is_dir():
        return []
    names = sorted(entry.name for entry in path.iterdir())
    if names and MARKER not in names:
        foreign = [n for n in names if not any(fnmatch.fnmatch(n, p) for p in outputs)]
        if foreign:
            raise OptionError(
                f"{option} {path}: holds files anycdc did not make ({foreign[0]!r}): "
                "give a new or empty folder"
            )
    return names


def mark(folder: Path) -> None:
    """Leave the marker in ``folder``: a later run may empty it."""
    (folder / MARKER).write_text(MARKER_TEXT, encoding="utf-8")


def tool_scratch(
    path: Path, prog: str, outputs: Sequence[str] = (), option: str = "--work-dir"
) -> Path:
    """:func:`fresh_scratch` of a ``python -m`` tool's ``--work-dir`` (or ``option``): a
    refusal is one line on stderr, ``prog: ...``, and exit status 2 (no traceback)."""
    try:
        return fresh_scratch(path, option, outputs)
    except OptionError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def _remove(entry: Path) -> None:
    """One entry of a scratch folder: a folder with what is in it, a file, a link (itself)."""
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry)
    else:
        entry.unlink(missing_ok=True)
