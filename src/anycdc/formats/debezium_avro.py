"""Deprecated (kept for one release): Debezium Avro moved to :mod:`anycdc.formats.debezium.avro`.
Importing this module warns (:class:`DeprecationWarning`); its names are still found here.
"""

from __future__ import annotations

from typing import Any

from anycdc.formats.moved import moved_module

_find = moved_module(__name__)


def __getattr__(name: str) -> Any:
    """A name of the old module, read from the module that defines it now."""
    return _find(name)
