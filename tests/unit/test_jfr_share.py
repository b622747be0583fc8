"""python -m anycdc.bench.jfr_share: samples grouped by thread, code generation's share."""

from __future__ import annotations

from typing import Any

from anycdc.bench.jfr_share import aggregate, report

WRITE = "org.apache.spark.sql.catalyst.expressions.codegen.GenerateUnsafeProjection$.create"


def sample(thread: str, *frames: str) -> dict[str, Any]:
    """One jdk.ExecutionSample as `jfr print --json` prints it (the fields read)."""
    listed = []
    for name in frames:
        cls, method = name.rsplit(".", 1)
        listed.append({"method": {"type": {"name": cls.replace(".", "/")}, "name": method}})
    return {"values": {"sampledThread": {"javaName": thread}, "stackTrace": {"frames": listed}}}


def test_samples_are_grouped_by_thread_and_codegen_is_counted_anywhere_in_the_stack() -> None:
    events = [
        sample("Executor task launch worker for task 0.0", "java.util.regex.Pattern.match", WRITE),
        sample("Executor task launch worker for task 1.0", "a.B.run"),
        sample("Thread-4", "org.apache.spark.sql.execution.WholeStageCodegenExec.doCodeGen"),
        sample("Thread-4"),  # no stack: not counted
    ]
    groups = aggregate(events, [WRITE])
    assert groups["ALL"].samples == 3
    assert groups["ALL"].codegen == 2
    assert groups["executor tasks"].samples == 2
    assert groups["executor tasks"].methods[WRITE] == 1
    assert groups["executor tasks"].top["java.util.regex.Pattern.match"] == 1
    lines = report(groups, [WRITE], top=1)
    assert lines[0] == (
        "ALL: 3 samples; codegen 2 (66.7%); GenerateUnsafeProjection$.create 1 (33.3%)"
    )
    assert lines[-2] == "top frames (of 3 samples):"
