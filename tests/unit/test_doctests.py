"""The runnable examples in the package's docstrings run, and still say what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import anycdc
from anycdc.formats.moved import MOVED_MODULES


def _modules() -> list[str]:
    names = [
        info.name
        for info in pkgutil.walk_packages(anycdc.__path__, prefix="anycdc.")
        # a moved module's shim warns when imported, and holds no example
        if not info.name.endswith("__main__") and info.name not in MOVED_MODULES
    ]
    return sorted(["anycdc", *names])


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False, report=True)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"


def test_the_examples_are_found() -> None:
    attempted = sum(
        doctest.testmod(importlib.import_module(name), verbose=False, report=False).attempted
        for name in _modules()
    )
    assert attempted >= 50  # a walk that finds no module would pass every test above
