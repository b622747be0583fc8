"""``anycdc run`` stopped by SIGTERM (a container stop, a deploy) ends cleanly and says so.

One process of its own on an interval trigger over a folder of files: after its first
batch is committed it gets SIGTERM. It logs that it is stopping, lets the batch in progress
finish, leaves the rest (batches not begun, tables pending) for the next run, and logs
where it stands; it exits 0 without a traceback. The next run (in this session) resumes
and the table ends exactly as the whole stream says: nothing lost, nothing twice.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.helpers import encode_all, ev, rows, run, small_jvm_args, write_messages

pytestmark = [pytest.mark.spark, pytest.mark.faults]

FILES = 6
WAIT_S = 600  # a cold JVM on a loaded 2-core machine; the test ends as soon as it can


def _row(i: int, name: str) -> dict[str, Any]:
    return {"id": i, "name": name, "qty": i, "price": Decimal("1.10")}


def _stream(src: Path) -> None:
    for n in range(FILES):  # a file a batch: inserts, then updates of the earlier rows
        events = [ev("insert", 100 * n + i, _row(10 * n + i, f"r{n}")) for i in range(3)]
        if n:
            events.append(ev("update", 100 * n + 50, _row(10 * (n - 1), f"u{n}")))
        write_messages(src, f"{n:03}.jsonl", encode_all("canonical-json", events))
    for second, path in enumerate(sorted(src.iterdir())):  # oldest first, in name order
        os.utime(path, (1_700_000_000 + second, 1_700_000_000 + second))


def _wait_for(log: Path, text: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            pytest.fail(f"the run ended before {text!r}:\n{log.read_text(errors='replace')}")
        time.sleep(0.2)
    process.kill()
    pytest.fail(f"no {text!r} in {WAIT_S} s:\n{log.read_text(errors='replace')}")


def test_sigterm_stops_after_the_batch_in_progress_and_the_next_run_resumes(
    spark: Any, tmp_path: Path
) -> None:
    src, out, log = tmp_path / "in", tmp_path / "out", tmp_path / "run.log"
    _stream(src)
    command = [
        sys.executable, "-m", "anycdc", "run", "--source-dir", str(src), "--target", str(out),
        "--trigger", "interval=1s", "--max-files-per-trigger", "1", "--freshness", "1h",
        "--no-progress", "--master", "local[1]", *small_jvm_args(),
    ]  # fmt: skip
    with log.open("wb") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)
    try:
        _wait_for(log, "batch 0:", process)
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=WAIT_S)
    finally:
        if process.poll() is None:
            process.kill()
    text = log.read_text(errors="replace")
    assert code == 0, text
    assert "Traceback" not in text, text
    assert "stopping (SIGTERM)" in text, text
    assert "stopped (SIGTERM): last batch committed" in text, text
    assert "run the same command again to resume" in text, text
    assert "final apply" not in text, text  # the pending table waits for the next run
    commits = out / "_anycdc" / "checkpoint" / "commits"
    committed = sorted(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    assert committed and committed[-1] < FILES - 1, text  # it stopped before the stream's end

    run(spark, src, out)  # the next run: the rest of the stream, then every pending table
    expected = {
        10 * n + i: f"u{n + 1}" if i == 0 and n < FILES - 1 else f"r{n}"
        for n in range(FILES)
        for i in range(3)
    }
    got = rows(spark, out)
    assert {r["id"]: r["name"] for r in got} == expected
    assert len(got) == len(expected)  # no row twice
