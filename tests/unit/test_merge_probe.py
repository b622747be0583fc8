"""The MERGE probe's pure parts: medians over the measured MERGEs and the report lines."""

from __future__ import annotations

import json
import os

import pytest

from anycdc.bench.merge_probe import (
    MergeSample,
    ProbeReport,
    cpu_by_group,
    merge_sql,
    summarize,
    thread_group,
)


def test_the_summary_takes_medians_of_seconds_and_jobs() -> None:
    samples = [
        MergeSample(0, 1, 2.5, 12),
        MergeSample(1, 1, 1.5, 13),
        MergeSample(0, 2, 9.0, 12),
        MergeSample(1, 2, 2.0, 12),
    ]
    summary = summarize(samples)
    assert summary.merges == 4
    assert summary.median_seconds == pytest.approx(2.25)
    assert (summary.min_seconds, summary.max_seconds) == (1.5, 9.0)
    assert summary.median_jobs == 12
    assert (summary.min_jobs, summary.max_jobs) == (12, 13)


def test_no_sample_is_an_error_not_a_zero() -> None:
    with pytest.raises(ValueError, match="no MERGE"):
        summarize([])


def test_the_report_names_versions_zones_and_figures() -> None:
    report = ProbeReport(
        8, 5, 4000, 20000, "local[2]", "4.2.0", "delta-spark_4.2_2.13-4.4.0.jar",
        "Asia/Shanghai", "UTC", summarize([MergeSample(0, 1, 2.28, 13), MergeSample(1, 1, 2.0, 13)]),
    )  # fmt: skip
    first, second = report.lines()
    assert first == (
        "pyspark 4.2.0, delta-spark_4.2_2.13-4.4.0.jar, master local[2], "
        "JVM zone Asia/Shanghai, session zone UTC"
    )
    assert "2 MERGEs (8 tables x 5 rounds, 4,000 rows into 20,000)" in second
    assert "median 2.14 s (min 2.00, max 2.28), jobs 13 (13-13)" in second
    as_json = json.loads(report.as_json())
    assert as_json["summary"]["median_jobs"] == 13
    assert as_json["jvm_zone"] == "Asia/Shanghai"
    assert len(as_json["samples"]) == 0  # samples are given separately


def test_the_merge_guards_every_clause_by_position_like_the_pipeline() -> None:
    sql = merge_sql("/t", "v")
    assert sql.startswith("MERGE INTO delta.`/t` t USING v s ON t.`id` <=> s.`id` ")
    newer = "(s._pos IS NULL OR t._cdc_position IS NULL OR s._pos > t._cdc_position)"
    assert sql.count(newer) == 2
    assert "`name` = CASE WHEN s._full OR s.`_has_name` THEN s.`name` ELSE t.`name` END" in sql
    assert "_cdc_batch = s._batch" in sql


def test_threads_are_grouped_by_what_they_do() -> None:
    # names as /proc shows them: cut to 15 characters
    assert thread_group("Executor task l") == "executor tasks"
    assert thread_group("Executor task i") == "executor tasks"  # Spark 4.2 names idle workers
    assert thread_group("Thread-4") == "driver thread (py4j: planning, Delta)"
    assert thread_group("shuffle-exchang") == "query-stage threads (AQE)"
    assert thread_group("C1 CompilerThre") == "JIT compilers"
    assert thread_group("GC Thread#1") == "GC"
    assert thread_group("dag-scheduler-e") == "other"


def test_cpu_by_group_counts_each_thread_from_its_first_sight_per_merge() -> None:
    tick = os.sysconf("SC_CLK_TCK")
    before = {"1": ("Thread-4", tick), "2": ("Executor task l", 0)}
    after = {
        "1": ("Thread-4", 5 * tick),  # 4 s
        "2": ("Executor task l", tick),  # 1 s
        "3": ("Executor task l", tick),  # started meanwhile: 1 s
        "4": ("C2 CompilerThre", 0),  # idle: left out
    }
    assert cpu_by_group(before, after, merges=2) == {
        "driver thread (py4j: planning, Delta)": 2.0,
        "executor tasks": 1.0,
    }


def test_the_report_names_the_settings_and_the_cpu_by_thread() -> None:
    report = ProbeReport(
        1, 1, 10, 10, "local[2]", "4.2.0", "d.jar", "UTC", "UTC",
        summarize([MergeSample(0, 1, 1.0, 11)]), conf={"spark.sql.codegen.maxFields": "200"},
        thread_cpu_seconds={"executor tasks": 0.46, "JIT compilers": 0.69},
    )  # fmt: skip
    lines = report.lines()
    assert lines[1] == "settings: spark.sql.codegen.maxFields=200"
    assert lines[-1] == "JVM CPU s per MERGE by thread: executor tasks 0.46, JIT compilers 0.69"
