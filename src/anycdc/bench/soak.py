"""``make soak``: a long stream, many tables, many ``kill -9`` — and still exact tables.

Defaults are the issue's scale check: 10,000,000 events over 200 tables, 50
kills. On a 2-core laptop that is hours; ``--events``/``--tables``/``--kills``
scale it down (the README lists what was run and measured).

Steps: a broker of its own on 127.0.0.1; the simulated stream produced lazily
(with re-deliveries and swapped neighbours, as a partitioned topic delivers);
the ground truth written beside it; ``anycdc run`` killed with SIGKILL
``kills`` times at every kind of moment (see :mod:`anycdc.devtools.chaos`) and
then run to the end while its memory is sampled; ``anycdc verify``. Prints
events/s, peak memory (PSS) of the driver JVM and the Python workers per run, memory at
every tenth of the final run (flat is the requirement), and the verify result.

Run: ``python -m anycdc.bench.soak [--events N] [--tables T] [--kills K]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from anycdc.bench.pipeline import MemorySampler
from anycdc.devtools.chaos import ChaosRunner, last_batch
from anycdc.devtools.kafka import create_topic, produce
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
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--format", default="canal-json")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--max-offsets-per-trigger", type=int, default=250_000)
    parser.add_argument("--duplicates", type=float, default=0.01)
    parser.add_argument("--reorder", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work-dir", type=Path, default=Path("var/soak"))
    args = parser.parse_args(argv)

    from anycdc.devtools.kafka import KafkaBroker, free_port
    from anycdc.formats import get_format

    work = args.work_dir.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    broker = KafkaBroker(home=work / "kafka", port=free_port(), controller_port=free_port(),
                         owner_pid=os.getpid())  # fmt: skip
    broker.start(timeout=180, quiet=True)
    try:
        create_topic(broker.bootstrap, TOPIC, args.partitions)
        rows = max(1, min(100, args.events // (args.tables * 10)))
        workload = Workload(seed=args.seed, rows=rows, events=args.events - rows * args.tables,
                            database="soak", tables=args.tables)  # fmt: skip
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
            broker.bootstrap, TOPIC, stream,
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
            sys.executable, "-m", "anycdc", "run", "--kafka-bootstrap", broker.bootstrap,
            "--topics", TOPIC, "--target", str(target),
            "--max-offsets-per-trigger", str(args.max_offsets_per_trigger),
        ]  # fmt: skip
        runner = ChaosRunner(command, target=target, log_dir=work / "logs", run_timeout=6 * 3600)
        started = time.monotonic()
        report = runner.loop(args.kills, random.Random(args.seed))
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
        print(verify.stdout[-4000:], verify.stderr[-2000:])
        summary = {
            "events": produced, "tables": args.tables, "kills": report.kills,
            "replayed_batches": report.replayed_batches, "skipped_writes": report.skipped_writes,
            "seconds": round(seconds), "verify_exit": verify.returncode,
            "final_run_memory": samples,
        }  # fmt: skip
        (work / "soak.json").write_text(json.dumps(summary, indent=2) + "\n")
        return 0 if verify.returncode == 0 and final.returncode == 0 else 1
    finally:
        broker.stop(quiet=True)


if __name__ == "__main__":
    raise SystemExit(main())
