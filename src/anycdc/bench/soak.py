"""``make soak``: many ``kill -9`` and a long, wide stream — and still exact tables.

Two phases, each on its own topic and target, each ending with ``anycdc verify``:

- **kills** (the fault suite's kill test, longer): a stream of ``--kill-events`` over
  ``--kill-tables`` tables in small micro-batches (``--kill-trigger``), and ``anycdc
  run`` killed with SIGKILL ``--kills`` times (50) at every kind of moment (see
  :mod:`anycdc.devtools.chaos`: before, during and after a batch's commits, at
  startup), then run to the end;
- **scale** (the issue's scale check): ``--events`` (10,000,000) over ``--tables``
  (200) in ``--max-offsets-per-trigger`` batches, one run, its memory sampled: it must
  stay flat as the event count grows.

On a 2-core laptop that is ~2 hours (docs/FAULTS.md lists what was run and measured);
``--phase kills`` or ``--phase scale`` runs one, and every size has a flag.

Steps per phase: the simulated stream produced lazily into the soak's own broker on
127.0.0.1 (with re-deliveries and swapped neighbours, as a partitioned topic delivers),
the ground truth written beside it, the runs, ``verify``. Prints events/s, the peak
memory (PSS) of the driver JVM and the Python workers, memory at every tenth of the
final run, and the verify result; ``WORK_DIR/soak.json`` has the figures.

Run: ``python -m anycdc.bench.soak [--phase both|kills|scale] [--kills K] [--events N] ...``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anycdc.bench.pipeline import MemorySampler
from anycdc.devtools.chaos import ChaosRunner, last_batch
from anycdc.devtools.kafka import create_topic, produce
from anycdc.scratch import tool_scratch
from anycdc.simulate import Stream, Workload, partition_of, write_truth

TOPIC = "anycdc-soak"


def faulty(
    messages: Iterator[tuple[bytes | None, bytes, int]], rng: random.Random, duplicates: float,
    reorder: float, counts: dict[str, int],
) -> Iterator[tuple[bytes | None, bytes, int]]:  # fmt: skip
    """Re-deliver recent messages and swap neighbours, holding only a few in memory."""
    recent: list[tuple[bytes | None, bytes, int]] = []
    held: tuple[bytes | None, bytes, int] | None = None
    for item in messages:
        if held is not None:
            yield item
            yield held
            held = None
        elif reorder and rng.random() < reorder:
            held = item
            counts["reordered"] += 1
        else:
            yield item
        recent.append(item)
        if len(recent) > 256:
            del recent[:128]
        if duplicates and rng.random() < duplicates:
            yield rng.choice(recent)
            counts["duplicates"] += 1
    if held is not None:
        yield held


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anycdc.bench.soak", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--phase", choices=["both", "kills", "scale"], default="both")
    parser.add_argument("--kills", type=int, default=50, help="kill -9 in the kills phase")
    parser.add_argument("--kill-events", type=int, default=30_000)
    parser.add_argument("--kill-tables", type=int, default=8)
    parser.add_argument("--kill-trigger", type=int, default=500, help="messages per batch")
    parser.add_argument("--events", type=int, default=10_000_000, help="the scale phase's")
    parser.add_argument("--tables", type=int, default=200, help="the scale phase's")
    parser.add_argument("--max-offsets-per-trigger", type=int, default=1_000_000,
                        help="the scale phase's (1,000,000 fits a 4 GiB driver)")  # fmt: skip
    parser.add_argument("--format", default="canal-json")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--duplicates", type=float, default=0.01)
    parser.add_argument("--reorder", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work-dir", type=Path, default=Path("var/soak"))
    args = parser.parse_args(argv)

    from anycdc.devtools.kafka import KafkaBroker, free_port

    phases = []
    if args.phase in ("both", "kills"):
        phases.append(
            Phase("kills", args.kill_events, args.kill_tables, args.kills, args.kill_trigger)
        )
    if args.phase in ("both", "scale"):
        phases.append(Phase("scale", args.events, args.tables, 0, args.max_offsets_per_trigger))
    work = args.work_dir.resolve()
    tool_scratch(work, "python -m anycdc.bench.soak", ("kafka", "kills", "scale", "soak.json"))
    work.mkdir(parents=True)
    broker = KafkaBroker(home=work / "kafka", port=free_port(), controller_port=free_port(),
                         owner_pid=os.getpid())  # fmt: skip
    broker.start(timeout=180, quiet=True)
    results = {}
    try:
        for phase in phases:
            print(f"== {phase.name}: {phase.events:,} events, {phase.tables} tables, "
                  f"{phase.kills} kills, {phase.trigger:,} messages per batch", flush=True)  # fmt: skip
            results[phase.name] = run_phase(phase, broker.bootstrap, work / phase.name, args)
    finally:
        broker.stop(quiet=True)
    (work / "soak.json").write_text(json.dumps(results, indent=2) + "\n")
    for name, result in results.items():
        verdict = "verify OK" if result["ok"] else "FAILED"
        print(f"{name}: {result['events']:,} messages, {result['kills']} kills, "
              f"{result['seconds']:,}s, {verdict}")  # fmt: skip
    return 0 if all(r["ok"] for r in results.values()) else 1


@dataclass(frozen=True)
class Phase:
    """One soak phase: a stream of its own, killed ``kills`` times."""

    name: str
    events: int
    tables: int
    kills: int
    trigger: int


def run_phase(phase: Phase, bootstrap: str, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Produce the phase's stream, run (and kill) the pipeline over it, verify."""
    from anycdc.formats import get_format

    work.mkdir(parents=True)
    topic = f"{TOPIC}-{phase.name}"
    create_topic(bootstrap, topic, args.partitions)
    rows = max(1, min(100, phase.events // (phase.tables * 10)))
    workload = Workload(seed=args.seed, rows=rows, events=phase.events - rows * phase.tables,
                        database="soak", tables=phase.tables)  # fmt: skip
    fmt = get_format(args.format)

    def messages() -> Iterator[tuple[bytes | None, bytes, int]]:
        for event in workload.events(args.format):
            key = fmt.encode_key(event)
            partition = partition_of(key, args.partitions)
            for message in fmt.encode(event):
                yield key, message, partition

    counts = {"duplicates": 0, "reordered": 0}
    started = time.monotonic()
    stream = faulty(messages(), random.Random(args.seed), args.duplicates, args.reorder, counts)
    produced = produce(
        bootstrap, topic, stream,
        progress=lambda n: print(f"  {n:,} produced", flush=True) if n % 500_000 == 0 else None,
    )  # fmt: skip
    print(f"produced {produced:,} messages ({counts}) in {time.monotonic() - started:.0f}s")
    truth = work / "truth"
    write_truth(
        Stream([], workload.truth, workload.tables, 0, counts["duplicates"],
               counts["reordered"]), truth, args.format,
    )  # fmt: skip

    target = work / "lake"
    command = [
        sys.executable, "-m", "anycdc", "run", "--kafka-bootstrap", bootstrap,
        "--topics", topic, "--target", str(target),
        "--max-offsets-per-trigger", str(phase.trigger),
    ]  # fmt: skip
    runner = ChaosRunner(command, target=target, log_dir=work / "logs", run_timeout=6 * 3600)
    started = time.monotonic()
    report = runner.loop(phase.kills, random.Random(args.seed))
    print(report.summary(), flush=True)

    samples: list[tuple[int, int, int]] = []  # (batches committed, jvm PSS, workers PSS)

    def watch(pid: int) -> None:
        now = MemorySampler(pid).sample()
        done = last_batch(runner.checkpoint, "commits")
        samples.append((-1 if done is None else done, now["jvm"], now["python_workers"]))

    final = runner.finish(watch=watch, every=5.0)
    seconds = time.monotonic() - started
    print(f"final run: exit {final.returncode} after {final.seconds:.0f}s")
    print(f"all runs: {produced:,} messages in {seconds:,.0f}s = {produced / seconds:,.0f}/s")
    for index in range(10):
        if samples:
            batch, jvm, workers = samples[min(len(samples) - 1, len(samples) * index // 10)]
            print(f"  final run {index * 10:3d}%: batch {batch:>5}  jvm {jvm / 2**20:,.0f} MiB"
                  f"  workers {workers / 2**20:,.0f} MiB")  # fmt: skip
    verify = subprocess.run(
        [sys.executable, "-m", "anycdc", "verify", "--target", str(target), "--truth", str(truth)],
        capture_output=True, text=True,
    )  # fmt: skip
    print(verify.stdout[-4000:], verify.stderr[-2000:], flush=True)
    return {
        "events": produced, "tables": phase.tables, "kills": report.kills,
        "replayed_batches": report.replayed_batches, "skipped_writes": report.skipped_writes,
        "seconds": round(seconds), "verify_exit": verify.returncode,
        "ok": verify.returncode == 0 and final.returncode == 0,
        "final_run_memory": samples,
    }  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
