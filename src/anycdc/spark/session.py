"""One way to get a SparkSession configured for anycdc (Delta Lake, Kafka, Avro).

>>> from anycdc.spark.session import get_spark
>>> spark = get_spark("my-job")                      # doctest: +SKIP

Two situations, told apart automatically:

* **Plain ``python`` (local development, tests, the demo, ``anycdc run``).** No JVM is running
  yet, so this function starts one: master ``local[*]`` (or ``master=`` /
  ``$ANYCDC_SPARK_MASTER``), the Delta SQL extension and catalog, and the jars
  (:mod:`anycdc.spark.jars`): ``spark.jars`` = a prepared folder (``make setup``'s
  ``.build/jars``, ``$ANYCDC_JARS_DIR``, or the user cache ``python -m anycdc.spark.jars
  fetch`` fills) - local paths, no network; with no folder (an installed wheel) the exact Maven
  coordinates as ``spark.jars.packages``, which Spark resolves on first use and caches.
* **Under ``spark-submit`` / ``pyspark`` shell / a notebook with a session.** The JVM was
  started by someone else with their ``--master``, ``--jars`` / ``--packages`` and ``--conf``.
  Nothing they set is overridden: ``spark.jars``, ``--packages`` and the master are left
  alone, and the Delta extension and catalog are only added when they are absent.

Both kinds of session keep Spark's SQL time zone at UTC (``spark.sql.session.timeZone``), and a
JVM this function starts runs in UTC as well (``-Duser.timezone=UTC`` in the driver's and the
executors' ``extraJavaOptions``, added to what the caller set; a ``-Duser.timezone`` of the
caller's own wins): Delta re-reads a table's whole state after each commit, as a check, when the
JVM's zone is not UTC (``allFilesInCrc.verificationMode.forceOnNonUTC``) - one more Spark job
per MERGE, measured +20% per MERGE with ``TZ=Asia/Shanghai``. Under spark-submit the executors
get the option too; the driver JVM is already running, so a warning says how to start it in UTC.

``for_tests=True`` is for the test suite: UI off, 4 shuffle partitions, a 1 GiB driver heap,
warehouse in a temp dir, C1-only JIT and serial GC, whole-stage codegen off (set
``ANYCDC_SPARK_TEST_CODEGEN=1`` to keep it on): short tests on a small machine run ~2-3x faster.

Environment:

``ANYCDC_SPARK_MASTER``        master when ``master=`` is not given (default ``local[*]``)
``ANYCDC_SPARK_DRIVER_MEMORY`` driver heap for a local JVM (default 4g, tests 1g)
``ANYCDC_JARS_DIR``            where the jars are (default ``<checkout>/.build/jars``, else the
                             user cache of ``python -m anycdc.spark.jars fetch``, else Maven)
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from anycdc.spark import jars as _jars

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"

DEFAULT_MASTER = "local[*]"
TEST_DELTA_LOG_CACHE = 64  # Delta logs a test session keeps (see base_conf)
LOCAL_LOG_STORE: Final = "spark.delta.logStore.file.impl"
CHECKPOINT_FILE_MANAGER: Final = "spark.sql.streaming.checkpointFileManagerClass"
FILES_IN_CHECKSUM: Final = "spark.databricks.delta.allFilesInCrc.enabled"
DELTA_SETTINGS: Final = {
    "spark.databricks.delta.snapshotPartitions": "1",
    FILES_IN_CHECKSUM: "false",
    LOCAL_LOG_STORE: "io.delta.storage.LocalLogStore",
    "spark.sql.variable.substitute": "false",
}
"""On every master (a user's ``--conf`` wins):

- ``snapshotPartitions``: Delta rebuilds a table's state (its first apply in a run, a
  checkpoint) with 50 tasks by default, sized for tables of millions of files; a CDC
  target's tables are mostly small, and one task is 10-20% cheaper than two per rebuild
  (merge probe, #26);
- ``allFilesInCrc.enabled``: Delta lists a small table's files in each commit's checksum,
  derived from the previous version's list; a new table has none, so its first commit
  plans and runs a Spark query over the empty state to get it (13% of the driver's
  samples in an apply creating 200 tables; that apply took 40-42 s instead of 45-48 s).
  Nothing reads the list but Delta's own check of it; the checksum's counts and writer
  versions (what anycdc reads) stay;
- the log store of ``file:`` tables (only that scheme): Delta's default for it writes each
  commit through Hadoop's ``FileContext``, whose rename asks the local file system for the
  link status of both names and their checksum files, and without Hadoop's native library
  every such question forks a ``readlink`` process (~10 ms each): 16 forks, ~0.1 s, per
  commit. ``LocalLogStore`` writes the same temporary file and renames it through
  ``FileSystem``, which asks the JVM. Both refuse a commit whose file exists by checking
  before the rename (a local rename replaces its target), so the guarantee is the same;
  ``LocalLogStore`` also serialises the check within the JVM. Read once, when the
  SparkContext starts;
- ``variable.substitute`` off: Spark replaces ``${name}`` in every SQL text and expression
  before parsing it, and anycdc's quote names from messages (a column ``cost${usd}``
  became ``cost``). String literals are safe in any session
  (:func:`~anycdc.spark.merge_sql.lit`); a quoted column name only where this is off."""
LOCAL_MASTER_SETTINGS: Final = {
    CHECKPOINT_FILE_MANAGER: (
        "org.apache.spark.sql.execution.streaming.checkpointing."
        "FileSystemBasedCheckpointFileManager"
    ),
}
"""On a local master, whose tables and checkpoints are on the local disk: Spark's
checkpoint files and Delta's table checksums (``.crc``, one per commit) are written by
Spark's checkpoint file manager, by default through ``FileContext`` and its forked
``readlink`` calls too (see :data:`DELTA_SETTINGS`); the ``FileSystem`` one writes the same
temporary file and renames it. Not on a cluster, where another file system's own rename
may be what makes a checkpoint atomic."""
DEFAULT_DRIVER_MEMORY = "4g"  # a 24 GiB machine shares it with Kafka and the OS
TEST_DRIVER_MEMORY = "1g"
CODEGEN_CACHE_ENTRIES = 4096  # compiled query classes kept (Spark: 100); see base_conf
DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
EXECUTOR_JAVA_OPTIONS = "spark.executor.extraJavaOptions"
UTC_JAVA_OPTION = "-Duser.timezone=UTC"

# settings only a fresh JVM / SparkContext takes (ignored on an existing session)
_STATIC_PREFIXES = (
    "spark.driver.",
    "spark.executor.",
    "spark.jars",
    "spark.master",
    "spark.ui.",
    "spark.sql.extensions",
    "spark.sql.catalog.spark_catalog",
    "spark.sql.warehouse.dir",
    "spark.local.dir",
)


def _jvm_already_running() -> bool:
    """True under spark-submit / the pyspark shell, or when this process has a SparkContext."""
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        return True  # spark-submit started the JVM and handed us its gateway
    from pyspark import SparkContext

    return SparkContext._active_spark_context is not None


def base_conf(*, for_tests: bool = False, local: bool = True) -> dict[str, str]:
    """The settings anycdc wants on a session it creates itself (before the caller's)."""
    conf: dict[str, str] = {
        "spark.sql.extensions": DELTA_EXTENSION,
        "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
        # CDC timestamps are instants: keep Spark's session zone fixed, not the machine's
        "spark.sql.session.timeZone": "UTC",
        # anycdc reports per micro-batch (log line, progress bar); Spark's stage bars would
        # tear those apart and fill log files with carriage-return lines
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4"
        if for_tests
        else str(max(4, 2 * (os.cpu_count() or 2))),
        # Spark keeps 100 compiled query classes; each table's MERGE needs ~10 of its own
        # (one set per table shape), so with a few dozen tables every batch compiled them
        # all again (Janino, then the JIT: ~15 s of CPU per 24 MERGEs, measured)
        "spark.sql.codegen.cache.maxEntries": str(CODEGEN_CACHE_ENTRIES),
    }
    conf.update(DELTA_SETTINGS)
    if local:
        conf.update(LOCAL_MASTER_SETTINGS)
        memory = os.environ.get("ANYCDC_SPARK_DRIVER_MEMORY") or (
            TEST_DRIVER_MEMORY if for_tests else DEFAULT_DRIVER_MEMORY
        )
        conf["spark.driver.memory"] = memory
        conf["spark.driver.host"] = "127.0.0.1"
        conf["spark.driver.bindAddress"] = "127.0.0.1"
    if for_tests:
        tmp = tempfile.mkdtemp(prefix="anycdc-spark-")
        conf.update(
            {
                "spark.ui.enabled": "false",
                "spark.sql.warehouse.dir": os.path.join(tmp, "warehouse"),
                "spark.default.parallelism": "2",
                # (snapshotPartitions stays DELTA_SETTINGS' 1, as in production: the tests'
                # old 2 made each of their thousands of state rebuilds 10-20% dearer)
                "spark.sql.sources.parallelPartitionDiscovery.parallelism": "2",
                # Delta keeps every table's log and state it touched for an hour; a test
                # session touches hundreds of throwaway tables, and on Delta 4.4 / Spark 4.2
                # their cached state filled the 1 GiB heap: 629 full GCs, 696 s of a 41-min
                # suite (jstat). Delta's own tests keep 3; a test here uses at most a few dozen
                "spark.databricks.delta.delta.log.cacheSize": str(TEST_DELTA_LOG_CACHE),
                # tests write and read back within milliseconds: no retention checks
                "spark.databricks.delta.retentionDurationCheck.enabled": "false",
                "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
                # C1 JIT only + serial GC: on a small shared machine a test JVM spends most of
                # its CPU compiling; measured ~2x faster for short Delta/Kafka tests. C1-only
                # gets a 48 MB code cache by default, which a long test session fills (then the
                # JVM stops compiling and runs interpreted): reserve more.
                "spark.driver.extraJavaOptions": (
                    "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m -XX:+UseSerialGC "
                    f"-Ddelta.log.cacheSize={TEST_DELTA_LOG_CACHE} -Dderby.system.home={tmp}"
                ),
            }
        )
        if os.environ.get("ANYCDC_SPARK_TEST_CODEGEN", "0") != "1":
            # tiny test data: compiling whole-stage code costs more than it saves (~1.5x);
            # ANYCDC_SPARK_TEST_CODEGEN=1 runs the tests with Spark's production code path
            conf["spark.sql.codegen.wholeStage"] = "false"
    return conf


LOG_CONFIG: Final = Path(__file__).with_name("log4j2.properties")
"""The log configuration of a local Spark JVM anycdc starts (Spark's defaults at WARN,
without the warnings no user can act on: see the file)."""
LOG_CONFIG_OPTIONS: Final = ("-Dlog4j2.configurationFile=", "-Dlog4j.configurationFile=")


def with_quiet_log(options: str, conf_dir: str | None = None) -> str:
    """Driver JVM ``options`` that name :data:`LOG_CONFIG`, unless they name a log
    configuration already or ``conf_dir`` (default ``$SPARK_CONF_DIR``, else
    ``$SPARK_HOME/conf``) holds one: a user's own configuration stands.

    >>> with_quiet_log("-Duser.timezone=UTC").split()[-1] == f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}"
    True
    >>> with_quiet_log("-Dlog4j2.configurationFile=mine.properties")
    '-Dlog4j2.configurationFile=mine.properties'
    """
    if conf_dir is None:
        home = os.environ.get("SPARK_HOME")
        conf_dir = os.environ.get("SPARK_CONF_DIR") or (f"{home}/conf" if home else None)
    parts = options.split()
    if any(p.startswith(LOG_CONFIG_OPTIONS) for p in parts) or not LOG_CONFIG.is_file():
        return options
    if conf_dir and (Path(conf_dir) / "log4j2.properties").is_file():
        return options
    return " ".join([*parts, f"{LOG_CONFIG_OPTIONS[0]}{LOG_CONFIG.as_uri()}"])


def with_utc_zone(options: str | None) -> str:
    """JVM options that start the JVM in UTC: ``options`` plus ``-Duser.timezone=UTC``, unless
    they already name a zone (the caller's choice stands).

    >>> with_utc_zone(None)
    '-Duser.timezone=UTC'
    >>> with_utc_zone("-XX:+UseSerialGC")
    '-XX:+UseSerialGC -Duser.timezone=UTC'
    >>> with_utc_zone("-Xss4m -Duser.timezone=Asia/Shanghai")
    '-Xss4m -Duser.timezone=Asia/Shanghai'
    """
    parts = (options or "").split()
    if any(part.startswith("-Duser.timezone=") for part in parts):
        return " ".join(parts)
    return " ".join([*parts, UTC_JAVA_OPTION])


def jvm_time_zone(jvm: Any) -> str:
    """The default time zone of a JVM (py4j's ``JVMView``: ``spark.sparkContext._jvm``)."""
    return str(jvm.java.util.TimeZone.getDefault().getID())


def _warn_unless_utc(jvm: Any) -> None:
    zone = jvm_time_zone(jvm)
    if "utc" not in zone.lower():
        log.warning(
            "the Spark driver JVM runs in time zone %s: Delta then re-reads each table's state "
            "after every commit (one more job per MERGE); start it in UTC with "
            "--conf spark.driver.extraJavaOptions=%s",
            zone,
            UTC_JAVA_OPTION,
        )


def _merge_extensions(existing: str | None) -> str:
    parts = [p.strip() for p in (existing or "").split(",") if p.strip()]
    if DELTA_EXTENSION not in parts:
        parts.append(DELTA_EXTENSION)
    return ",".join(parts)


def get_spark(
    app_name: str = "anycdc",
    master: str | None = None,
    conf: Mapping[str, Any] | None = None,
    for_tests: bool = False,
) -> SparkSession:
    """Return the active SparkSession, or create one set up for anycdc.

    Parameters
    ----------
    app_name:
        ``spark.app.name`` of a new session.
    master:
        e.g. ``"local[2]"``, ``"spark://host:7077"``; default ``$ANYCDC_SPARK_MASTER`` or
        ``local[*]``. Ignored (with a warning) when a JVM is already running.
    conf:
        extra Spark settings, applied last (they win over anycdc's defaults).
    for_tests:
        test-suite settings (UI off, few partitions, small heap, temp warehouse).
    """
    from pyspark.sql import SparkSession

    user_conf = {k: str(v) for k, v in (conf or {}).items()}

    if _jvm_already_running():
        return _attach(app_name, master, user_conf)

    master = master or os.environ.get("ANYCDC_SPARK_MASTER") or DEFAULT_MASTER
    local = master.startswith("local")
    if local:
        # the driver binds to loopback: no "hostname resolves to a loopback address" warning,
        # no dependence on how this machine's hostname resolves
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    settings = base_conf(for_tests=for_tests, local=local)
    # the caller's own jar settings (spark.jars, or Maven coordinates) win over ours
    submit_args = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    user_supplies_jars = bool({"spark.jars", "spark.jars.packages"} & set(user_conf)) or (
        "--jars" in submit_args or "--packages" in submit_args
    )
    if not user_supplies_jars:
        settings.update(_jar_settings())
    if "spark.sql.extensions" in user_conf:
        user_conf["spark.sql.extensions"] = _merge_extensions(user_conf["spark.sql.extensions"])
    settings.update(user_conf)
    # the JVMs in UTC (see the module's docstring): before the driver JVM starts
    for key in (DRIVER_JAVA_OPTIONS, EXECUTOR_JAVA_OPTIONS):
        settings[key] = with_utc_zone(settings.get(key))
    if local:
        settings[DRIVER_JAVA_OPTIONS] = with_quiet_log(settings[DRIVER_JAVA_OPTIONS])

    if master.startswith("local"):
        # Python workers must be this interpreter (the venv that has anycdc), not PATH's python3
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name).master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if for_tests:
        spark.sparkContext.setLogLevel("WARN")
    return spark


def _jar_settings() -> dict[str, str]:
    """``spark.jars`` from the prepared folder, or (none there) the Maven coordinates for
    Spark to resolve itself (:mod:`anycdc.spark.jars`)."""
    directory = _jars.jars_dir()
    if directory is None:
        log.info(
            "no Spark jars folder: Spark resolves %s from Maven (cached in its Ivy cache); "
            "`python -m anycdc.spark.jars fetch` keeps a folder instead",
            ", ".join(_jars.MAVEN_PACKAGES),
        )
        return _jars.maven_conf()
    paths = _jars.spark_jars(directory)
    missing = _jars.missing_artifacts(paths)
    if missing:
        log.warning(
            "Spark jars missing (%s) in %s: run `make setup` (a checkout) or "
            "`python -m anycdc.spark.jars fetch`; Delta/Kafka will not load",
            ", ".join(missing),
            directory,
        )
    return {"spark.jars": ",".join(paths)} if paths else {}


def _attach(app_name: str, master: str | None, user_conf: dict[str, str]) -> SparkSession:
    """A JVM exists (spark-submit, shell, earlier session): use it without overriding it."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is None and SparkSession._instantiatedSession is not None:
        active = SparkSession._instantiatedSession
    if master:
        log.warning("a Spark JVM is already running: master=%r is ignored", master)
    if active is not None:
        # only runtime (SQL) settings can still change
        for key, value in user_conf.items():
            if key.startswith(_STATIC_PREFIXES):
                log.warning("Spark session exists: static setting %s is ignored", key)
            else:
                active.conf.set(key, value)
        _warn_unless_utc(active.sparkContext._jvm)
        return active

    # spark-submit: SparkConf() loads what spark-submit was given (--conf, --jars, --packages)
    SparkContext._ensure_initialized()  # connects to spark-submit's gateway, starts nothing
    submitted = SparkConf()
    builder = SparkSession.builder.appName(submitted.get("spark.app.name", app_name))
    existing_ext = submitted.get("spark.sql.extensions", None)
    builder = builder.config("spark.sql.extensions", _merge_extensions(existing_ext))
    if not submitted.contains("spark.sql.catalog.spark_catalog"):
        builder = builder.config("spark.sql.catalog.spark_catalog", DELTA_CATALOG)
    if not submitted.contains("spark.sql.session.timeZone"):
        builder = builder.config("spark.sql.session.timeZone", "UTC")
    for key, value in DELTA_SETTINGS.items():
        if not submitted.contains(key):  # spark-submit's --conf wins
            builder = builder.config(key, value)
    for key, value in user_conf.items():
        builder = builder.config(key, value)
    # executors start with the SparkContext, still to come: in UTC too, added to spark-submit's
    # own executor options; the driver JVM runs already
    executor_options = user_conf.get(EXECUTOR_JAVA_OPTIONS) or submitted.get(
        EXECUTOR_JAVA_OPTIONS, None
    )
    builder = builder.config(EXECUTOR_JAVA_OPTIONS, with_utc_zone(executor_options))
    _warn_unless_utc(SparkContext._jvm)
    return builder.getOrCreate()


def delta_available(spark: SparkSession) -> bool:
    """True when the Delta classes are loadable in this session's JVM."""
    try:
        jvm: Any = spark.sparkContext._jvm
        loader = jvm.Thread.currentThread().getContextClassLoader()
        jvm.Class.forName("io.delta.tables.DeltaTable", True, loader)
    except Exception:  # py4j errors come in several types
        return False
    return True


def activate_in_thread(spark: SparkSession) -> None:
    """Make ``spark`` the active session of the calling Python thread's JVM thread.

    Delta reads some settings from ``SparkSession.active``, not from the session of the
    table or frame at hand: its post-commit hooks (auto compaction's
    ``spark.databricks.delta.autoCompact.enabled``) among them. A Python thread of a pool
    gets a JVM thread of its own, whose active session is the JVM's default one, not the
    streaming micro-batch's session the pipeline's settings are on; so an apply on a worker
    thread calls this first.
    """
    jvm: Any = spark.sparkContext._jvm
    jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)
