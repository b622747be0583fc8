"""pytest plugin: the real infrastructure the tests run against.

Loaded from ``tests/conftest.py`` (``pytest_plugins = ["tests.fixtures_infra"]``).

Fixtures
--------
``spark``           one local SparkSession per pytest session (Delta + Kafka + Avro jars from
                    ``make setup``, UI off, 4 shuffle partitions, 1 GiB driver heap)
``kafka_broker``    one real Kafka broker per pytest session (KRaft, 127.0.0.1, free ports,
                    data in a pytest temp dir), stopped at the end; a
                    :class:`anycdc.devtools.kafka.KafkaBroker`
``kafka_bootstrap`` its ``"127.0.0.1:PORT"``
``kafka_topic``     factory: ``kafka_topic(partitions=3)`` creates a fresh topic, returns its name
``free_port``       factory: ``free_port()`` -> a free TCP port on 127.0.0.1
``schema_registry`` one real schema registry per pytest session (Apicurio Registry from
                    ``make setup``, Confluent API, 127.0.0.1, a free port, basic auth as
                    :data:`REGISTRY_USER`), stopped at the end; a
                    :class:`anycdc.devtools.schema_registry.SchemaRegistry`
``registry_options`` the ``debezium-avro`` options that reach it (URL, user, password)

When pyspark, Java, the Kafka jars or the registry are missing the tests that need them are skipped, unless
``ANYCDC_REQUIRE_INFRA=1`` (``make test`` sets it): then they fail, so a broken setup can't
pass as green. ``ANYCDC_TEST_KAFKA_BOOTSTRAP=host:port`` runs the Kafka tests against a broker
you already have instead of starting one.

Option ``--timing-by-marker`` prints, at the end, how many tests and seconds each marker group
(pure, spark, kafka, faults, ...) took.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import pytest

REQUIRE_INFRA = os.environ.get("ANYCDC_REQUIRE_INFRA") == "1"
GROUP_MARKERS = ("faults", "kafka", "spark", "slow")


def _unavailable(reason: str) -> None:
    if REQUIRE_INFRA:
        pytest.fail(f"{reason} (ANYCDC_REQUIRE_INFRA=1; run `make setup`)", pytrace=False)
    pytest.skip(reason)


def _java_present() -> bool:
    java_home = os.environ.get("JAVA_HOME")
    return bool(shutil.which("java") or (java_home and Path(java_home, "bin", "java").exists()))


# ---------------------------------------------------------------- ports


@pytest.fixture(scope="session")
def free_port() -> Callable[[], int]:
    from anycdc.devtools.kafka import free_port as _free_port

    return _free_port


# ---------------------------------------------------------------- spark


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        _unavailable("pyspark is not installed (pip install -e '.[spark]')")
    if not _java_present():
        _unavailable("no java on PATH (Spark needs Java 17)")
    from anycdc.spark import jars
    from anycdc.spark.session import get_spark

    missing = jars.missing_artifacts(jars.spark_jars())
    if missing:
        _unavailable(f"Spark jars missing from {jars.jars_dir()}: {', '.join(missing)}")
    session = get_spark(
        "anycdc-tests",
        master=os.environ.get("ANYCDC_SPARK_MASTER", "local[2]"),
        for_tests=True,
    )
    yield session
    session.stop()


# ---------------------------------------------------------------- kafka


class ExternalBroker:
    """A broker the developer runs (ANYCDC_TEST_KAFKA_BOOTSTRAP); never started or stopped."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    external = os.environ.get("ANYCDC_TEST_KAFKA_BOOTSTRAP")
    if external:
        yield ExternalBroker(external)
        return
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        _unavailable("confluent-kafka is not installed (pip install -e '.[spark]')")
    if not _java_present():
        _unavailable("no java on PATH (the Kafka broker needs Java 17)")
    from anycdc.devtools import paths
    from anycdc.devtools.kafka import KafkaBroker, free_port

    libs = paths.kafka_libs_dir()
    if not any(libs.glob("kafka_2.13-*.jar")):
        _unavailable(f"Kafka broker jars missing from {libs}")
    broker = KafkaBroker(
        home=tmp_path_factory.mktemp("kafka"),
        port=free_port(),
        controller_port=free_port(),
        owner_pid=os.getpid(),
    )
    started = time.monotonic()
    broker.start(timeout=180, quiet=True)
    print(f"\n[kafka broker ready on {broker.bootstrap} in {time.monotonic() - started:.1f}s]")
    try:
        yield broker
    finally:
        broker.stop(quiet=True)


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka_broker: Any) -> str:
    bootstrap: str = kafka_broker.bootstrap
    return bootstrap


@pytest.fixture
def kafka_topic(kafka_bootstrap: str, request: pytest.FixtureRequest) -> Callable[..., str]:
    """``kafka_topic(partitions=1, name=None)``: create a fresh topic and return its name."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})

    def create(partitions: int = 1, name: str | None = None) -> str:
        base = name or request.node.name
        topic = "".join(c if c.isalnum() or c in "._-" else "_" for c in base)[:180]
        topic = f"{topic}-{uuid.uuid4().hex[:8]}"
        futures = admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=30)
        futures[topic].result(timeout=60)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # metadata propagates asynchronously
            md = admin.list_topics(topic=topic, timeout=10)
            tmd = md.topics.get(topic)
            if tmd is not None and tmd.error is None and len(tmd.partitions) == partitions:
                break
            time.sleep(0.2)
        return topic

    return create


# ---------------------------------------------------------------- schema registry

REGISTRY_USER = ("anycdc", "registry-test-password")


@pytest.fixture(scope="session")
def schema_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not _java_present():
        _unavailable("no java on PATH (the schema registry needs Java 17)")
    from anycdc.devtools import paths
    from anycdc.devtools.kafka import free_port
    from anycdc.devtools.schema_registry import RUNNER_GLOB, SchemaRegistry

    if not any(paths.schema_registry_dir().glob(RUNNER_GLOB)):
        _unavailable(f"Apicurio Registry missing from {paths.schema_registry_dir()}")
    registry = SchemaRegistry(
        home=tmp_path_factory.mktemp("schema-registry"),
        port=free_port(),
        users=dict([REGISTRY_USER]),
        owner_pid=os.getpid(),
    )
    started = time.monotonic()
    registry.start(timeout=180, quiet=True)
    print(f"\n[schema registry ready on {registry.url} in {time.monotonic() - started:.1f}s]")
    try:
        yield registry
    finally:
        registry.stop(quiet=True)


@pytest.fixture(scope="session")
def registry_options(schema_registry: Any) -> dict[str, str]:
    user, password = REGISTRY_USER
    return {
        "registry_url": schema_registry.url,
        "registry_user": user,
        "registry_password": password,
    }


# ---------------------------------------------------------------- timing per marker group


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--timing-by-marker",
        action="store_true",
        default=False,
        help="at the end, print the tests and seconds per marker group (pure, spark, kafka, ...) and the slowest files",
    )


FILES_SHOWN: Final = 25
"""The slowest files ``--timing-by-marker`` names at the end."""


class _MarkerTiming:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.outcomes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.by_file: dict[str, float] = defaultdict(float)  # setup + call + teardown
        self.started = time.monotonic()

    @staticmethod
    def group(keywords: Any) -> str:
        marks = [m for m in GROUP_MARKERS if m in keywords]
        return "+".join(marks) if marks else "pure"

    def add(self, report: pytest.TestReport) -> None:
        group = self.group(report.keywords)
        self.seconds[group] += report.duration
        self.by_file[report.nodeid.split("::", 1)[0]] += report.duration
        if report.when == "call" or (report.when == "setup" and not report.passed):
            outcome = report.outcome
            if report.when == "setup" and report.failed:
                outcome = "error"
            self.outcomes[group][outcome] += 1
        elif report.when == "teardown" and report.failed:
            self.outcomes[group]["error"] += 1

    def lines(self) -> list[str]:
        out = [
            f"{'group':16} {'tests':>6} {'passed':>7} {'failed':>7} {'skipped':>8} {'seconds':>9}"
        ]
        for group in sorted(self.seconds, key=lambda g: -self.seconds[g]):
            o = self.outcomes[group]
            total = sum(o.values())
            failed = o.get("failed", 0) + o.get("error", 0)
            out.append(
                f"{group:16} {total:>6} {o.get('passed', 0):>7} {failed:>7} "
                f"{o.get('skipped', 0):>8} {self.seconds[group]:>9.1f}"
            )
        out.append(f"wall clock {time.monotonic() - self.started:.1f}s")
        return out

    def file_lines(self, top: int = FILES_SHOWN) -> list[str]:
        """The files that took longest (a shared fixture's setup counts for the first file
        that asks for it), so that the suite's time has names."""
        ranked = sorted(self.by_file.items(), key=lambda item: -item[1])
        out = [f"{'seconds':>9}  file"]
        out += [f"{seconds:>9.1f}  {name}" for name, seconds in ranked[:top]]
        rest = ranked[top:]
        if rest:
            out.append(f"{sum(s for _, s in rest):>9.1f}  ({len(rest)} more files)")
        return out

    # hooks, active once registered by pytest_configure
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.add(report)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.seconds:
            return
        terminalreporter.section("time by marker group")
        for line in self.lines():
            terminalreporter.write_line(line)
        terminalreporter.section("time by file")
        for line in self.file_lines():
            terminalreporter.write_line(line)


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--timing-by-marker", default=False):
        config.pluginmanager.register(_MarkerTiming(), "anycdc-marker-timing")
