"""The benchmark's memory sampler: each process of the tree counted once, by kind."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

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
            if kids and bench._rss_and_kind(kids[0])[0] >= 60 << 20:
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
    rss = bench._rss_and_kind(child)[0]
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
    rss = bench._rss_and_kind(child)[0]
    assert MemorySampler(root).sample()["python_workers"] < 2 * rss
