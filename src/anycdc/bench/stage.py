"""The worker's decode stage alone: message bytes -> changelog row values, per message.

What a Spark Python worker does per record inside ``mapInArrow``, without Spark:
:class:`~anycdc.spark.decode.ChangelogRows` ``.values`` over the benchmark's generated
messages (:func:`anycdc.bench.decode.messages`: an ``orders`` row of ~10 mixed-type
columns), one stream through one decoder, as a partition is. The Arrow conversion is left
out (the same for any decode).

Two measures:

* wall clock: ``--passes`` passes over the messages after a warm-up pass (caches filled),
  the best pass's time per message (``--cpu``: the process's CPU time instead, less
  disturbed where other work shares the cores);
* instructions (noise-free on a shared machine): run the script under
  ``valgrind --tool=callgrind`` once with ``--passes 0`` and once with ``--passes 1``
  (``--quiet``, no timing): both build the messages and make the warm-up pass, so the
  difference of their totals over the message count is the steady-state cost of one
  message. ``--callgrind`` does both runs (``PYTHONHASHSEED=0``) and prints instructions
  per message.

``--auto`` decodes the same messages with each one's format detected (``--format auto``),
which is what detection costs on top of the named decode.

Run: ``python -m anycdc.bench.stage [--formats canal-json,dts-canal-json] [--messages 1000]
[--passes 20] [--callgrind] [--auto]``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from anycdc.bench.decode import messages
from anycdc.decoding import AUTO
from anycdc.spark.decode import ChangelogRows

DEFAULT_FORMATS = ("canal-json", "dts-canal-json", "drs-json", "drs-json-c")


def stage_pass(format_id: str, data: list[bytes]) -> Callable[[], int]:
    """One pass of the decode stage over ``data`` (one :class:`ChangelogRows`, kept across
    passes as a worker keeps it across chunks; ``format_id`` may be ``auto``); returns the
    rows made."""
    stage = ChangelogRows(format_id, {})
    records = [("bench", 0, n, None, message, None) for n, message in enumerate(data)]

    def run() -> int:
        rows = 0
        for _ in stage.values(records):
            rows += 1
        return rows

    return run


def wall_ns(
    format_id: str, count: int, passes: int, cpu: bool = False, auto: bool = False
) -> float:
    """Nanoseconds per message: the best of ``passes`` passes after a warm-up pass (``cpu``:
    the process's CPU time; ``auto``: the messages' format detected)."""
    data = messages(format_id, count)
    run = stage_pass(AUTO if auto else format_id, data)
    run()
    clock = time.process_time_ns if cpu else time.perf_counter_ns
    best = float("inf")
    for _ in range(passes):
        begin = clock()
        run()
        best = min(best, clock() - begin)
    return best / len(data)


def quiet(format_id: str, count: int, passes: int, auto: bool = False) -> None:
    """Build, warm up, then ``passes`` passes, untimed (what callgrind counts)."""
    run = stage_pass(AUTO if auto else format_id, messages(format_id, count))
    run()
    for _ in range(passes):
        run()


def _callgrind_total(format_id: str, count: int, passes: int, auto: bool) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        command = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
            sys.executable, "-m", "anycdc.bench.stage", "--quiet", "--formats", format_id,
            "--messages", str(count), "--passes", str(passes), *(["--auto"] if auto else []),
        ]  # fmt: skip
        # one hash seed: string hashes order sets and dicts, and so the work done
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        subprocess.run(command, check=True, capture_output=True, env=env)
        with open(out) as handle:
            for line in handle:
                found = re.match(r"(?:summary|totals): (\d+)", line)
                if found:
                    return int(found.group(1))
    raise RuntimeError("no totals in the callgrind output")


def instructions(format_id: str, count: int, auto: bool = False) -> float:
    """Instructions per message in steady state (two callgrind runs, differenced)."""
    base = _callgrind_total(format_id, count, 0, auto)
    more = _callgrind_total(format_id, count, 1, auto)
    return (more - base) / count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--formats", default=",".join(DEFAULT_FORMATS))
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--passes", type=int, default=20)
    parser.add_argument("--quiet", action="store_true", help="no timing (for callgrind)")
    parser.add_argument("--callgrind", action="store_true", help="instructions per message")
    parser.add_argument("--cpu", action="store_true", help="CPU time instead of wall clock")
    parser.add_argument("--auto", action="store_true", help="each message's format detected")
    args = parser.parse_args(argv)
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    for format_id in formats:
        if args.quiet:
            quiet(format_id, args.messages, args.passes, args.auto)
            continue
        name = f"{format_id} (detected)" if args.auto else format_id
        if args.callgrind:
            per = instructions(format_id, args.messages, args.auto)
            print(f"{name}: {per:,.0f} instructions/message", flush=True)
        else:
            per_ns = wall_ns(format_id, args.messages, args.passes, args.cpu, args.auto)
            unit = "CPU us" if args.cpu else "us"
            print(f"{name}: {per_ns / 1000:.2f} {unit}/message", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
