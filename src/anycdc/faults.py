"""The fault suite's crash points inside the pipeline: inert unless a test arms one.

A crash point marks a moment no file shows from outside (files written but not committed,
tables committed but not their ledger row). The fault suite (``tests/faults``, ``make soak``,
:mod:`anycdc.devtools.chaos`) arms one by naming it in :data:`CRASH_ENV` in the environment
of the ``anycdc run`` it starts; the process then kills its own process group there, as a
container's death would. Without that variable a crash point does nothing, so this module
is all the pipeline needs of the fault tooling.

>>> crash_point("written")  # not armed: nothing happens
"""

from __future__ import annotations

import os
import signal
from typing import Final

CRASH_ENV: Final = "ANYCDC_CRASH_AT"
"""A moment's name (:func:`crash_point`): the process kills itself there (fault tests)."""
CRASH_POINTS: Final = ("written", "appended", "before-ledger", "renamed")
"""The moments the process reaches itself (:func:`crash_point`), not seen from outside."""


def crash_point(name: str) -> None:
    """``kill -9`` this process's group here when :data:`CRASH_ENV` names ``name`` (the
    fault suite's moments no file shows from outside); nothing otherwise."""
    if os.environ.get(CRASH_ENV) == name:
        os.killpg(os.getpgrp(), signal.SIGKILL)


__all__ = ["CRASH_ENV", "CRASH_POINTS", "crash_point"]
