"""The benchmark's memory sampler: each process of the tree counted once, by kind."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from anycdc.bench import pipeline as bench
from anycdc.bench.pipeline import MemorySampler

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")


@pytest.fixture
def tree() -> Iterator[tuple[int, int]]:
    """A parent process (the sampler's root) with one child holding ~64 MiB, so the child's
    RSS stands out and nothing else of the test run is in the tree."""
    hold = "import time; block = bytearray(64 << 20); time.sleep(60)"
    spawn = f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {hold!r}]); time.sleep(60)"
    parent = subprocess.Popen([sys.executable, "-c", spawn])
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            kids = bench._children(parent.pid)
            if kids and bench._pss_and_kind(kids[0])[0] >= 60 << 20:
                break
            time.sleep(0.05)
        yield parent.pid, kids[0]
    finally:
        for pid in bench._children(parent.pid):
            os.kill(pid, 9)
        parent.kill()
        parent.wait()


def test_a_child_is_counted_once_by_kind(tree: tuple[int, int]) -> None:
    root, child = tree
    rss = bench._pss_and_kind(child)[0]
    sample = MemorySampler(root).sample()
    assert sample["jvm"] == 0
    assert rss <= sample["python_workers"] < 2 * rss


def test_a_child_listed_under_two_threads_is_counted_once(
    tree: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # /proc lists a child under the thread that forked it; a child handed to another thread
    # can be read under both: the sampler once reported the JVM at twice its size
    root, child = tree
    listed = bench._children
    monkeypatch.setattr(
        bench, "_children", lambda pid: listed(pid) * 2 if pid == root else listed(pid)
    )
    rss = bench._pss_and_kind(child)[0]
    assert MemorySampler(root).sample()["python_workers"] < 2 * rss


def test_pages_a_forked_worker_shares_with_its_parent_are_counted_once() -> None:
    # Spark forks its Python workers from one daemon: summed RSS counted the daemon's pages
    # once per worker (the bench printed 4.7 GiB of workers); PSS splits shared pages
    fork = "import os, time; block = bytearray(os.urandom(1 << 20)) * 64; os.fork(); time.sleep(60)"
    root = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys, time; "
            f"subprocess.Popen([sys.executable, '-c', {fork!r}]); time.sleep(60)",
        ]
    )
    try:
        deadline = time.monotonic() + 20
        tree: list[int] = []
        while time.monotonic() < deadline:
            tree = [p for c in bench._children(root.pid) for p in [c, *bench._children(c)]]
            if len(tree) == 2 and all(bench._pss_and_kind(p)[0] >= 30 << 20 for p in tree):
                break
            time.sleep(0.05)
        assert len(tree) == 2, tree
        block = 64 << 20
        rss = sum(bench._proc_field_kib(f"/proc/{p}/status", "VmRSS:") << 10 for p in tree)
        assert rss >= 2 * block  # what summing RSS reported
        assert block <= MemorySampler(root.pid).sample()["python_workers"] < 1.5 * block
    finally:
        for pid in [p for c in bench._children(root.pid) for p in [c, *bench._children(c)]]:
            os.kill(pid, 9)
        root.kill()
        root.wait()


def test_a_jvm_is_sized_by_its_resident_pages(tmp_path: Path) -> None:
    # a JVM's PSS is a walk of every page it has (22-43 ms for a 1.7 GB driver, twice a
    # second: ~14% of a core taken from the run being measured); it shares no pages, so
    # its RSS counter says the same. Here a "java" holds 64 MiB it shares with a fork of
    # itself: its PSS is about half of that, its RSS all of it
    java = tmp_path / "java"
    java.symlink_to(sys.executable)
    fork = "import os, time; block = bytearray(os.urandom(1 << 20)) * 64; os.fork(); time.sleep(60)"
    process = subprocess.Popen([str(java), "-c", fork])
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(bench._children(process.pid)) < 1:
            time.sleep(0.05)
        while time.monotonic() < deadline:
            rss = bench._proc_field_kib(f"/proc/{process.pid}/status", "VmRSS:") << 10
            if rss >= 64 << 20:
                break
            time.sleep(0.05)
        size, kind = bench._pss_and_kind(process.pid)
        assert kind == "jvm"
        assert size >= 64 << 20  # its PSS would be ~32 MiB plus what is its own
        assert bench._proc_field_kib(f"/proc/{process.pid}/smaps_rollup", "Pss:") << 10 < size
    finally:
        for pid in bench._children(process.pid):
            os.kill(pid, 9)
        process.kill()
        process.wait()


def test_programs_are_told_apart_by_name_not_by_path() -> None:
    jdk = "/usr/lib/jvm/java-17-openjdk-amd64"
    assert bench.process_kind(f"{jdk}/bin/java -cp hive-jackson/* org.apache.spark.deploy") == "jvm"
    assert bench.process_kind("/usr/bin/java -Xmx512m kafka.Kafka") == "jvm"
    assert bench.process_kind(f"{jdk}/lib/jspawnhelper 17.0.15+6:3:4") == "helper"
    assert bench.process_kind("/work/.venv/bin/python -m pyspark.daemon") == "python"


def test_a_jvm_child_being_spawned_is_not_counted_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # the JVM spawns Python workers through jspawnhelper; until the child runs it, /proc
    # shows it with the JVM's command line and the JVM's RSS: a sample caught in that
    # window reported the driver at twice its size (9.3 GiB for a 4.5 GiB JVM)
    gib = 1 << 30
    table = {  # pid: (rss, command line, children)
        1: (100 << 20, "python -m anycdc bench", [2, 9]),
        2: (4 * gib, "/usr/bin/java -Xmx4g spark", [3, 4, 5]),
        3: (4 * gib, "/usr/bin/java -Xmx4g spark", []),  # spawned, not yet running its program
        4: (1 << 20, "/usr/lib/jvm/x/lib/jspawnhelper 17", []),
        5: (60 << 20, "python -m pyspark.daemon", [6]),
        6: (70 << 20, "python -m pyspark.worker", []),
        9: (300 << 20, "/usr/bin/java -Xmx512m kafka.Kafka", []),  # the broker: a JVM of its own
    }
    monkeypatch.setattr(bench, "_children", lambda pid: table[pid][2])
    monkeypatch.setattr(
        bench, "_pss_and_kind", lambda pid: (table[pid][0], bench.process_kind(table[pid][1]))
    )
    sample = MemorySampler(1).sample()
    assert sample["jvm"] == 4 * gib + (300 << 20)
    assert sample["python_workers"] == (60 << 20) + (70 << 20)
    assert sample["driver_python"] == 100 << 20
