"""The project's own schema registry: Apicurio Registry on 127.0.0.1, serving the Confluent
Schema Registry API at ``/apis/ccompat/v7`` (what ``debezium-avro``'s ``registry_url`` takes).

It runs the Apicurio Registry application ``make setup`` fetched from Maven Central into
``.build/schema-registry`` (``jvm/schema-registry/pom.xml``), with in-memory storage::

    java -Xmx256m -jar .build/schema-registry/apicurio-registry-app-3.0.9-runner.jar

Use it from the shell::

    python -m anycdc.devtools.schema_registry start [--port 18081] [--user alice:secret]
    python -m anycdc.devtools.schema_registry status | stop
    anycdc dev registry start|stop|status        # the same, through the CLI

or from Python (the test suite starts one per pytest session on a free port)::

    registry = SchemaRegistry(home=tmp_dir, port=free_port(), users={"alice": "secret"})
    registry.start()        # waits until the API answers
    registry.url            # "http://127.0.0.1:PORT/apis/ccompat/v7"
    registry.access_log()   # (method, path, status, user agent) of every request served
    registry.stop()

``users`` turns on HTTP basic auth (Quarkus' embedded users, plain text: for tests only; the
passwords are on the java command line). The schemas live in memory: a restart forgets them.
Layout of ``home`` (default ``var/schema-registry``): ``registry.pid``, ``registry.json``
(port, pid), ``logs/registry.log`` (its console: startup and the access log), ``tmp/``.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from anycdc.devtools import paths
from anycdc.devtools.kafka import (
    free_port,
    java_bin,
    port_open,
    process_alive,
    process_cmdline,
    set_parent_death_signal,
    terminate_process,
)

DEFAULT_PORT: Final = 18081  # not 8081: don't collide with a registry the developer runs
HOST: Final = "127.0.0.1"
CCOMPAT_PATH: Final = "/apis/ccompat/v7"
HEAP: Final = os.environ.get("ANYCDC_REGISTRY_HEAP", "256m")
MARK: Final = "-Danycdc.registry.home="  # on the java command line: finds our registries
OWNER: Final = "-Danycdc.registry.owner.pid="
RUNNER_GLOB: Final = "apicurio-registry-app-*-runner.jar"
_ACCESS: Final = re.compile(
    r'method="([A-Z]+)" path="([^"]*)" response_code="(\d+)".*?user_agent="([^"]*)"'
)


class RegistryError(RuntimeError):
    """The registry could not be set up, started or stopped; the message says what to do."""


def _owned_by_dead(cmd: Sequence[str]) -> bool:
    owner = next((a[len(OWNER) :] for a in cmd if a.startswith(OWNER)), None)
    return owner is not None and owner.isdigit() and not process_alive(int(owner))


def reap_orphans() -> list[int]:
    """Stop registries started for a process (a test session) that has died."""
    reaped = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if entry.name.isdigit():
            cmd = process_cmdline(int(entry.name))
            if cmd and any(a.startswith(MARK) for a in cmd) and _owned_by_dead(cmd):
                terminate_process(int(entry.name), 15)
                reaped.append(int(entry.name))
    return reaped


@dataclass
class SchemaRegistry:
    """One local Apicurio Registry (see the module docstring)."""

    home: Path = field(default_factory=paths.registry_home)
    port: int = field(
        default_factory=lambda: int(os.environ.get("ANYCDC_REGISTRY_PORT", DEFAULT_PORT))
    )
    app_dir: Path = field(default_factory=paths.schema_registry_dir)
    heap: str = HEAP
    users: Mapping[str, str] = field(default_factory=dict, repr=False)
    owner_pid: int | None = None  # set: the registry dies with / is reaped after this process
    _popen: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.home = Path(self.home).resolve()

    @property
    def url(self) -> str:
        """The Confluent-compatible API's base URL (a ``registry_url``)."""
        return f"http://{HOST}:{self.port}{CCOMPAT_PATH}"

    @property
    def log_path(self) -> Path:
        return self.home / "logs" / "registry.log"

    @property
    def pid_path(self) -> Path:
        return self.home / "registry.pid"

    def runner_jar(self) -> Path:
        found = sorted(self.app_dir.glob(RUNNER_GLOB))
        if not found:
            raise RegistryError(
                f"Apicurio Registry not found in {self.app_dir}: run `make setup` (it fetches "
                "it from Maven Central with jvm/schema-registry/pom.xml)"
            )
        return found[-1]

    def java_command(self) -> list[str]:
        props = {
            "quarkus.http.host": HOST,
            "quarkus.http.port": str(self.port),
            "java.io.tmpdir": str(self.home / "tmp"),
            "vertx.cacheDirBase": str(self.home / "tmp" / "vertx"),
        }
        if self.users:
            props.update({
                "quarkus.security.users.embedded.enabled": "true",
                "quarkus.security.users.embedded.plain-text": "true",
                "quarkus.http.auth.basic": "true",
                "quarkus.http.auth.permission.authenticated.paths": "/*",
                "quarkus.http.auth.permission.authenticated.policy": "authenticated",
            })  # fmt: skip
            for user, password in self.users.items():
                props[f"quarkus.security.users.embedded.users.{user}"] = password
        cmd = [
            java_bin(),
            f"-Xmx{self.heap}",
            "-XX:+UseSerialGC",  # few GC threads: the machine is small and shared
            "-XX:TieredStopAtLevel=1",  # C1 only: quick start, little JIT CPU
            f"{MARK}{self.home}",
        ]
        if self.owner_pid is not None:
            cmd.append(f"{OWNER}{self.owner_pid}")
        cmd += [f"-D{k}={v}" for k, v in props.items()]
        return [*cmd, "-jar", str(self.runner_jar())]

    def _auth_header(self) -> dict[str, str]:
        if not self.users:
            return {}
        user, password = next(iter(self.users.items()))
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        return {"Authorization": f"Basic {token}"}

    def is_ready(self) -> bool:
        """The API answers a subject listing (with the first user's credentials; without
        users given, "401: log in" counts too: it answers)."""
        url = self.url + "/subjects"  # http://127.0.0.1
        request = urllib.request.Request(url, headers=self._auth_header())  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=2) as response:  # noqa: S310
                return bool(response.status == 200)
        except urllib.error.HTTPError as exc:
            return exc.code == 401 and not self.users
        except (urllib.error.URLError, OSError):
            return False

    def running_pid(self) -> int | None:
        try:
            pid = int(self.pid_path.read_text().strip())
        except (OSError, ValueError):
            return None
        cmd = process_cmdline(pid)
        if cmd is not None and f"{MARK}{self.home}" in cmd and process_alive(pid):
            return pid
        return None

    def start(self, *, timeout: float = 120.0, quiet: bool = False) -> SchemaRegistry:
        """Start the registry (a running one of this home is stopped first: it may have
        other users) and wait until its API answers."""
        for pid in reap_orphans():
            _say(quiet, f"stopped orphaned test registry pid {pid}")
        existing = self.running_pid()
        if existing is not None:
            terminate_process(existing, 30)
        if port_open(HOST, self.port):
            raise RegistryError(
                f"port {HOST}:{self.port} is already in use by another program: stop it, or "
                "pick another port (`--port N`, env ANYCDC_REGISTRY_PORT)"
            )
        (self.home / "tmp").mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as out:
            self._popen = subprocess.Popen(
                self.java_command(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.home,
                start_new_session=True,
                preexec_fn=set_parent_death_signal if self.owner_pid == os.getpid() else None,
            )
        pid = self._popen.pid
        self.pid_path.write_text(f"{pid}\n")
        (self.home / "registry.json").write_text(
            json.dumps({"pid": pid, "port": self.port, "url": self.url}, indent=2) + "\n"
        )
        _say(quiet, f"starting pid {pid} on {self.url} (home {self.home})")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._popen.poll() is not None:
                break
            if self.is_ready():
                _say(quiet, f"ready on {self.url}")
                return self
            time.sleep(0.3)
        tail = self.log_tail()
        self.stop(quiet=True)
        raise RegistryError(
            f"the schema registry did not answer on {self.url} within {timeout:.0f}s.\n"
            f"--- last lines of {self.log_path} ---\n{tail}"
        )

    def stop(self, *, timeout: float = 30.0, quiet: bool = False) -> bool:
        """Stop it (SIGTERM, then SIGKILL after ``timeout``). False if none was running."""
        pid = self.running_pid()
        if pid is None and self._popen is not None and self._popen.poll() is None:
            pid = self._popen.pid
        if pid is None:
            _say(quiet, "not running")
            return False
        popen = self._popen if self._popen is not None and self._popen.pid == pid else None
        killed = terminate_process(pid, timeout, popen)
        _say(quiet, f"{'killed' if killed else 'stopped'} pid {pid}")
        if self._popen is not None:
            with contextlib.suppress(Exception):
                self._popen.wait(timeout=5)
            self._popen = None
        with contextlib.suppress(FileNotFoundError):
            self.pid_path.unlink()
        return True

    def access_log(self) -> list[tuple[str, str, int, str]]:
        """(method, path, status, user agent) of every request served, oldest first
        (Quarkus' access log in the registry's console)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return []
        found = (_ACCESS.search(line) for line in text.splitlines())
        return [(m[1], m[2], int(m[3]), m[4]) for m in found if m is not None]

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log written)"

    def status(self) -> dict[str, Any]:
        pid = self.running_pid()
        return {
            "running": pid is not None,
            "pid": pid,
            "url": self.url,
            "ready": pid is not None and self.is_ready(),
            "home": str(self.home),
            "log": str(self.log_path),
        }


def _say(quiet: bool, message: str) -> None:
    if not quiet:
        print(f"registry: {message}", file=sys.stderr)


# ---------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("start", "stop", "status"))
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help=f"port on 127.0.0.1 (default $ANYCDC_REGISTRY_PORT or {DEFAULT_PORT}; 0 = any free)",
    )
    parser.add_argument(
        "--home", type=Path, default=None, help="pid file and logs (default var/schema-registry)"
    )
    parser.add_argument(
        "--user",
        action="append",
        default=[],
        metavar="USER:PASSWORD",
        help="start: require HTTP basic auth with this user (repeatable; for tests: plain text)",
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait (start)")


def run(args: argparse.Namespace) -> int:
    home = args.home or paths.registry_home()
    port = (args.port if args.port != 0 else free_port()) if args.port is not None else None
    recorded = _recorded_port(home) if port is None and args.action != "start" else None
    users = dict(u.split(":", 1) for u in args.user if ":" in u)
    registry = (
        SchemaRegistry(home=home, users=users)
        if port is None and recorded is None
        else SchemaRegistry(home=home, port=port or recorded or DEFAULT_PORT, users=users)
    )
    try:
        if args.action == "start":
            registry.start(timeout=args.timeout)
            print(registry.url)
        elif args.action == "stop":
            registry.stop()
        else:
            state = registry.status()
            for key, value in state.items():
                print(f"{key:8} {value}")
            return 0 if state["running"] else 3
    except RegistryError as exc:
        print(f"registry: {exc}", file=sys.stderr)
        return 1
    return 0


def _recorded_port(home: Path) -> int | None:
    try:
        return int(json.loads((home / "registry.json").read_text())["port"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m anycdc.devtools.schema_registry",
        description="The project's local schema registry (Apicurio, Confluent API, 127.0.0.1).",
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
