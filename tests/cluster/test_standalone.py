"""The cluster story: ``spark-submit`` onto a real Spark standalone cluster gives the same tables.

A standalone master and two workers (1 core, 1 GiB each) run on 127.0.0.1 from the pyspark
installation's ``bin/spark-class``; ``spark-submit --master spark://...`` runs
``src/anycdc/spark/submit.py run --source-dir ... --target ...`` on it, so decoding and the
Delta MERGEs execute in two executor JVMs (one per worker) with their own Python workers.
Meanwhile the same messages (a simulated shop database in Canal JSON, another in Debezium
JSON) are applied in local mode. Every Delta table of both targets (source tables and the
``_anycdc`` changelog, tombstones and batches) must hold the same rows, and the source tables
must equal the simulator's ground truth.

Every process of the cluster (daemons, driver, executors, Python workers) runs with
``TZ=Asia/Shanghai``, as on our users' machines: the driver is started in UTC the way the
README tells (``--conf spark.driver.extraJavaOptions=-Duser.timezone=UTC``), and anycdc itself
adds ``-Duser.timezone=UTC`` to the executors' options (the test gives them options of its
own, without a zone): each executor's command line must carry it (Delta re-reads a table's
state after every commit outside UTC), and the tables must still equal local mode's.

The executors import anycdc from this checkout's virtualenv (``spark.pyspark.python``), which
works because every "node" is this machine; on a real cluster the package is installed on the
nodes or shipped with ``--py-files`` (see :mod:`anycdc.spark.submit`).

The Spark daemons write their logs to ``<tmp_path>/standalone/logs``, the executors theirs to
``<tmp_path>/standalone/work-N/app-*/N/stderr``, the driver to ``<tmp_path>/spark-submit.log``;
the fixture kills every daemon (and its process group) however the test ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from anycdc.formats import get_format
from anycdc.simulate import Workload
from anycdc.verify import compare_rows
from tests.pipeline.helpers import run, write_messages

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SUBMIT_SCRIPT = ROOT / "src" / "anycdc" / "spark" / "submit.py"
FORMATS = {"canal-json": 3, "debezium-json": 4}  # format -> workload seed
WORKERS = 2
APP_NAME = "anycdc run on standalone"
# columns whose values depend on the run (micro-batch ids, wall-clock times), not on the data
RUN_SPECIFIC = {
    "_cdc_batch", "batch_id", "processed_at", "deleted_at", "failed_at",
    "applied_at", "reason",  # _anycdc/applied: when, and why then (a table due by its age)
}  # fmt: skip
# small-machine settings, like get_spark(for_tests=True) gives the local session
FAST_JVM = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m -XX:+UseSerialGC"
MACHINE_ZONE = "Asia/Shanghai"  # the zone of every process of the cluster
SUBMIT_CONF = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.executor.memory": "768m",
    "spark.executor.cores": "1",
    "spark.cores.max": str(WORKERS),
    # start scheduling only once both executors are up, so both take part
    "spark.scheduler.minRegisteredResourcesRatio": "1.0",
    "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "2",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "2",
    "spark.sql.codegen.wholeStage": "false",
    "spark.executor.extraJavaOptions": FAST_JVM,
}


def _database(format_id: str) -> str:
    return "shop_" + format_id.removesuffix("-json").replace("-", "_")


def _tail(path: Path, lines: int = 60) -> str:
    if not path.exists():
        return f"({path} does not exist)"
    text = path.read_text(errors="replace").splitlines()
    return f"--- {path} (last {lines} of {len(text)} lines) ---\n" + "\n".join(text[-lines:])


# ---------------------------------------------------------------- the standalone cluster


@dataclass
class Standalone:
    """A running master + workers; every process is in its own process group."""

    url: str  # spark://127.0.0.1:PORT
    webui: str  # http://127.0.0.1:PORT
    home: Path
    logs: list[Path] = field(default_factory=list)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def state(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.webui}/json/", timeout=5) as response:
            data: dict[str, Any] = json.load(response)
            return data

    def alive_workers(self) -> int:
        return sum(1 for w in self.state().get("workers", []) if w.get("state") == "ALIVE")

    def log_tails(self) -> str:
        return "\n".join(_tail(p, 30) for p in self.logs)


def _pyspark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _daemon_env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYSPARK_GATEWAY", "PYSPARK_SUBMIT", "ANYCDC_SPARK"))
    }
    conf_dir = home / "conf"  # empty: no spark-defaults / spark-env from anywhere else
    conf_dir.mkdir(parents=True, exist_ok=True)
    env.update(
        {
            "SPARK_HOME": str(_pyspark_home()),
            "SPARK_CONF_DIR": str(conf_dir),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOCAL_DIRS": str(home / "local"),
            "SPARK_LOG_DIR": str(home / "logs"),
            "SPARK_DAEMON_MEMORY": "512m",
            "SPARK_DAEMON_JAVA_OPTS": FAST_JVM,
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "TZ": MACHINE_ZONE,
        }
    )
    return env


def _spawn(cluster: Standalone, name: str, args: list[str], env: dict[str, str]) -> None:
    log = cluster.home / "logs" / f"{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    spark_class = str(_pyspark_home() / "bin" / "spark-class")
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [spark_class, *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cluster.home,
            start_new_session=True,  # own process group: executors die with their worker
        )
    cluster.logs.append(log)
    cluster.procs.append(proc)


def _stop(cluster: Standalone) -> None:
    """Workers first (they stop their executors), then the master; SIGKILL what lingers."""
    for proc in reversed(cluster.procs):
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    for proc in cluster.procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for proc in cluster.procs:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the group: also orphaned executor JVMs
        except ProcessLookupError:
            pass
        if proc.poll() is None:
            proc.wait(timeout=10)


@pytest.fixture
def standalone(spark: Any, tmp_path: Path, free_port: Callable[[], int]) -> Iterator[Standalone]:
    """Master + 2 workers on 127.0.0.1 (``spark`` first: it skips when Java/jars are missing)."""
    home = tmp_path / "standalone"
    port, webui = free_port(), free_port()
    cluster = Standalone(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{webui}", home)
    env = _daemon_env(home)
    started = time.monotonic()
    try:
        _spawn(
            cluster,
            "master",
            ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(port), "--webui-port", str(webui)],
            env,
        )  # fmt: skip
        for index in range(WORKERS):
            work = home / f"work-{index}"
            work.mkdir(parents=True)
            _spawn(
                cluster,
                f"worker-{index}",
                ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                 "--cores", "1", "--memory", "1g", "--webui-port", str(free_port()),
                 "--work-dir", str(work), cluster.url],
                env,
            )  # fmt: skip
        deadline = time.monotonic() + 120
        alive = 0
        while alive < WORKERS:
            dead = [p.args for p in cluster.procs if p.poll() is not None]
            if dead:
                pytest.fail(f"a Spark daemon exited: {dead}\n{cluster.log_tails()}")
            if time.monotonic() > deadline:
                pytest.fail(f"{alive}/{WORKERS} workers registered in 120 s\n{cluster.log_tails()}")
            try:
                alive = cluster.alive_workers()
            except OSError:  # web UI not listening yet
                alive = 0
            if alive < WORKERS:
                time.sleep(0.5)
        print(f"\n[standalone cluster {cluster.url} up in {time.monotonic() - started:.1f}s]")
        yield cluster
    finally:
        _stop(cluster)


# ---------------------------------------------------------------- the test


def _write_source(folder: Path) -> dict[str, Workload]:
    """One simulated shop database per format, one .jsonl file each (values only: a file has
    no Kafka key, so the Debezium tables get their keys from ``primary_keys``)."""
    workloads = {}
    for format_id, seed in FORMATS.items():
        fmt = get_format(format_id)
        workload = Workload(seed=seed, rows=5, events=60, database=_database(format_id))
        messages = [m for event in workload.events(format_id) for m in fmt.encode(event)]
        write_messages(folder, f"{format_id}.jsonl", messages)
        workloads[format_id] = workload
    return workloads


def _primary_keys(workloads: dict[str, Workload]) -> dict[str, list[str]]:
    return {
        t.qualified: list(t.key) for t in workloads["debezium-json"].tables
    }  # Debezium names its key only in the Kafka message key


@contextlib.contextmanager
def _spark_submit(
    cluster: Standalone, args: list[str], log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``spark-submit ... submit.py ARGS`` (output to ``log``); kill it on leaving if
    it still runs."""
    from anycdc.spark import jars

    command = [
        str(_pyspark_home() / "bin" / "spark-submit"),
        "--master", cluster.url,
        "--deploy-mode", "client",
        "--name", APP_NAME,
        "--driver-memory", "1g",
        "--jars", ",".join(jars.spark_jars()),
        "--conf", f"spark.pyspark.python={sys.executable}",
        "--conf", f"spark.pyspark.driver.python={sys.executable}",
        "--conf", f"spark.sql.warehouse.dir={cluster.home / 'warehouse'}",
        "--conf", f"spark.driver.extraJavaOptions={FAST_JVM} -Duser.timezone=UTC "
        f"-Dderby.system.home={cluster.home / 'derby'}",
    ]  # fmt: skip
    for key, value in SUBMIT_CONF.items():
        command += ["--conf", f"{key}={value}"]
    command += [str(SUBMIT_SCRIPT), *args]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=_daemon_env(cluster.home),
            cwd=cluster.home,
            start_new_session=True,
        )
        try:
            yield proc
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _finish(proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"spark-submit ran over {timeout:.0f} s\n{_tail(log)}")
    if code != 0:
        pytest.fail(f"spark-submit exited with {code}\n{_tail(log)}")


Rows = tuple[list[str], list[tuple[Any, ...]]]


def _read_tables(spark: Any, target: Path) -> dict[str, Rows]:
    """Every Delta table under ``target`` (source tables and ``_anycdc/*``): its columns and
    sorted rows, without run-specific values, paths written relative to the target
    (``_anycdc/batches`` names each table's folder)."""
    tables = {}
    prefix = str(target)
    for delta_log in sorted(target.rglob("_delta_log")):
        frame = spark.read.format("delta").load(str(delta_log.parent))
        columns = sorted(c for c in frame.columns if c not in RUN_SPECIFIC)
        rows = [
            tuple(v.replace(prefix, "<target>") if isinstance(v, str) else v for v in r)
            for r in frame.select(*columns).collect()
        ]
        tables[str(delta_log.parent.relative_to(target))] = (columns, sorted(rows, key=repr))
    return tables


def _executor_commands(cluster: Standalone) -> list[str]:
    """The command line of every executor the workers started (the first lines of its
    stderr: ``Spark Executor Command: "java" ...``)."""
    commands = []
    for log in sorted(cluster.home.glob("work-*/app-*/*/stderr")):
        for line in log.read_text(errors="replace").splitlines()[:20]:
            if line.startswith("Spark Executor Command:"):
                commands.append(line)
    return commands


def _executor_tasks(cluster: Standalone) -> dict[str, int]:
    """Per worker: tasks its executors finished (from the executors' stderr logs)."""
    done = {}
    for index in range(WORKERS):
        logs = (cluster.home / f"work-{index}").glob("app-*/*/stderr")
        done[f"worker-{index}"] = sum(
            p.read_text(errors="replace").count("Finished task") for p in logs
        )
    return done


def test_spark_submit_to_standalone_cluster_matches_local_mode(
    spark: Any, standalone: Standalone, tmp_path: Path
) -> None:
    source = tmp_path / "in"
    workloads = _write_source(source)
    keys = _primary_keys(workloads)
    cluster_target, local_target = tmp_path / "cluster", tmp_path / "local"
    args = ["run", "--source-dir", str(source), "--target", str(cluster_target)]
    for table, columns in keys.items():
        args += ["--primary-key", f"{table}={','.join(columns)}"]
    submit_log = tmp_path / "spark-submit.log"

    # 1. the cluster: spark-submit onto the standalone master; 2. meanwhile, local mode on the
    # same messages and configuration (the two overlap: a 2-core machine has idle gaps in both)
    started = time.time()
    with _spark_submit(standalone, args, submit_log) as submitted:
        history = run(spark, source, local_target, primary_keys=keys)
        local_seconds = time.time() - started
        _finish(submitted, submit_log, timeout=900)
    cluster_seconds = submit_log.stat().st_mtime - started  # its last line: driver shutdown
    assert sum(m.dead_letters for m in history) == 0

    state = standalone.state()
    apps = [a for a in state.get("completedapps", []) if a.get("name") == APP_NAME]
    assert [a.get("state") for a in apps] == ["FINISHED"], f"{state}\n{_tail(submit_log)}"
    tasks = _executor_tasks(standalone)
    assert all(tasks.values()), f"both workers' executors must run tasks: {tasks}"
    commands = _executor_commands(standalone)
    assert len(commands) >= WORKERS, commands
    for command in commands:  # the test's own executor options, and anycdc's zone after them
        assert "-XX:+UseSerialGC" in command and '"-Duser.timezone=UTC"' in command, command
    print(
        f"[cluster run {cluster_seconds:.1f}s (tasks per worker {tasks}), "
        f"local run {local_seconds:.1f}s, concurrently]"
    )

    # 3. every Delta table (source tables, changelog, tombstones, batches) holds the same rows
    with ThreadPoolExecutor(2) as pool:  # two Spark jobs at a time: reads are latency-bound
        local, cluster = pool.map(partial(_read_tables, spark), (local_target, cluster_target))
    assert sorted(cluster) == sorted(local)
    for table, (columns, rows) in local.items():
        assert cluster[table][0] == columns, table
        assert cluster[table][1] == rows, table

    # 4. ... and the source tables are the simulator's ground truth
    failures = []
    for format_id, workload in workloads.items():
        for spec in workload.tables:
            columns, rows = cluster[f"{spec.database}/{spec.name}"]
            actual = [dict(zip(columns, row, strict=True)) for row in rows]
            expected = list(workload.truth[spec.qualified].values())
            diff = compare_rows(spec.qualified, spec.key, expected, actual)
            if not diff.ok:
                failures.append(
                    f"{format_id} {spec.qualified}: missing {diff.missing[:3]} "
                    f"extra {diff.extra[:3]} different {diff.different[:3]}"
                )
    assert not failures, "\n".join(failures)
