"""The Spark session factory and the offline jars."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from anycdc.spark import jars, session
from anycdc.spark.session import (
    CHECKPOINT_FILE_MANAGER,
    DELTA_CATALOG,
    DELTA_EXTENSION,
    LOCAL_LOG_STORE,
    _merge_extensions,
    base_conf,
)

# ---------------------------------------------------------------- pure


@pytest.mark.parametrize(
    ("name", "artifact"),
    [
        ("spark-sql-kafka-0-10_2.13-4.0.1.jar", "spark-sql-kafka-0-10_2.13"),
        ("spark-token-provider-kafka-0-10_2.13-4.0.0.jar", "spark-token-provider-kafka-0-10_2.13"),
        ("delta-spark_2.13-4.0.1.jar", "delta-spark_2.13"),
        ("zstd-jni-1.5.6-10.jar", "zstd-jni"),
        ("kafka-clients-3.9.1.jar", "kafka-clients"),
        ("scala-library-2.13.16.jar", "scala-library"),
        ("slf4j-api-2.0.16.jar", "slf4j-api"),
        ("py4j-0.10.9.9.jar", "py4j"),
        ("xz-1.10.jar", "xz"),
        ("noversion.jar", "noversion"),
    ],
)
def test_artifact_of(name: str, artifact: str) -> None:
    assert jars.artifact_of(name) == artifact


def test_split_duplicates_drops_any_version_of_a_shipped_artifact() -> None:
    ours = [Path("kafka-clients-3.9.1.jar"), Path("slf4j-api-1.7.36.jar"), Path("xz-1.10.jar")]
    keep, drop = jars.split_duplicates(ours, {"slf4j-api", "xz", "spark-core_2.13"})
    assert keep == [Path("kafka-clients-3.9.1.jar")]
    assert drop == [Path("slf4j-api-1.7.36.jar"), Path("xz-1.10.jar")]


def test_base_conf_for_tests() -> None:
    conf = base_conf(for_tests=True)
    assert conf["spark.sql.extensions"] == DELTA_EXTENSION
    assert conf["spark.sql.catalog.spark_catalog"] == DELTA_CATALOG
    assert conf["spark.ui.enabled"] == "false"
    assert conf["spark.sql.shuffle.partitions"] == "4"
    assert "spark.jars.packages" not in conf


def test_base_conf_leaves_progress_to_anycdc() -> None:
    # stage bars would tear the batch log lines and the progress bar apart
    assert base_conf()["spark.ui.showConsoleProgress"] == "false"


def test_merge_extensions_keeps_the_users() -> None:
    assert _merge_extensions(None) == DELTA_EXTENSION
    assert _merge_extensions("a.B") == f"a.B,{DELTA_EXTENSION}"
    assert _merge_extensions(f"{DELTA_EXTENSION}, a.B") == f"{DELTA_EXTENSION},a.B"


# ---------------------------------------------------------------- with Spark


@pytest.mark.spark
def test_session_has_delta_and_offline_jars(spark: Any) -> None:
    conf = spark.sparkContext.getConf()
    assert DELTA_EXTENSION in spark.conf.get("spark.sql.extensions")
    assert spark.conf.get("spark.sql.catalog.spark_catalog") == DELTA_CATALOG
    assert conf.get("spark.jars.packages", None) is None  # no Ivy resolution, no network

    paths = conf.get("spark.jars").split(",")
    assert all(Path(p).is_absolute() and Path(p).is_file() for p in paths)
    assert jars.missing_artifacts(paths) == []
    shipped = jars.shipped_artifacts()
    assert not [p for p in paths if jars.artifact_of(Path(p).name) in shipped]

    jvm = spark.sparkContext._jvm
    loader = jvm.Thread.currentThread().getContextClassLoader()
    for cls in (
        "io.delta.tables.DeltaTable",
        "org.apache.spark.sql.kafka010.KafkaSourceProvider",
        "org.apache.spark.sql.avro.AvroFileFormat",
        "org.apache.kafka.clients.consumer.KafkaConsumer",
    ):
        jvm.Class.forName(cls, True, loader)
    assert (
        jvm.System.getProperty("java.specification.version") == "17"
        or int(jvm.System.getProperty("java.specification.version")) >= 17
    )


@pytest.mark.spark
def test_get_spark_reuses_the_active_session(spark: Any) -> None:
    from anycdc.spark.session import get_spark

    again = get_spark("other-name", conf={"spark.sql.shuffle.partitions": "3"})
    try:
        assert again is spark or again._jsparkSession.equals(spark._jsparkSession)
        assert spark.conf.get("spark.sql.shuffle.partitions") == "3"
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", "4")


@pytest.mark.spark
def test_avro_roundtrip_uses_spark_avro(spark: Any) -> None:
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro, to_avro

    df = spark.range(3).select(F.struct("id").alias("s"))
    schema = '{"type":"record","name":"r","fields":[{"name":"id","type":"long"}]}'
    back = df.select(from_avro(to_avro("s"), schema).alias("r")).select("r.id")
    assert sorted(r[0] for r in back.collect()) == [0, 1, 2]


def test_delta_rebuilds_a_state_with_one_task_on_every_master() -> None:
    """Delta's 50 tasks per state rebuild are for tables of millions of files (#26): anycdc
    sets one, local or not, and a session's own setting wins (base_conf comes first)."""
    for local in (True, False):
        assert base_conf(local=local)["spark.databricks.delta.snapshotPartitions"] == "1"


def test_local_tables_are_committed_without_forking_the_file_system_shell() -> None:
    """#26: Delta's default log store for ``file:`` forks ``readlink`` processes per commit;
    anycdc names ``LocalLogStore`` for that scheme on every master, and Spark's
    ``FileSystem`` checkpoint manager (Delta's ``.crc`` files) on a local master only."""
    for local in (True, False):
        conf = base_conf(local=local)
        assert conf[LOCAL_LOG_STORE] == "io.delta.storage.LocalLogStore"
        assert (CHECKPOINT_FILE_MANAGER in conf) is local
    assert base_conf(local=True)[CHECKPOINT_FILE_MANAGER].endswith(
        ".FileSystemBasedCheckpointFileManager"
    )


@pytest.mark.spark
def test_the_session_commits_local_tables_through_the_local_log_store(
    spark: Any, tmp_path: Path
) -> None:
    """What Delta resolves in the running session (the log store is read from the SparkConf
    once), and that a table committed through it reads back."""
    jvm = spark.sparkContext._jvm
    hadoop_conf = spark._jsparkSession.sessionState().newHadoopConf()
    path = jvm.org.apache.hadoop.fs.Path(f"file:{tmp_path}")
    store = jvm.org.apache.spark.sql.delta.storage.DelegatingLogStore(hadoop_conf)
    assert store.getDelegate(path).logStoreImpl().getClass().getName() == (
        "io.delta.storage.LocalLogStore"
    )
    checkpoints = jvm.org.apache.spark.sql.execution.streaming.checkpointing
    manager = checkpoints.CheckpointFileManager.create(path, hadoop_conf)
    assert manager.getClass().getName().endswith(".FileSystemBasedCheckpointFileManager")
    target = str(tmp_path / "t")
    spark.range(3).write.format("delta").save(target)
    spark.range(3, 5).write.format("delta").mode("append").save(target)
    assert sorted(r[0] for r in spark.read.format("delta").load(target).collect()) == [
        0,
        1,
        2,
        3,
        4,
    ]
    assert (tmp_path / "t" / "_delta_log" / "00000000000000000001.crc").is_file()


def test_a_users_log_configuration_stands(tmp_path: Path) -> None:
    """anycdc's quiet log configuration is named only where the user's is not: in the
    driver's options, or as log4j2.properties in the Spark configuration folder."""
    ours = f"-Dlog4j2.configurationFile={session.LOG_CONFIG.as_uri()}"
    assert session.with_quiet_log("-Xss4m", conf_dir=str(tmp_path)) == f"-Xss4m {ours}"
    assert session.with_quiet_log("-Dlog4j.configurationFile=x.xml") == (
        "-Dlog4j.configurationFile=x.xml"
    )
    (tmp_path / "log4j2.properties").write_text("rootLogger.level = info\n")
    assert session.with_quiet_log("-Xss4m", conf_dir=str(tmp_path)) == "-Xss4m"


@pytest.mark.spark
def test_a_local_session_leaves_out_the_warnings_no_user_can_act_on(spark: Any) -> None:
    """The local driver JVM reads anycdc's log configuration: no "Unable to load
    native-hadoop library" or "adaptive execution is not supported in streaming" lines at
    each start, the rest of Spark's warnings as before."""
    jvm = spark.sparkContext._jvm
    assert jvm.System.getProperty("log4j2.configurationFile") == session.LOG_CONFIG.as_uri()
    manager = jvm.org.apache.logging.log4j.LogManager
    for quiet in (
        "org.apache.hadoop.util.NativeCodeLoader",
        "org.apache.spark.sql.execution.streaming.runtime.ResolveWriteToStream",
    ):
        assert str(manager.getLogger(quiet).getLevel()) == "ERROR", quiet
    assert str(manager.getLogger("org.apache.spark.scheduler.DAGScheduler").getLevel()) == "WARN"
