"""The fault suite's Delta-log reading (pure: hand-written logs, no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

from anycdc.devtools.chaos import duplicate_txns, txns, writes_of_batch


def _commit(log: Path, version: int, *actions: dict[str, object]) -> None:
    log.mkdir(parents=True, exist_ok=True)
    # ensure_ascii=False: Delta writes the stats' strings raw, separators like U+2028 included
    text = "\n".join(json.dumps(a, ensure_ascii=False) for a in actions)
    (log / f"{version:020d}.json").write_text(text + "\n", encoding="utf-8")


def _add(value: str) -> dict[str, object]:
    stats = json.dumps({"minValues": {"c_text": value}}, ensure_ascii=False)
    return {"add": {"path": "part-0.parquet", "stats": stats}}


def test_a_line_separator_inside_the_stats_does_not_split_an_action(tmp_path: Path) -> None:
    log = tmp_path / "t" / "_delta_log"
    _commit(log, 0, {"txn": {"appId": "q", "version": 3}}, _add("line\u2028two\x1cthree\x85"))
    assert list(txns(log)) == [("q", 3)]


def test_a_batch_written_twice_to_one_table_is_reported(tmp_path: Path) -> None:
    once, twice = tmp_path / "a" / "_delta_log", tmp_path / "b" / "_delta_log"
    _commit(once, 0, {"txn": {"appId": "q", "version": 1}})
    _commit(twice, 0, {"txn": {"appId": "q", "version": 1}}, _add("x"))
    _commit(twice, 1, {"txn": {"appId": "q", "version": 1}})
    found = duplicate_txns(tmp_path)
    assert len(found) == 1 and "b" in found[0] and "q@1 x2" in found[0]
    assert writes_of_batch(tmp_path, 1) == 3


def test_a_crash_point_kills_its_process_group_only_when_named() -> None:
    """The fault suite's moments inside the pipeline (``ANYCDC_CRASH_AT``): SIGKILL there, and
    nothing at any other point or without the variable."""
    import os
    import signal
    import subprocess
    import sys

    from anycdc.faults import CRASH_ENV

    code = "from anycdc.faults import crash_point; crash_point('written'); print('on')"

    def run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True,
            text=True, start_new_session=True, check=False,
        )  # fmt: skip

    assert run({CRASH_ENV: "written"}).returncode == -signal.SIGKILL
    passed = run({CRASH_ENV: "before-ledger"})
    assert passed.returncode == 0 and passed.stdout.strip() == "on"
