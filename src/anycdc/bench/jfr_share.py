"""``python -m anycdc.bench.jfr_share FILE.jfr [--top N] [--method CLASS.METHOD]...``: where
the stack samples of a Java Flight Recorder recording go.

Made for the recordings of ``python -m anycdc.bench.merge_probe --jfr FILE``: it reads the
``jdk.ExecutionSample`` events (through the JDK's ``jfr print --json``), groups them by thread
as the probe groups CPU (:func:`anycdc.bench.merge_probe.thread_group`, on the thread's Java
name), and prints per group the samples, the share of them inside Spark's code generation
(any frame of ``org.apache.spark.sql.catalyst.expressions.codegen`` or
``WholeStageCodegenExec.doCodeGen``), the share inside each ``--method`` (a frame anywhere in
the stack), and the top frames (the method running when the sample was taken).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from anycdc.bench.merge_probe import thread_group

STACK_DEPTH = 1024  # frames read per sample (jfr print's default is 5)
CODEGEN_PACKAGE = "org.apache.spark.sql.catalyst.expressions.codegen."
DEFAULT_METHODS = (
    "org.apache.spark.sql.catalyst.expressions.codegen.CodeFormatter$.stripExtraNewLinesAndComments",
    "org.apache.spark.sql.catalyst.expressions.codegen.GenerateUnsafeProjection$.create",
    "org.apache.spark.sql.execution.WholeStageCodegenExec.doCodeGen",
)


@dataclass
class Group:
    """The samples of one thread group."""

    samples: int = 0
    codegen: int = 0
    methods: Counter[str] = field(default_factory=Counter)
    top: Counter[str] = field(default_factory=Counter)


def frame_name(frame: dict[str, Any]) -> str:
    """``pkg.Class.method`` of a ``jfr print --json`` frame.

    >>> frame_name({"method": {"type": {"name": "a/b/C$"}, "name": "run"}})
    'a.b.C$.run'
    """
    method = frame["method"]
    return f"{method['type']['name'].replace('/', '.')}.{method['name']}"


def is_codegen(name: str) -> bool:
    return name.startswith(CODEGEN_PACKAGE) or name.endswith("WholeStageCodegenExec.doCodeGen")


def aggregate(events: Iterable[dict[str, Any]], methods: Sequence[str]) -> dict[str, Group]:
    """Per thread group (and ``ALL``): samples, samples in code generation, samples with
    each of ``methods`` in their stack, top frames."""
    groups: dict[str, Group] = {}
    for event in events:
        values = event["values"]
        thread = values.get("sampledThread") or {}
        frames = (values.get("stackTrace") or {}).get("frames") or []
        if not frames:
            continue
        names = [frame_name(frame) for frame in frames]
        stack = set(names)
        for key in (thread_group(thread.get("javaName") or thread.get("osName") or ""), "ALL"):
            group = groups.setdefault(key, Group())
            group.samples += 1
            group.codegen += any(is_codegen(name) for name in stack)
            group.methods.update(m for m in methods if m in stack)
            group.top[names[0]] += 1
    return groups


def read_samples(path: str) -> list[dict[str, Any]]:
    """The ``jdk.ExecutionSample`` events of a recording (the JDK's ``jfr`` tool)."""
    jfr = shutil.which("jfr")
    if jfr is None:
        raise SystemExit("the JDK's `jfr` tool is not on PATH")
    command = [jfr, "print", "--json", "--stack-depth", str(STACK_DEPTH)]
    printed = subprocess.run(
        [*command, "--events", "jdk.ExecutionSample", path],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    events: list[dict[str, Any]] = json.loads(printed)["recording"]["events"]
    return events


def report(groups: dict[str, Group], methods: Sequence[str], top: int) -> list[str]:
    """The printed lines: per group, samples and shares, then the top frames of ``ALL``."""
    lines = []
    order = sorted(groups, key=lambda key: (key != "ALL", -groups[key].samples))
    for key in order:
        group = groups[key]
        shares = [f"codegen {group.codegen} ({100 * group.codegen / group.samples:.1f}%)"]
        for method in methods:
            count = group.methods[method]
            shares.append(f"{method.rsplit('.', 2)[-2]}.{method.rsplit('.', 1)[-1]} {count} "
                          f"({100 * count / group.samples:.1f}%)")  # fmt: skip
        lines.append(f"{key}: {group.samples} samples; " + "; ".join(shares))
    everything = groups.get("ALL")
    if everything is not None and top:
        lines.append(f"top frames (of {everything.samples} samples):")
        for name, count in everything.top.most_common(top):
            lines.append(f"  {count:6d} {100 * count / everything.samples:5.1f}%  {name}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m anycdc.bench.jfr_share",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("recording")
    parser.add_argument("--top", type=int, default=15, help="top frames shown (0: none)")
    parser.add_argument(
        "--method",
        action="append",
        metavar="CLASS.METHOD",
        help="share of samples with this frame in their stack (repeat; default: three of "
        "Spark's code generation)",
    )
    args = parser.parse_args(argv)
    methods = tuple(args.method or DEFAULT_METHODS)
    groups = aggregate(read_samples(args.recording), methods)
    print("\n".join(report(groups, methods, args.top)))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
