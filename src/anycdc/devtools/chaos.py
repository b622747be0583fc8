"""Crash the pipeline on purpose: ``kill -9`` ``anycdc run`` at chosen moments, restart, repeat.

Used by the fault suite (``tests/faults``) and by ``make soak``. A moment is
picked relative to what the run is doing, read from the files it writes
(polled every 20 ms), so kills land in every part of a micro-batch:

``startup``
    a random time after the process starts (usually before the first batch);
``planned``
    just after Spark wrote ``offsets/N`` — the batch is planned, nothing applied;
``mid-batch``
    just after a Delta commit of batch N (a table, the changelog ...), before the
    batch is marked done — the replay must skip what was written;
``appended``
    at the system tables' crash point (:data:`CRASH_ENV`) after an append's data files
    (the changelog's, a batch record's) are written and before their commit, where
    :meth:`~anycdc.spark.commit.DeltaTables.append_once` writes it (the replay writes it
    again);
``committed``
    just after ``commits/N`` — the batch is done, the next one is starting;
``deferred``
    just after a Delta commit made while no batch is in progress, once a batch of
    this start is done — a table applied between batches or by the final apply of
    an ``available-now`` run (its pending changelog rows; the restart must apply
    them exactly once);
``written``
    at the batched engine's crash point (:data:`CRASH_ENV`) after a table's data files are
    written and before their commit (they stay orphaned, for VACUUM; the replay writes the
    table again);
``between-tables``
    right after a target table's commit while a batch is in progress (no jitter): a table
    applied inside the batch (``freshness 0``: the batch's other tables are not applied
    yet), or by the apply beside ingest while the next batch ingests (its other tables and
    its ledger row not written yet, the batch's changelog rows being written);
``before-ledger``
    at the pipeline's own crash point (:data:`CRASH_ENV`) after an apply's tables are
    committed and before its ledger row: the tables hold the write, the ledger does not.

A small random delay (``jitter``) follows the trigger. The whole process group
is killed (driver JVM and Python workers too), as when a container dies.

Idempotency is measured from the Delta logs: before each restart, the batch
Spark will replay is the one with an ``offsets`` file and no ``commits`` file;
every table that already holds a ``txn`` action for that batch is a write Delta
must skip. :func:`duplicate_txns` then proves that no (table, appId, version)
was committed twice.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from anycdc.faults import CRASH_ENV, CRASH_POINTS

MOMENTS: Final = (
    "startup", "planned", "mid-batch", "appended", "committed", "deferred", "written",
    "between-tables", "before-ledger",
)  # fmt: skip
POLL_SECONDS: Final = 0.02
UNJITTERED: Final = ("between-tables",)


@dataclass(frozen=True)
class Outcome:
    """One run of the pipeline process: killed at ``moment`` or finished by itself."""

    moment: str
    killed: bool
    returncode: int
    seconds: float
    pending_batch: int | None = None  # the batch the next start replays
    writes_to_skip: int = 0  # Delta writes of that batch already committed


@dataclass
class ChaosReport:
    """What a kill/restart loop did, in figures."""

    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def kills(self) -> int:
        return sum(o.killed for o in self.outcomes)

    @property
    def replayed_batches(self) -> int:
        return sum(o.pending_batch is not None for o in self.outcomes if o.killed)

    @property
    def skipped_writes(self) -> int:
        return sum(o.writes_to_skip for o in self.outcomes if o.killed)

    def by_moment(self) -> dict[str, int]:
        return dict(Counter(o.moment for o in self.outcomes if o.killed))

    def summary(self) -> str:
        moments = ", ".join(f"{k} {v}" for k, v in sorted(self.by_moment().items()))
        return (
            f"{self.kills} kill -9 ({moments}); {self.replayed_batches} batches replayed after a "
            f"crash, {self.skipped_writes} Delta writes in them skipped as already committed"
        )


# --------------------------------------------------------------------------- files the run writes
def _numbered(folder: Path) -> list[int]:
    if not folder.is_dir():
        return []
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())


def last_batch(checkpoint: Path, kind: str) -> int | None:
    """The newest batch id in ``<checkpoint>/offsets`` or ``<checkpoint>/commits``."""
    ids = _numbered(checkpoint / kind)
    return ids[-1] if ids else None


def delta_logs(root: Path) -> Iterator[Path]:
    """Every ``_delta_log`` folder under ``root`` (target tables and ``_anycdc`` tables)."""
    for log in root.rglob("_delta_log"):
        if log.is_dir():
            yield log


def _commit_files(root: Path, tables_only: bool = False) -> int:
    return sum(
        1
        for log in delta_logs(root)
        if not (tables_only and "_anycdc" in log.parts)
        for p in log.iterdir()
        if p.name.endswith(".json")
    )


def txns(log: Path) -> Iterator[tuple[str, int]]:
    """The (appId, version) of every idempotent-write marker in one table's Delta log."""
    for commit in sorted(log.glob("*.json")):
        # newlines only: str.splitlines() also splits inside the stats of a string like "a\u2028b"
        for line in commit.read_text(encoding="utf-8").split("\n"):
            action = json.loads(line) if line.strip() else {}
            txn = action.get("txn")
            if txn:
                yield str(txn["appId"]), int(txn["version"])


def writes_of_batch(root: Path, batch: int) -> int:
    """How many Delta writes of ``batch`` are already committed under ``root``."""
    return sum(1 for log in delta_logs(root) for _, version in txns(log) if version == batch)


def duplicate_txns(root: Path) -> list[str]:
    """(table, appId, version) committed more than once: each would be a write done twice."""
    found = []
    for log in delta_logs(root):
        counts = Counter(txns(log))
        found += [f"{log.parent}: {app}@{v} x{n}" for (app, v), n in counts.items() if n > 1]
    return found


# --------------------------------------------------------------------------- the loop
class ChaosRunner:
    """Start ``command`` (an ``anycdc run`` that writes to ``target``), kill it, repeat.

    Example (a sketch; the fault suite runs it for real)::

        runner = ChaosRunner(["anycdc", "run", "--source-dir", "in", "--target", "lake"],
                             target=Path("lake"), log_dir=Path("logs"))
        report = runner.loop(kills=10, rng=random.Random(7))
        print(report.summary())
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        target: Path,
        log_dir: Path,
        checkpoint: Path | None = None,
        env: dict[str, str] | None = None,
        startup_window: float = 20.0,
        jitter: float = 0.3,
        run_timeout: float = 600.0,
    ) -> None:
        self.command = list(command)
        self.target = target
        self.checkpoint = checkpoint or target / "_anycdc" / "checkpoint"
        self.log_dir = log_dir
        self.env = env
        self.startup_window = startup_window
        self.jitter = jitter
        self.run_timeout = run_timeout
        self.runs = 0

    def _spawn(self, moment: str | None = None) -> subprocess.Popen[bytes]:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        env = dict(self.env if self.env is not None else os.environ)
        env.pop(CRASH_ENV, None)
        if moment in CRASH_POINTS:
            env[CRASH_ENV] = moment  # the process kills itself there
        self.runs += 1
        log = (self.log_dir / f"run-{self.runs:03d}.log").open("wb")
        try:
            return subprocess.Popen(
                self.command,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # its own process group: JVM and workers die with it
            )
        finally:
            log.close()

    def _triggered(
        self,
        moment: str,
        baseline: tuple[int | None, int | None, int],
        seen: dict[str, int],
    ) -> bool:
        offsets, commits, files = baseline
        if moment == "planned":
            return (last_batch(self.checkpoint, "offsets") or -1) > (offsets or -1)
        if moment == "committed":
            return (last_batch(self.checkpoint, "commits") or -1) > (commits or -1)
        planned = last_batch(self.checkpoint, "offsets")
        done = last_batch(self.checkpoint, "commits")
        in_batch = planned is not None and (done is None or planned > done)
        if moment == "between-tables":
            tables = seen.setdefault("tables", _commit_files(self.target, tables_only=True))
            return in_batch and _commit_files(self.target, tables_only=True) > tables
        if moment == "deferred":
            # a Delta commit after the newest batch was marked done (or after the start, when
            # no batch comes): an apply outside a micro-batch
            if in_batch:
                return False
            newest = done if done is not None else -1
            if seen.setdefault("done", commits if commits is not None else -1) != newest:
                seen["done"], seen["files"] = newest, _commit_files(self.target)
                return False
            return _commit_files(self.target) > seen.setdefault("files", files)
        # mid-batch: a Delta commit while a batch is planned and not yet done
        return in_batch and _commit_files(self.target) > files

    def run_once(self, moment: str, rng: random.Random) -> Outcome:
        """One start; killed at ``moment`` unless the run finishes (or fails) first."""
        baseline = (
            last_batch(self.checkpoint, "offsets"),
            last_batch(self.checkpoint, "commits"),
            _commit_files(self.target),
        )
        started = time.monotonic()
        deadline = started + (
            rng.uniform(1.0, self.startup_window) if moment == "startup" else self.run_timeout
        )
        process = self._spawn(moment)
        kill = False
        seen: dict[str, int] = {}
        while process.poll() is None:
            now = time.monotonic()
            if now >= deadline:
                kill = True
                break
            if (
                moment != "startup"
                and moment not in CRASH_POINTS
                and self._triggered(moment, baseline, seen)
            ):
                if moment not in UNJITTERED:
                    time.sleep(rng.uniform(0.0, self.jitter))
                kill = True
                break
            time.sleep(POLL_SECONDS)
        if kill and process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        returncode = process.wait()
        _wait_group_gone(process.pid)
        seconds = time.monotonic() - started
        killed = returncode == -signal.SIGKILL
        pending = None
        skip = 0
        if killed:
            planned = last_batch(self.checkpoint, "offsets")
            done = last_batch(self.checkpoint, "commits")
            if planned is not None and (done is None or planned > done):
                pending = planned
                skip = writes_of_batch(self.target, planned)
        return Outcome(moment, killed, returncode, seconds, pending, skip)

    def loop(
        self,
        kills: int,
        rng: random.Random,
        max_runs: int | None = None,
        moments_of: Sequence[str] = MOMENTS,
    ) -> ChaosReport:
        """Kill the run ``kills`` times (the ``moments_of`` in rotation, shuffled)."""
        report = ChaosReport()
        moments = [moments_of[i % len(moments_of)] for i in range(kills)]
        rng.shuffle(moments)
        # a start waits for its final apply (after the last batch) to be killed ``deferred``:
        # those kills come last, while the others still have batches to land in
        moments.sort(key=lambda moment: moment == "deferred")
        budget = max_runs or kills * 3
        while report.kills < kills and len(report.outcomes) < budget:
            outcome = self.run_once(moments[report.kills], rng)
            report.outcomes.append(outcome)
            if not outcome.killed:
                break  # finished (or failed) before the kill: nothing left to crash
        return report

    def finish(self, watch: Callable[[int], None] | None = None, every: float = 2.0) -> Outcome:
        """A last run, never killed, that must end by itself (``watch(pid)`` every ``every`` s)."""
        started = time.monotonic()
        process = self._spawn()
        while process.poll() is None:
            if time.monotonic() - started > self.run_timeout:
                os.killpg(process.pid, signal.SIGKILL)
                break
            if watch is not None:
                watch(process.pid)
            time.sleep(every)
        returncode = process.wait()
        return Outcome("finish", False, returncode, time.monotonic() - started)


def _wait_group_gone(pgid: int, timeout: float = 30.0) -> None:
    """Wait until no process of the group is left (the next run must not race a dying JVM)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        except PermissionError:  # pragma: no cover - a reused group id we do not own
            return
        time.sleep(0.05)
