"""The project's own Apache Kafka broker: one KRaft node (broker + controller) on 127.0.0.1.

It runs the real Kafka server from the jars ``make setup`` fetched from Maven Central into
``.build/kafka-libs`` (``jvm/kafka-broker/pom.xml``)::

    java -Xmx512m -cp '.build/kafka-libs/*' kafka.Kafka var/kafka/server.properties

Use it from the shell::

    python -m anycdc.devtools.kafka start [--port 19092] [--fresh]
    python -m anycdc.devtools.kafka status
    python -m anycdc.devtools.kafka stop
    anycdc dev kafka start|stop|status        # the same, through the CLI

or from Python (the test suite starts one per pytest session on free ports)::

    broker = KafkaBroker(home=tmp_dir, port=free_port(), controller_port=free_port())
    broker.start()          # formats the storage the first time, waits until it is ready
    broker.bootstrap        # "127.0.0.1:PORT"
    broker.stop()           # SIGTERM, wait, SIGKILL if it does not go

Layout of ``home`` (default ``var/kafka``): ``server.properties``, ``log4j2.properties``,
``kafka.pid``, ``broker.json`` (port, pid), ``logs/`` (server.log, stdout.log), ``data/``
(the log dirs and KRaft metadata; survives restarts, ``--fresh`` wipes it).

Robustness: a pid file whose process is gone (or is not this broker) is removed; a broker
still running from an earlier run with the same home is reused if healthy, else stopped and
started again; brokers started for a test session carry their owner's pid and are reaped
when that owner died without stopping them.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import logging
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anycdc.devtools import paths

DEFAULT_PORT = 19092  # not 9092: don't collide with a Kafka the developer runs already
HOST = "127.0.0.1"
HEAP = os.environ.get("ANYCDC_KAFKA_HEAP", "512m")
MARK = "-Danycdc.kafka.home="  # on the java command line: finds our brokers among processes
OWNER = "-Danycdc.kafka.owner.pid="


class ClientLog(logging.LoggerAdapter[logging.Logger]):
    """Where a producer's own log lines go (its ``logger`` setting): its warnings are about
    what it retries by itself (a new broker's "Coordinator load in progress: retrying"), so
    they are debug lines of ``anycdc.kafka.client``; its errors stay errors.

    >>> log = ClientLog()
    >>> log.log(logging.WARNING, "%s", "retrying"), log.logger.name
    (None, 'anycdc.kafka.client')
    """

    def __init__(self) -> None:
        super().__init__(logging.getLogger("anycdc.kafka.client"), {})

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        super().log(logging.DEBUG if level < logging.ERROR else level, msg, *args, **kwargs)


class KafkaError(RuntimeError):
    """The broker could not be set up, started or stopped; the message says what to do."""


def free_port(host: str = HOST) -> int:
    """A TCP port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def new_cluster_id() -> str:
    """A Kafka cluster id: 16 random bytes, URL-safe base64 without padding (22 chars)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):  # would read as an option on the command line
            return text


def java_bin() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise KafkaError("no `java` on PATH (Java 17+ is needed): install a JDK or set JAVA_HOME")
    return found


# ---------------------------------------------------------------- processes (Linux /proc)


def process_cmdline(pid: int) -> list[str] | None:
    """The command line of process ``pid`` (Linux ``/proc``), or None when it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie counts as gone, unless a JVM still shutting down)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not yet reaped by its parent) is dead for us. Careful: a JVM whose
    # main thread has exited while other threads still run its shutdown also shows "Z" for
    # the group leader, with Threads > 1: that one is alive.
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    state = fields.get("State", "").strip()[:1]
    threads = fields.get("Threads", "1").strip()
    return not (state == "Z" and threads in ("0", "1"))


def _broker_processes() -> Iterator[tuple[int, list[str]]]:
    """(pid, cmdline) of every anycdc Kafka broker on this machine."""
    proc = Path("/proc")
    if not proc.is_dir():
        return
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        cmd = process_cmdline(int(entry.name))
        if cmd and "kafka.Kafka" in cmd and any(a.startswith(MARK) for a in cmd):
            yield int(entry.name), cmd


def _arg_value(cmd: Sequence[str], prefix: str) -> str | None:
    for arg in cmd:
        if arg.startswith(prefix):
            return arg[len(prefix) :]
    return None


def terminate_process(
    pid: int, timeout: float, popen: subprocess.Popen[bytes] | None = None
) -> bool:
    """SIGTERM, wait up to *timeout*, then SIGKILL. True if it had to be killed."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if _wait_gone(pid, timeout, popen):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _wait_gone(pid, 10, popen)
    return True


def _wait_gone(pid: int, timeout: float, popen: subprocess.Popen[bytes] | None) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if popen is not None:
            if popen.poll() is not None:
                return True
        elif not process_alive(pid):
            return True
        time.sleep(0.1)
    return False


def reap_orphans() -> list[int]:
    """Stop brokers started for a process (a test session) that has died. Returns their pids."""
    reaped = []
    for pid, cmd in list(_broker_processes()):
        owner = _arg_value(cmd, OWNER)
        if owner and owner.isdigit() and not process_alive(int(owner)):
            terminate_process(pid, 15)
            reaped.append(pid)
    return reaped


def set_parent_death_signal() -> None:  # pragma: no cover - runs in the child
    """Linux: SIGTERM the broker when the process that started it dies (a test session)."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


# ---------------------------------------------------------------- readiness probes


def api_versions_ok(host: str, port: int, timeout: float = 2.0) -> bool:
    """Send a Kafka ApiVersions v0 request; True when a Kafka broker answers without error."""
    client = b"anycdc-probe"
    body = struct.pack(">hhih", 18, 0, 7, len(client)) + client
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(struct.pack(">i", len(body)) + body)
            head = _recv_exact(sock, 10)
    except OSError:
        return False
    if head is None:
        return False
    _size, correlation, error = struct.unpack(">iih", head)
    return bool(correlation == 7 and error == 0)


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def metadata_ok(bootstrap: str, timeout: float = 5.0, *, led: bool = False) -> bool:
    """True when an admin client gets cluster metadata listing a live broker; with ``led``,
    also a leader for every partition (a restarted broker serves metadata before it has
    loaded its logs, and a client asking it then is told "not leader"). ``led`` is for a
    wait that asks again (:meth:`KafkaBroker.start`): at any one moment a topic another
    client is creating or deleting may have no leader yet, or no more."""
    try:
        from confluent_kafka.admin import AdminClient
    except ImportError:  # core install without the [spark] extra: protocol-level probe
        host, _, port = bootstrap.rpartition(":")
        return api_versions_ok(host, int(port), timeout)
    admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": int(timeout * 1000)})
    try:
        md = admin.list_topics(timeout=timeout)
    except Exception:
        return False
    if len(md.brokers) < 1:
        return False
    return not led or all(
        topic.error is None
        and all(part.error is None and part.leader >= 0 for part in topic.partitions.values())
        for topic in md.topics.values()
    )


# ---------------------------------------------------------------- the broker


def _reporter(quiet: bool) -> Callable[[str], None]:
    def say(message: str) -> None:
        if not quiet:
            print(f"kafka: {message}", file=sys.stderr)

    return say


@dataclass
class KafkaBroker:
    """One local KRaft broker+controller. See the module docstring."""

    home: Path = field(default_factory=paths.kafka_home)
    port: int = field(
        default_factory=lambda: int(os.environ.get("ANYCDC_KAFKA_PORT", DEFAULT_PORT))
    )
    controller_port: int | None = None  # default: port + 1
    libs: Path = field(default_factory=paths.kafka_libs_dir)
    heap: str = HEAP
    owner_pid: int | None = None  # set: the broker dies with / is reaped after this process
    extra_properties: dict[str, str] = field(default_factory=dict)
    _popen: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.home = Path(self.home).resolve()
        if self.controller_port is None:
            self.controller_port = self.port + 1

    # paths
    @property
    def config_path(self) -> Path:
        return self.home / "server.properties"

    @property
    def pid_path(self) -> Path:
        return self.home / "kafka.pid"

    @property
    def state_path(self) -> Path:
        return self.home / "broker.json"

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    # configuration
    def properties(self) -> dict[str, str]:
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@{HOST}:{self.controller_port}",
            "listeners": f"PLAINTEXT://{HOST}:{self.port},CONTROLLER://{HOST}:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://{HOST}:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.data_dir),
            "num.partitions": "1",
            "default.replication.factor": "1",
            "min.insync.replicas": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "4",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "4",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "auto.create.topics.enable": "true",
            "delete.topic.enable": "true",
            # a small machine shared with Spark: few threads
            "num.network.threads": "2",
            "num.io.threads": "2",
            "background.threads": "2",
            "num.recovery.threads.per.data.dir": "1",
            "log.cleaner.threads": "1",
            "log.retention.hours": "168",
        }
        props.update(self.extra_properties)
        return props

    def write_config(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        lines = ["# written by anycdc.devtools.kafka on every start; edits are overwritten"]
        lines += [f"{k}={v}" for k, v in self.properties().items()]
        self.config_path.write_text("\n".join(lines) + "\n")
        (self.home / "log4j2.properties").write_text(
            "\n".join(
                [
                    "status = warn",
                    "name = anycdc-kafka",
                    "appender.file.type = File",
                    "appender.file.name = FILE",
                    f"appender.file.fileName = {self.logs_dir / 'server.log'}",
                    "appender.file.layout.type = PatternLayout",
                    "appender.file.layout.pattern = [%d] %p %m (%c)%n",
                    "rootLogger.level = INFO",
                    "rootLogger.appenderRef.file.ref = FILE",
                    "logger.request.name = kafka.request.logger",
                    "logger.request.level = WARN",
                    "logger.state.name = state.change.logger",
                    "logger.state.level = WARN",
                    "",
                ]
            )
        )

    def _classpath(self) -> str:
        if not self.libs.is_dir() or not any(self.libs.glob("kafka_2.13-*.jar")):
            raise KafkaError(
                f"Kafka broker jars not found in {self.libs}: run `make setup` "
                "(it fetches them from Maven Central with jvm/kafka-broker/pom.xml)"
            )
        return str(self.libs / "*")

    def java_command(self, main: str, *args: str) -> list[str]:
        cmd = [
            java_bin(),
            f"-Xmx{self.heap}",
            "-Xms128m",
            "-XX:+UseSerialGC",  # few GC threads: the machine is small and shared
            "-XX:TieredStopAtLevel=1",  # C1 only: quick start, little JIT CPU
            "-XX:ReservedCodeCacheSize=128m",  # C1-only's default 48 MB can fill up
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={self.logs_dir}",
            f"{MARK}{self.home}",
        ]
        if self.owner_pid is not None:
            cmd.append(f"{OWNER}{self.owner_pid}")
        cmd += ["-cp", self._classpath(), main, *args]
        return cmd

    def format_storage(self) -> None:
        """Format the KRaft storage once (``kafka-storage format``); no-op when formatted."""
        if (self.data_dir / "meta.properties").exists():
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        cluster_id = new_cluster_id()
        cmd = self.java_command(
            "kafka.tools.StorageTool",
            "format",
            "--cluster-id",
            cluster_id,
            "--config",
            str(self.config_path),
            "--ignore-formatted",
        )
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
        if result.returncode != 0:
            raise KafkaError(
                f"formatting Kafka storage in {self.data_dir} failed (exit {result.returncode}):\n"
                f"{(result.stdout + result.stderr)[-3000:]}\n"
                "what to do: `python -m anycdc.devtools.kafka start --fresh` wipes the data dir"
            )

    # process state
    def running_pid(self) -> int | None:
        """The pid of this home's broker if it runs (pid file, else a process scan)."""
        pid = self._pid_from_file()
        if pid is not None:
            return pid
        for other, cmd in _broker_processes():
            if _arg_value(cmd, MARK) == str(self.home):
                return other
        return None

    def _pid_from_file(self) -> int | None:
        try:
            pid = int(self.pid_path.read_text().strip())
        except (OSError, ValueError):
            return None
        cmd = process_cmdline(pid)
        ours = cmd is not None and "kafka.Kafka" in cmd and _arg_value(cmd, MARK) == str(self.home)
        if ours and process_alive(pid):
            return pid
        if cmd is None and sys.platform != "linux" and process_alive(pid):
            return pid  # no /proc to check: trust the pid file
        return None

    def _recorded_port(self) -> int | None:
        try:
            state = json.loads(self.state_path.read_text())
            return int(state["port"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def is_ready(self, timeout: float = 5.0) -> bool:
        return port_open(HOST, self.port) and metadata_ok(self.bootstrap, timeout)

    # lifecycle
    def start(
        self, *, timeout: float = 120.0, fresh: bool = False, quiet: bool = False
    ) -> KafkaBroker:
        """Start (or reuse) the broker and wait until it serves metadata."""
        say = _reporter(quiet)
        for pid in reap_orphans():
            say(f"stopped orphaned test broker pid {pid}")
        existing = self.running_pid()
        if existing is not None and not fresh:
            recorded = self._recorded_port()
            if recorded is not None and recorded != self.port:
                say(
                    f"broker pid {existing} runs on port {recorded}, not {self.port}: restarting it"
                )
                terminate_process(existing, 30)
            elif self._wait_ready(existing, min(timeout, 30.0)):
                say(f"already running, pid {existing}, bootstrap {self.bootstrap}")
                self._write_pid(existing)
                return self
            else:
                say(f"broker pid {existing} is not answering: restarting it")
                terminate_process(existing, 30)
        elif existing is not None:
            terminate_process(existing, 30)
        with contextlib.suppress(FileNotFoundError):
            self.pid_path.unlink()  # stale: its process is gone or is not this broker
        if fresh and self.data_dir.exists():
            if any(self.data_dir.iterdir()) and not (self.data_dir / "meta.properties").is_file():
                # --home names a folder the user chose: its data/ may be theirs, not a broker's
                raise KafkaError(
                    f"--fresh: {self.data_dir} is not a Kafka log folder (no meta.properties): "
                    "not wiped; give --home a folder of its own"
                )
            say(f"wiping {self.data_dir}")
            shutil.rmtree(self.data_dir)
        assert self.controller_port is not None
        for port in (self.port, self.controller_port):
            if port_open(HOST, port):
                raise KafkaError(
                    f"port {HOST}:{port} is already in use by another program: stop it, or pick "
                    "other ports (`--port N`, env ANYCDC_KAFKA_PORT; the controller uses N+1)"
                )

        self.write_config()
        self.format_storage()
        out = open(self.logs_dir / "stdout.log", "ab")
        try:
            cmd = self.java_command("kafka.Kafka", str(self.config_path))
            self._popen = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.home,
                start_new_session=True,  # Ctrl-C in the shell that started it doesn't kill it
                preexec_fn=set_parent_death_signal if self.owner_pid == os.getpid() else None,
            )
        finally:
            out.close()
        pid = self._popen.pid
        self._write_pid(pid)
        say(f"starting pid {pid} on {self.bootstrap} (home {self.home})")
        if not self._wait_ready(pid, timeout):
            log_tail = self.log_tail()
            self.stop(quiet=True)
            raise KafkaError(
                f"Kafka did not become ready on {self.bootstrap} within {timeout:.0f}s.\n"
                f"--- last lines of {self.logs_dir}/ ---\n{log_tail}\n"
                "what to do: read the log above; `--fresh` wipes the data dir if it is damaged"
            )
        say(f"ready on {self.bootstrap}")
        return self

    def _write_pid(self, pid: int) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.pid_path.write_text(f"{pid}\n")
        self.state_path.write_text(
            json.dumps(
                {
                    "pid": pid,
                    "bootstrap": self.bootstrap,
                    "port": self.port,
                    "controller_port": self.controller_port,
                    "home": str(self.home),
                },
                indent=2,
            )
            + "\n"
        )

    def _wait_ready(self, pid: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._popen is not None and self._popen.pid == pid:
                if self._popen.poll() is not None:
                    return False
            elif not process_alive(pid):
                return False
            if port_open(HOST, self.port) and metadata_ok(
                self.bootstrap, max(1.0, min(5.0, deadline - time.monotonic())), led=True
            ):
                return True
            time.sleep(0.3)
        return False

    def stop(self, *, timeout: float = 30.0, quiet: bool = False) -> bool:
        """Stop the broker (SIGTERM, then SIGKILL after *timeout*). False if none was running."""
        say = _reporter(quiet)
        pid = self.running_pid()
        if pid is None and self._popen is not None and self._popen.poll() is None:
            pid = self._popen.pid
        stopped = False
        if pid is not None:
            popen = self._popen if self._popen is not None and self._popen.pid == pid else None
            started = time.monotonic()
            killed = terminate_process(pid, timeout, popen)
            took = time.monotonic() - started
            say(f"{'killed' if killed else 'stopped'} pid {pid} in {took:.1f}s")
            stopped = True
        else:
            say("not running")
        if self._popen is not None:
            with contextlib.suppress(Exception):
                self._popen.wait(timeout=5)
            self._popen = None
        with contextlib.suppress(FileNotFoundError):
            self.pid_path.unlink()
        return stopped

    def status(self) -> dict[str, Any]:
        pid = self.running_pid()
        port = self._recorded_port() or self.port
        probe = (
            KafkaBroker(home=self.home, port=port, libs=self.libs) if port != self.port else self
        )
        return {
            "running": pid is not None,
            "pid": pid,
            "bootstrap": probe.bootstrap,
            "ready": pid is not None and probe.is_ready(),
            "home": str(self.home),
            "log": str(self.logs_dir / "server.log"),
        }

    def log_tail(self, lines: int = 40) -> str:
        out = []
        for name in ("stdout.log", "server.log"):
            path = self.logs_dir / name
            if path.exists():
                text = path.read_text(errors="replace").splitlines()[-lines:]
                out.append(f"[{name}]\n" + "\n".join(text))
        return "\n".join(out) or "(no log written)"


def create_topic(bootstrap: str, topic: str, partitions: int = 1, timeout: float = 60) -> None:
    """Create ``topic`` and wait until its metadata shows every partition."""
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(timeout=timeout)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:  # metadata propagates asynchronously
        found = admin.list_topics(topic=topic, timeout=10).topics.get(topic)
        if found is not None and found.error is None and len(found.partitions) == partitions:
            return
        time.sleep(0.2)
    raise KafkaError(f"topic {topic} has no {partitions} partitions after {timeout:.0f}s")


def produce(
    bootstrap: str,
    topic: str,
    messages: Iterable[tuple[bytes | None, bytes, int]],
    *,
    rate: float | None = None,
    until: float | None = None,
    progress: Callable[[int], None] | None = None,
    sent_at: list[tuple[int, float]] | None = None,
) -> int:
    """Produce ``(key, value, partition)`` messages, idempotently (``partition`` -1: by the
    key, Kafka's partitioner); returns how many were sent.

    ``rate`` paces them (messages/s), ``until`` (a ``time.monotonic()`` deadline) stops
    them; every 1,000 messages ``progress(count)`` is called and ``(count, wall time)``
    appended to ``sent_at`` (the bench's latency clock).
    """
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 20,
            "enable.idempotence": True,
            "logger": ClientLog(),
        }
    )
    started = time.monotonic()
    count = 0
    for key, value, partition in messages:
        if until is not None and time.monotonic() >= until:
            break
        if rate:
            ahead = count / rate - (time.monotonic() - started)
            if ahead > 0:
                time.sleep(ahead)
        while True:
            try:
                producer.produce(topic, key=key, value=value, partition=partition)
                break
            except BufferError:  # the local queue is full: let it drain
                producer.poll(0.1)
        count += 1
        if count % 1000 == 0:
            producer.poll(0)
            if sent_at is not None:
                sent_at.append((count, time.time()))
            if progress:
                progress(count)
    if producer.flush(120):
        raise KafkaError(f"not every message reached {topic} within 120 s")
    if sent_at is not None:
        sent_at.append((count, time.time()))
    return count


def by_partition(
    partitions: Sequence[Sequence[tuple[bytes | None, bytes]]],
) -> Iterator[tuple[bytes | None, bytes, int]]:
    """``[[(key, value), ...] per partition]`` -> ``(key, value, partition)`` in partition order."""
    for index, part in enumerate(partitions):
        for key, value in part:
            yield key, value, index


def broker_from_home(home: Path | None = None) -> KafkaBroker:
    """The dev broker, with the port it was last started on when one is recorded."""
    broker = KafkaBroker(home=home or paths.kafka_home())
    recorded = broker._recorded_port()
    if recorded is not None and "ANYCDC_KAFKA_PORT" not in os.environ:
        broker = KafkaBroker(home=broker.home, port=recorded)
    return broker


# ---------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("start", "stop", "status", "restart"))
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help=f"broker port on 127.0.0.1 (default $ANYCDC_KAFKA_PORT or {DEFAULT_PORT}; 0 = any "
        "free port); the controller listens on PORT+1",
    )
    parser.add_argument(
        "--home",
        type=Path,
        default=None,
        help="config, pid file, logs and data (default $ANYCDC_KAFKA_DIR or var/kafka)",
    )
    parser.add_argument("--fresh", action="store_true", help="start: wipe the data dir first")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait (start)")
    parser.add_argument("--json", action="store_true", help="status: print JSON")


def run(args: argparse.Namespace) -> int:
    home = args.home or paths.kafka_home()
    if args.port is not None:
        port = args.port if args.port != 0 else free_port()
        controller = port + 1 if args.port != 0 else free_port()
        broker = KafkaBroker(home=home, port=port, controller_port=controller)
    else:
        broker = broker_from_home(home)
    try:
        if args.action == "start":
            broker.start(timeout=args.timeout, fresh=args.fresh)
            print(broker.bootstrap)
        elif args.action == "restart":
            broker.stop()
            broker.start(timeout=args.timeout, fresh=args.fresh)
            print(broker.bootstrap)
        elif args.action == "stop":
            broker.stop()
        else:
            state = broker.status()
            if args.json:
                print(json.dumps(state, indent=2))
            else:
                for key, value in state.items():
                    print(f"{key:10} {value}")
            return 0 if state["running"] else 3
    except KafkaError as exc:
        print(f"kafka: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m anycdc.devtools.kafka",
        description="The project's local Kafka broker (KRaft, one node, 127.0.0.1).",
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
