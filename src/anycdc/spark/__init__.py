"""Spark side of anycdc: the session factory, the JVM jars, decoding and applying to Delta,
and the fresh and consistent reads of a target's tables.

Importing this package imports neither pyspark nor its submodules; ``get_spark`` and the
reads (``read``, ``read_consistent``, ``register_views``, ``cuts``:
:mod:`anycdc.spark.reads`) are loaded on first use (so ``python -m anycdc.spark.jars`` runs
cleanly).

>>> from anycdc.spark import read
>>> read.__module__
'anycdc.spark.reads'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from anycdc.spark.reads import cuts, read, read_consistent, register_views
    from anycdc.spark.session import get_spark

__all__ = ["cuts", "get_spark", "read", "read_consistent", "register_views"]

_READS: Final = ("cuts", "read", "read_consistent", "register_views")


def __getattr__(name: str) -> Any:
    if name == "get_spark":
        from anycdc.spark.session import get_spark

        return get_spark
    if name in _READS:
        from anycdc.spark import reads

        return getattr(reads, name)
    raise AttributeError(f"module 'anycdc.spark' has no attribute {name!r}")
