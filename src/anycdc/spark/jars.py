"""The JVM jars anycdc gives Spark: Kafka source/sink, Avro, Delta Lake.

Three ways to get them, tried in this order by :func:`anycdc.spark.session.get_spark`:

1. **A prepared folder** (offline; clusters without network): ``$ANYCDC_JARS_DIR``, else the
   checkout's ``.build/jars`` (``make setup`` copies them from Maven Central with
   ``jvm/pom.xml``), else the user cache that ``python -m anycdc.spark.jars fetch`` fills
   (``~/.cache/anycdc/spark-jars/<versions>``). Given to Spark as ``spark.jars``, local paths.
2. **Maven coordinates** (an installed wheel, nothing prepared): ``spark.jars.packages`` =
   :data:`MAVEN_PACKAGES`, the exact versions this anycdc is pinned to, and
   ``spark.jars.excludes`` = :data:`MAVEN_EXCLUDES`, what Spark already ships. Spark resolves
   them itself on first use and keeps them in its Ivy cache (``~/.ivy2.5.2``), as delta-spark's
   ``configure_spark_with_delta_pip`` does.

In a folder, every jar whose *artifact* pyspark already ships in ``pyspark/jars/`` is left out
(whatever the version: Spark's own copy wins, so there are no two copies of a class on the
classpath); ``make setup`` deletes them (``prune``).

Command line::

    python -m anycdc.spark.jars list      # one path a line
    python -m anycdc.spark.jars comma     # comma-joined, for spark-submit --jars
    python -m anycdc.spark.jars prune     # drop jars pyspark ships (make setup does it)
    python -m anycdc.spark.jars check     # exit 1 when the jars are missing
    python -m anycdc.spark.jars fetch [DIR]   # resolve the Maven coordinates into DIR
                                              # (default: the user cache), for offline use
    python -m anycdc.spark.jars packages  # the --packages / --exclude-packages values
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TextIO
from urllib.parse import unquote, urlparse

from anycdc.checkout import project_root
from anycdc.errors import OptionError
from anycdc.scratch import check_scratch, mark

# artifact-version[-classifier].jar; the version is the first "-<digits>.<digits>..." part
# counted from the left that leaves a well-formed artifact id, so that
# "spark-sql-kafka-0-10_2.13-4.0.1.jar" is ("spark-sql-kafka-0-10_2.13", "4.0.1").
_JAR_RE = re.compile(r"^(?P<artifact>.+?)-(?P<version>\d+(?:\.\d+)+[^/]*)\.jar$")

# The Spark line and the versions anycdc is pinned to (pyproject.toml's `spark` extra and
# jvm/pom.xml say the same; tests/infra/test_session.py checks that they agree).
SPARK_VERSION = "4.2.0"
DELTA_VERSION = "4.4.0"
SCALA_BINARY = "2.13"
SPARK_JACKSON_VERSION = "2.21.2"  # the jackson-databind in pyspark/jars
DELTA_ARTIFACT = f"delta-spark_{SPARK_VERSION.rsplit('.', 1)[0]}_{SCALA_BINARY}"

# What spark.jars.packages asks for: the rest comes with them (delta-storage, the Kafka
# token provider and kafka-clients, Delta's kernel modules); jackson-datatype-jdk8 at Spark's
# jackson version, as jvm/pom.xml pins it (Delta's kernel asks for 2.13.5).
MAVEN_PACKAGES = (
    f"io.delta:{DELTA_ARTIFACT}:{DELTA_VERSION}",
    f"org.apache.spark:spark-sql-kafka-0-10_{SCALA_BINARY}:{SPARK_VERSION}",
    f"org.apache.spark:spark-avro_{SCALA_BINARY}:{SPARK_VERSION}",
    f"com.fasterxml.jackson.datatype:jackson-datatype-jdk8:{SPARK_JACKSON_VERSION}",
)
# What those bring that Spark already ships (any version: Spark's copy wins) or that nothing
# needs: not resolved, not downloaded (spark.jars.excludes). The same jars `make setup` prunes.
MAVEN_EXCLUDES = (
    "org.apache.hadoop:hadoop-client-api",
    "org.apache.hadoop:hadoop-client-runtime",
    "org.scala-lang:scala-library",
    f"org.scala-lang.modules:scala-parallel-collections_{SCALA_BINARY}",
    "at.yawk.lz4:lz4-java",
    "org.xerial.snappy:snappy-java",
    "com.github.luben:zstd-jni",
    "io.airlift:aircompressor",
    "org.tukaani:xz",
    "org.slf4j:slf4j-api",
    "org.apache.logging.log4j:log4j-api",
    "org.apache.logging.log4j:log4j-core",
    "org.apache.logging.log4j:log4j-slf4j2-impl",
    "com.google.code.findbugs:jsr305",
    "commons-pool:commons-pool",
    "org.roaringbitmap:RoaringBitmap",
    "org.roaringbitmap:shims",
    "com.fasterxml.jackson.core:jackson-annotations",
    "com.fasterxml.jackson.core:jackson-core",
    "com.fasterxml.jackson.core:jackson-databind",
    "org.apache.parquet:parquet-column",
    "org.apache.parquet:parquet-common",
    "org.apache.parquet:parquet-encoding",
    "org.apache.parquet:parquet-format-structures",
    "org.apache.parquet:parquet-hadoop",
    "org.apache.parquet:parquet-jackson",
    "org.locationtech.jts:jts-core",
    "javax.annotation:javax.annotation-api",
)

# jars whose presence tells that a jars dir is complete enough to run the pipeline
REQUIRED_ARTIFACTS = (
    DELTA_ARTIFACT,
    "delta-storage",
    f"spark-sql-kafka-0-10_{SCALA_BINARY}",
    f"spark-avro_{SCALA_BINARY}",
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


def user_cache_dir() -> Path:
    """Where ``fetch`` puts the jars by default: one folder per Spark and Delta version
    (``$XDG_CACHE_HOME``, else ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "anycdc" / "spark-jars" / f"spark-{SPARK_VERSION}-delta-{DELTA_VERSION}"


def jars_dir() -> Path | None:
    """The prepared jars folder: ``$ANYCDC_JARS_DIR``, else the checkout's ``.build/jars``
    (``make setup``), else the user cache if ``fetch`` filled it; None when there is none
    (then Spark resolves :data:`MAVEN_PACKAGES` itself)."""
    env = os.environ.get("ANYCDC_JARS_DIR")
    if env:
        return Path(env)
    root = project_root()
    if root is not None:
        return root / ".build" / "jars"
    cache = user_cache_dir()
    return cache if cache.is_dir() else None


def maven_conf() -> dict[str, str]:
    """The Spark settings that make Spark resolve the jars from Maven itself.

    >>> conf = maven_conf()
    >>> conf["spark.jars.packages"].split(",")[0]
    'io.delta:delta-spark_4.2_2.13:4.4.0'
    >>> "org.apache.hadoop:hadoop-client-runtime" in conf["spark.jars.excludes"]
    True
    """
    return {
        "spark.jars.packages": ",".join(MAVEN_PACKAGES),
        "spark.jars.excludes": ",".join(MAVEN_EXCLUDES),
    }


def ivy_file_name(path: str) -> str:
    """A jar as Spark's Ivy names it (``group_artifact-version.jar``) -> ``artifact-version.jar``.

    >>> ivy_file_name("file:///home/u/.ivy2.5.2/jars/io.delta_delta-spark_4.2_2.13-4.4.0.jar")
    'delta-spark_4.2_2.13-4.4.0.jar'
    >>> ivy_file_name("/x/org.apache.spark_spark-avro_2.13-4.2.0.jar")
    'spark-avro_2.13-4.2.0.jar'
    >>> ivy_file_name("/x/commons-pool2-2.13.1.jar")
    'commons-pool2-2.13.1.jar'
    """
    name = Path(unquote(urlparse(path).path) if "://" in path else path).name
    group, sep, rest = name.partition("_")
    return rest if sep and "." in group else name  # artifact ids have no dot before a "_"


def fetch(directory: Path | None = None, *, out: TextIO | None = None) -> list[Path]:
    """Let Spark resolve :data:`MAVEN_PACKAGES` (its Ivy, its cache, its settings such as
    ``spark.jars.ivySettings`` from ``$SPARK_CONF_DIR``) and copy the jars into *directory*
    (default :func:`user_cache_dir`) under their Maven names: a folder for ``$ANYCDC_JARS_DIR``
    or ``spark-submit --jars`` on machines without network. Returns the copied jars."""
    from pyspark import SparkConf
    from pyspark.java_gateway import launch_gateway

    stream = out if out is not None else sys.stdout
    target = directory if directory is not None else user_cache_dir()
    # a folder the user names may hold their own files: replaced only if a fetch made it
    # (or it is empty); the user cache is anycdc's own, its jars an older fetch's
    check_scratch(target, "jars fetch", ("*.jar",) if directory is None else ())
    conf = SparkConf(loadDefaults=False)
    for key, value in maven_conf().items():
        conf.set(key, value)
    print(f"    resolving {', '.join(MAVEN_PACKAGES)}", file=stream)
    gateway = launch_gateway(conf)  # type: ignore[no-untyped-call]
    try:
        resolved = str(gateway.jvm.System.getProperty("spark.jars") or "")
    finally:
        gateway.shutdown()
        proc = getattr(gateway, "proc", None)
        if proc is not None:
            proc.stdin.close()
            proc.wait(timeout=60)
    sources = [p for p in resolved.split(",") if p]
    missing = missing_artifacts([ivy_file_name(p) for p in sources])
    if missing:
        raise SystemExit(f"Spark did not resolve {', '.join(missing)} (got: {resolved!r})")
    staging = Path(tempfile.mkdtemp(prefix=".fetch-", dir=_parent_made(target)))
    copied = []
    for source in sources:
        local = Path(unquote(urlparse(source).path)) if "://" in source else Path(source)
        copied.append(Path(shutil.copy2(local, staging / ivy_file_name(source))))
    mark(staging)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)  # whole or not at all: a half-filled folder is never found
    paths = sorted(target / p.name for p in copied)
    print(f"    {len(paths)} jars in {target}", file=stream)
    return paths


def _parent_made(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    return target.parent


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
    if verb == "fetch":
        try:
            fetch(Path(args[1]) if len(args) > 1 else None)
        except OptionError as exc:  # a folder that is not ours: one line, nothing fetched
            print(f"anycdc: {exc}", file=sys.stderr)
            return 2
        return 0
    if verb == "packages":
        conf = maven_conf()
        print(f"--packages {conf['spark.jars.packages']}")
        print(f"--exclude-packages {conf['spark.jars.excludes']}")
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
                f"missing Spark jars: {', '.join(missing)} (in {jars_dir()}); run `make setup` "
                "(a checkout) or `python -m anycdc.spark.jars fetch`",
                file=sys.stderr,
            )
            return 1
        print(f"{len(paths)} jars in {jars_dir()}: ok")
        return 0
    print(
        "usage: python -m anycdc.spark.jars [list|comma|prune|check|fetch [DIR]|packages], "
        f"not {verb!r}",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
