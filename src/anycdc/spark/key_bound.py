"""Appends instead of MERGEs: a table's key bound.

A MERGE costs ~8-11 Spark jobs whatever it writes; an append costs ~3. When every row a
due table's pending changes leave is an upsert of a key above the largest key the table
holds (an insert-mostly table with an increasing integral key: orders, logs, events),
nothing can match, so appending those rows does exactly what the MERGE would.

The run keeps, per table, a :class:`KeyBound`: a value no key of the table exceeds, and
the table's version (its newest ``_delta_log`` commit) when that held. The bound is read
once (``SELECT max(key)``) and then kept up to date by the run's own writes (the largest
key each write brought). Any commit the run did not make itself (``replay-dead-letters``,
a user's UPDATE, an OPTIMIZE) moves the table past the version the bound was kept at, and
the bound is read again before it is trusted: one existence check of the next commit file
tells (:func:`log_version`), cheap on every file system Delta runs on.

Only single-column keys of an integral type qualify (their order is the numbers'); a
text key's order is the collation's, and Delta keeps only a prefix of long texts in its
statistics.

>>> bound_column(("id",), {"id": "BIGINT", "v": "STRING"}), bound_column(("a", "b"), {})
('id', None)
>>> KeyBound(high=10, version=3).admits(11), KeyBound(high=None, version=0).admits(-5)
(True, True)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from anycdc.spark.merge_sql import max_text_sql

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

INTEGRAL: Final = re.compile(r"TINYINT|SMALLINT|INT|BIGINT|DECIMAL\(\d+,0\)")
KEY_NUMBER_TYPE: Final = "DECIMAL(38,0)"
"""What a bound key's text is read as (holds every integral type, unsigned BIGINT too)."""
COMMIT_FILE: Final = re.compile(r"(\d{20})\.json")
LOG_DIR: Final = "_delta_log"


@dataclass
class KeyBound:
    """No key of the table is above ``high`` (``None``: the table holds no row) as of
    the table's ``version``."""

    high: int | None
    version: int

    def admits(self, lowest: int) -> bool:
        """Whether a batch whose smallest key is ``lowest`` holds only keys above the bound."""
        return self.high is None or lowest > self.high

    def raised(self, highest: int | None, version: int) -> KeyBound:
        """The bound after the run's own write of keys up to ``highest`` at ``version``."""
        if highest is None:
            return KeyBound(self.high, version)
        high = highest if self.high is None else max(self.high, highest)
        return KeyBound(high, version)


def bound_column(key: tuple[str, ...] | None, types: dict[str, str]) -> str | None:
    """The key column a bound can be kept for (a single integral column), else None."""
    if not key or len(key) != 1:
        return None
    spark_type = types.get(key[0])
    if spark_type is None or INTEGRAL.fullmatch(spark_type) is None:
        return None
    return key[0]


def _fs_path(spark: SparkSession, location: str) -> tuple[Any, Any]:
    """The Hadoop file system and path of ``location`` (the driver's configuration)."""
    jvm: Any = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(location)
    return path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), path


def log_version(spark: SparkSession, table_path: str, after: int | None = None) -> int | None:
    """The table's newest commit version (None: no commit at all).

    ``after``: a version known to exist; the next commit files are checked one by one
    (one existence check when nothing new came), instead of listing the whole log.
    """
    log_dir = f"{table_path.rstrip('/')}/{LOG_DIR}"
    if after is not None:
        version = after
        while True:
            fs, path = _fs_path(spark, f"{log_dir}/{version + 1:020d}.json")
            if not fs.exists(path):
                return version
            version += 1
    fs, path = _fs_path(spark, log_dir)
    if not fs.exists(path):
        return None
    found = [
        int(match.group(1))
        for status in fs.listStatus(path)
        if (match := COMMIT_FILE.fullmatch(str(status.getPath().getName())))
    ]
    return max(found) if found else None


def read_bound(spark: SparkSession, table_path: str, table_ref: str, column: str) -> KeyBound:
    """Read the table's bound: its largest ``column`` value, at its newest version (the
    version first: a commit between the two makes the bound look stale, never wrong)."""
    version = log_version(spark, table_path)
    row = spark.sql(max_text_sql(table_ref, column)).first()
    text = row["high"] if row is not None else None
    return KeyBound(int(text) if text is not None else None, version if version is not None else -1)


__all__ = ["KEY_NUMBER_TYPE", "KeyBound", "bound_column", "log_version", "read_bound"]
