"""The JVM jars anycdc gives Spark: Kafka source/sink, Avro, Delta Lake.

``make setup`` copies them from Maven Central (``jvm/pom.xml``) into ``.build/jars/`` and then
runs ``python -m anycdc.spark.jars prune``, which deletes every jar whose *artifact* pyspark
already ships in ``pyspark/jars/`` (whatever the version: Spark's own copy wins, so there are
no two copies of a class on the classpath). What is left is handed to Spark as ``spark.jars``,
comma-joined local paths: nothing is resolved through Ivy (``--packages``) at run
time, so a pipeline starts with no network.

Command line::

    python -m anycdc.spark.jars list      # one path a line
    python -m anycdc.spark.jars comma     # comma-joined, for spark-submit --jars
    python -m anycdc.spark.jars prune     # drop jars pyspark ships (make setup does it)
    python -m anycdc.spark.jars check     # exit 1 when the jars are missing

Where the jars are: ``$ANYCDC_JARS_DIR`` if set, else ``<project root>/.build/jars``.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TextIO

# artifact-version[-classifier].jar; the version is the first "-<digits>.<digits>..." part
# counted from the left that leaves a well-formed artifact id, so that
# "spark-sql-kafka-0-10_2.13-4.0.1.jar" is ("spark-sql-kafka-0-10_2.13", "4.0.1").
_JAR_RE = re.compile(r"^(?P<artifact>.+?)-(?P<version>\d+(?:\.\d+)+[^/]*)\.jar$")

# jars whose presence tells that a jars dir is complete enough to run the pipeline
REQUIRED_ARTIFACTS = (
    "delta-spark_2.13",
    "delta-storage",
    "spark-sql-kafka-0-10_2.13",
    "spark-avro_2.13",
)


def artifact_of(jar_name: str) -> str:
    """``"kafka-clients-3.9.1.jar"`` -> ``"kafka-clients"``; a name without a version stays whole.

    >>> artifact_of("spark-sql-kafka-0-10_2.13-4.0.1.jar")
    'spark-sql-kafka-0-10_2.13'
    >>> artifact_of("zstd-jni-1.5.6-9.jar")
    'zstd-jni'
    >>> artifact_of("scala-library-2.13.16.jar")
    'scala-library'
    >>> artifact_of("py4j-0.10.9.9.jar")
    'py4j'
    """
    match = _JAR_RE.match(jar_name)
    if match:
        return match.group("artifact")
    return jar_name[:-4] if jar_name.endswith(".jar") else jar_name


def project_root() -> Path | None:
    """The anycdc checkout this module runs from (editable install), else one above the cwd."""
    env = os.environ.get("ANYCDC_PROJECT_ROOT")
    if env:
        return Path(env)
    candidates = [Path(__file__).resolve().parents[3], *Path.cwd().resolve().parents]
    candidates.insert(1, Path.cwd().resolve())
    for base in candidates:
        if (base / "pyproject.toml").is_file() and (base / "jvm" / "pom.xml").is_file():
            return base
    return None


def jars_dir() -> Path | None:
    """Where ``make setup`` put the Spark jars (``$ANYCDC_JARS_DIR`` overrides)."""
    env = os.environ.get("ANYCDC_JARS_DIR")
    if env:
        return Path(env)
    root = project_root()
    return root / ".build" / "jars" if root else None


def pyspark_jars_dir() -> Path | None:
    """The jars Spark itself runs with: ``$SPARK_HOME/jars`` if set, else pyspark's own."""
    spark_home = os.environ.get("SPARK_HOME")
    if spark_home and (Path(spark_home) / "jars").is_dir():
        return Path(spark_home) / "jars"
    try:
        import pyspark
    except ImportError:
        return None
    path = Path(pyspark.__file__).parent / "jars"
    return path if path.is_dir() else None


def shipped_artifacts(spark_jars: Path | None = None) -> set[str]:
    spark_jars = spark_jars if spark_jars is not None else pyspark_jars_dir()
    if spark_jars is None:
        return set()
    return {artifact_of(p.name) for p in spark_jars.glob("*.jar")}


def split_duplicates(jars: Iterable[Path], shipped: set[str]) -> tuple[list[Path], list[Path]]:
    """(jars to keep, jars whose artifact Spark already ships)."""
    keep: list[Path] = []
    drop: list[Path] = []
    for jar in sorted(jars):
        (drop if artifact_of(jar.name) in shipped else keep).append(jar)
    return keep, drop


def spark_jars(directory: Path | None = None) -> list[str]:
    """Absolute paths of the jars to pass as ``spark.jars`` ([] when setup has not run)."""
    directory = directory if directory is not None else jars_dir()
    if directory is None or not directory.is_dir():
        return []
    keep, _ = split_duplicates(directory.glob("*.jar"), shipped_artifacts())
    return [str(p.resolve()) for p in keep]


def missing_artifacts(paths: Sequence[str]) -> list[str]:
    have = {artifact_of(Path(p).name) for p in paths}
    return [a for a in REQUIRED_ARTIFACTS if a not in have]


def prune(directory: Path | None = None, *, out: TextIO | None = None) -> list[Path]:
    """Delete from *directory* the jars whose artifact pyspark already ships; return them."""
    stream = out if out is not None else sys.stdout
    directory = directory if directory is not None else jars_dir()
    if directory is None or not directory.is_dir():
        raise SystemExit(f"no jars directory ({directory}); run `make setup`")
    shipped_dir = pyspark_jars_dir()
    if shipped_dir is None:
        raise SystemExit("pyspark is not installed: cannot tell which jars Spark ships")
    keep, drop = split_duplicates(directory.glob("*.jar"), shipped_artifacts(shipped_dir))
    for jar in drop:
        twin = sorted(
            p.name
            for p in shipped_dir.glob("*.jar")
            if artifact_of(p.name) == artifact_of(jar.name)
        )
        print(f"    drop {jar.name} (Spark ships {', '.join(twin)})", file=stream)
        jar.unlink()
    print(f"    keep {len(keep)} jars: {', '.join(p.name for p in keep)}", file=stream)
    missing = missing_artifacts([str(p) for p in keep])
    if missing:
        raise SystemExit(f"required jars missing from {directory}: {', '.join(missing)}")
    return drop


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    verb = args[0] if args else "list"
    if verb == "prune":
        prune()
        return 0
    paths = spark_jars()
    if verb == "list":
        print("\n".join(paths))
        return 0 if paths else 1
    if verb == "comma":
        print(",".join(paths))
        return 0 if paths else 1
    if verb == "check":
        missing = missing_artifacts(paths)
        if missing:
            print(
                f"missing Spark jars: {', '.join(missing)} (in {jars_dir()}); run `make setup`",
                file=sys.stderr,
            )
            return 1
        print(f"{len(paths)} jars in {jars_dir()}: ok")
        return 0
    print(
        f"usage: python -m anycdc.spark.jars [list|comma|prune|check], not {verb!r}",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
