"""Spark side of anycdc: the session factory, the JVM jars, decoding and applying to Delta.

Importing this package imports neither pyspark nor its submodules; ``get_spark`` is loaded
on first use (so ``python -m anycdc.spark.jars`` runs cleanly).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anycdc.spark.session import get_spark

__all__ = ["get_spark"]


def __getattr__(name: str) -> Any:
    if name == "get_spark":
        from anycdc.spark.session import get_spark

        return get_spark
    raise AttributeError(f"module 'anycdc.spark' has no attribute {name!r}")
