"""The progress bar of ``anycdc run``: backlog from query progress, counts, ETA, rendering,
polling that never breaks a run, and when the CLI shows a bar at all. Pure: no Spark."""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from io import StringIO
from typing import Any

import pytest
from rich.console import Console

from anycdc.cli import build_parser
from anycdc.cli.progress import (
    RunCounts,
    RunProgress,
    decode_json_text,
    eta_seconds,
    format_duration,
    kafka_backlog,
    kafka_offsets,
    query_backlog,
)
from anycdc.cli.run import rich_handler, setup_logging, wants_progress
from anycdc.spark.apply import TableResult
from anycdc.spark.pipeline import BatchMetrics

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def kafka_source(start: Any, end: Any, latest: Any, rows: int = 0) -> dict[str, Any]:
    """A Kafka source entry of ``lastProgress["sources"]``."""
    return {
        "description": "KafkaV2[Subscribe[dts_shop,dts_crm]]",
        "startOffset": start,
        "endOffset": end,
        "latestOffset": latest,
        "numInputRows": rows,
        "inputRowsPerSecond": 120.5,
        "processedRowsPerSecond": 240.0,
        "metrics": {
            "avgOffsetsBehindLatest": "150.0",
            "maxOffsetsBehindLatest": "300",
            "minOffsetsBehindLatest": "0",
        },
    }


def query_progress(batch_id: int, *sources: dict[str, Any], rows: int = 0) -> dict[str, Any]:
    """A ``StreamingQuery.lastProgress`` as Spark reports it (the fields the bar may read)."""
    return {
        "id": "8c8a6ad4-0d46-4f3c-9d7e-2f1c1f1d2a10",
        "runId": "0f3f1e0e-8f5b-4d5e-a1a1-7d1f1c2b3a4d",
        "name": "anycdc",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "batchId": batch_id,
        "batchDuration": 1500,
        "numInputRows": rows,
        "inputRowsPerSecond": 100.0,
        "processedRowsPerSecond": 200.0,
        "durationMs": {"addBatch": 1200, "triggerExecution": 1500},
        "stateOperators": [],
        "sources": list(sources),
        "sink": {"description": "ForeachBatchSink", "numOutputRows": -1},
    }


# pyspark 4 hands the offsets over as str() of Spark's JSON; a first batch has no start
SHOP_END = '{"dts_shop":{"0":400,"1":350},"dts_crm":{"0":250}}'
SHOP_LATEST = '{"dts_shop":{"0":1000,"1":350},"dts_crm":{"0":400}}'
FILE_SOURCE = {
    "description": "FileStreamSource[file:/data/captures]",
    "startOffset": "None",
    "endOffset": '{"logOffset":0}',
    "latestOffset": "None",
    "numInputRows": 5000,
    "inputRowsPerSecond": 0.0,
    "processedRowsPerSecond": 900.0,
    "metrics": {},
}


def batch(batch_id: int, messages: int, events: int, dead: int = 0, *tables: str) -> BatchMetrics:
    return BatchMetrics(
        batch_id,
        messages=messages,
        events=events,
        dead_letters=dead,
        tables=[TableResult(t, f"lake/{t.replace('.', '/')}") for t in tables],
    )


def text_of(console: Console) -> str:
    file = console.file
    assert isinstance(file, StringIO)
    return ANSI.sub("", file.getvalue())


def terminal_console() -> Console:
    return Console(file=StringIO(), force_terminal=True, width=200)


class Clock:
    """A clock the test moves by hand (rates and ETAs are per second)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# ---------------------------------------------------------------------- backlog
def test_kafka_backlog_from_json_string_offsets_over_topics_and_partitions() -> None:
    source = kafka_source("None", SHOP_END, SHOP_LATEST, rows=1000)
    # dts_shop/0: 600 behind, dts_shop/1: caught up, dts_crm/0: 150 behind
    assert kafka_backlog(source) == 750
    assert query_backlog(query_progress(0, source)) == 750


def test_kafka_backlog_from_offsets_as_mappings() -> None:
    source = kafka_source(
        {"dts_shop": {"0": 100}},
        {"dts_shop": {"0": 400, "1": 350}, "dts_crm": {"0": 250}},
        {"dts_shop": {"0": 1000, "1": 350}, "dts_crm": {"0": 400}},
    )
    assert kafka_backlog(source) == 750


def test_offsets_json_encoded_inside_json_are_read() -> None:
    twice = json.dumps(SHOP_LATEST)  # a JSON string whose content is the JSON object
    inner = {"dts_shop": json.dumps({"0": 1000, "1": 350}), "dts_crm": {"0": "400"}}
    assert decode_json_text(twice) == json.loads(SHOP_LATEST)
    assert (
        kafka_offsets(twice)
        == kafka_offsets(inner)
        == {
            ("dts_shop", "0"): 1000,
            ("dts_shop", "1"): 350,
            ("dts_crm", "0"): 400,
        }
    )
    assert kafka_backlog(kafka_source(None, SHOP_END, twice)) == 750


@pytest.mark.parametrize("latest", [None, "None", "null", "", "not json", "[]", "{}"])
def test_a_missing_or_unreadable_latest_offset_means_no_backlog(latest: Any) -> None:
    assert kafka_backlog(kafka_source(None, SHOP_END, latest)) is None
    source = kafka_source(None, SHOP_END, SHOP_LATEST)
    del source["latestOffset"]
    assert kafka_backlog(source) is None
    assert query_backlog(query_progress(3, source)) is None


def test_a_partition_new_since_the_batch_is_left_out_and_nothing_is_negative() -> None:
    source = kafka_source(
        None,
        {"t": {"0": 500, "1": 80}},
        # partition 2 is new (where it starts is unknown); 1 reports below the batch's end
        {"t": {"0": 520, "1": 70, "2": 9000}},
    )
    assert kafka_backlog(source) == 20
    # -2/-1 are Kafka's "earliest"/"latest" placeholders, not positions to count from
    placeholder = kafka_source(None, {"t": {"0": -2, "1": 10}}, {"t": {"0": 700, "1": 15}})
    assert kafka_backlog(placeholder) == 5


def test_a_file_source_has_no_backlog() -> None:
    assert kafka_offsets(FILE_SOURCE["endOffset"]) is None
    assert kafka_backlog(FILE_SOURCE) is None
    assert query_backlog(query_progress(0, FILE_SOURCE)) is None
    assert query_backlog(None) is None
    assert query_backlog(query_progress(0)) is None  # no sources listed


def test_every_source_must_be_known_for_a_query_backlog() -> None:
    kafka = kafka_source(None, SHOP_END, SHOP_LATEST)
    assert query_backlog(query_progress(1, kafka, kafka)) == 1500
    assert query_backlog(query_progress(1, kafka, FILE_SOURCE)) is None


# ---------------------------------------------------------------------- arithmetic
def test_eta_and_its_format() -> None:
    assert eta_seconds(done=250, total=1000, rate=50.0) == 15.0
    assert eta_seconds(done=1000, total=900, rate=50.0) == 0.0  # never negative
    assert eta_seconds(done=250, total=None, rate=50.0) is None
    assert eta_seconds(done=0, total=1000, rate=0.0) is None
    assert format_duration(15.0) == "0:00:15"
    assert format_duration(3 * 3600 + 4 * 60 + 5.4) == "3:04:05"
    assert format_duration(None) == "-:--:--"


def test_the_total_is_messages_done_by_that_progress_plus_its_backlog() -> None:
    counts = RunCounts(started=0.0)
    counts.add_batch(0, messages=250, events=600, dead_letters=0, tables=["shop.orders"])
    counts.add_query_progress(query_progress(0, kafka_source(None, SHOP_END, SHOP_LATEST)))
    assert counts.total == 250 + 750
    # batch 1 is done before Spark reports its progress: its messages were in batch 0's
    # backlog already, so the total must not grow by them
    counts.add_batch(1, messages=300, events=700, dead_letters=2, tables=["shop.items"])
    assert counts.total == 1000
    # ... the poller reads that same lastProgress again meanwhile
    counts.add_query_progress(query_progress(0, kafka_source(None, SHOP_END, SHOP_LATEST)))
    assert counts.total == 1000
    assert counts.messages == 550
    # batch 1's progress: 450 behind now
    later = kafka_source(SHOP_END, '{"t":{"0":550}}', '{"t":{"0":1000}}')
    counts.add_query_progress(query_progress(1, later))
    assert counts.total == 550 + 450
    assert counts.eta(now=11.0) == pytest.approx(450 / (550 / 11.0))


def test_an_unknown_backlog_keeps_the_last_total_and_the_total_never_lags_done() -> None:
    counts = RunCounts(started=0.0)
    counts.add_batch(0, messages=100, events=100, dead_letters=0, tables=[])
    counts.add_query_progress(
        query_progress(0, kafka_source(None, '{"t":{"0":100}}', '{"t":{"0":150}}'))
    )
    assert counts.total == 150
    counts.add_query_progress(query_progress(1, kafka_source(None, '{"t":{"0":100}}', None)))
    assert counts.total == 150
    counts.add_batch(1, messages=80, events=80, dead_letters=0, tables=[])  # offsets undercount
    assert counts.total == 180


def test_a_file_source_run_has_no_total_and_no_eta() -> None:
    counts = RunCounts(started=0.0)
    counts.add_batch(0, messages=5000, events=12000, dead_letters=3, tables=["a.b", "a.c"])
    counts.add_query_progress(query_progress(0, FILE_SOURCE))
    assert counts.total is None
    assert counts.eta(now=10.0) is None
    assert counts.headline(now=10.0, with_eta=True) == "5,000 messages · 0:00:10 elapsed"
    assert counts.details(now=10.0) == (
        "12,000 events · 3 dead letters · 1 batch · 2 tables · 1,200 events/s"
    )


# ---------------------------------------------------------------------- feeding the bar
def test_batches_update_the_counts() -> None:
    clock = Clock()
    progress = RunProgress(terminal_console(), available_now=True, clock=clock)
    progress.on_batch(batch(7, 100, 240, 1, "shop.orders", "shop.items"))
    progress.on_batch(batch(8, 50, 60, 0, "shop.orders", "crm.users"))
    counts = progress.counts
    assert (counts.messages, counts.events, counts.dead_letters, counts.batches) == (150, 300, 1, 2)
    assert counts.tables == {"shop.orders", "shop.items", "crm.users"}
    assert counts.messages_by_batch == {7: 100, 8: 50}


def test_a_batch_the_bar_cannot_read_does_not_fail_the_batch() -> None:
    progress = RunProgress(terminal_console(), available_now=True)
    progress.on_batch(object())  # type: ignore[arg-type]
    assert progress.counts.batches == 0


@pytest.fixture
def thread_errors(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[BaseException | None]]:
    """Exceptions that escape any thread (a dead poller would land here)."""
    seen: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_value))
    yield seen


def test_a_poll_that_raises_is_swallowed_and_polling_goes_on(
    thread_errors: list[BaseException | None],
) -> None:
    calls = 0
    recovered = threading.Event()
    good = query_progress(0, kafka_source(None, '{"t":{"0":100}}', '{"t":{"0":400}}'))

    def poll() -> dict[str, Any] | None:
        nonlocal calls
        calls += 1
        if calls <= 3:
            raise RuntimeError("py4j: the query is stopping")
        recovered.set()
        return good

    progress = RunProgress(terminal_console(), available_now=True, poll_seconds=0.01)
    progress.on_batch(batch(0, 100, 100))
    with progress:
        progress.watch(poll)
        assert recovered.wait(timeout=10), "the poller stopped after an error"
    assert progress.counts.total == 400
    assert thread_errors == []
    assert progress._poller is None  # stopped and joined

    # and so does the last poll, in stop()
    def broken() -> dict[str, Any] | None:
        raise RuntimeError("the JVM is gone")

    failing = RunProgress(terminal_console(), available_now=True, poll_seconds=60)
    with failing:
        failing.watch(broken)
    assert thread_errors == []


@pytest.mark.parametrize("failing", [False, True], ids=["no-progress-yet", "poll-fails"])
def test_the_poller_moves_the_clock_on_between_batches(failing: bool) -> None:
    clock = Clock()
    polled_twice = threading.Event()
    polls = 0

    def no_progress_yet() -> dict[str, Any] | None:
        nonlocal polls
        polls += 1
        if polls >= 2:
            polled_twice.set()
        if failing:
            raise RuntimeError("py4j: connection refused")
        return None

    progress = RunProgress(terminal_console(), available_now=True, poll_seconds=0.01, clock=clock)
    with progress:
        clock.now += 65.0  # a long first batch: nothing fed, yet time passes on the screen
        progress.watch(no_progress_yet)
        assert polled_twice.wait(timeout=10)
        # what the bar displays right now (before stop() refreshes it one last time)
        shown = progress._bar.tasks[0].fields["headline"]
    assert shown == "0 messages · 0:01:05 elapsed"


# ---------------------------------------------------------------------- rendering
def test_the_bar_shows_done_total_events_dead_letters_batches_rate_and_eta() -> None:
    clock = Clock()
    console = terminal_console()
    with RunProgress(console, available_now=True, clock=clock) as progress:
        progress.on_batch(batch(0, 300, 900, 2, "shop.orders", "shop.items"))
        progress.on_query_progress(
            query_progress(0, kafka_source("None", '{"t":{"0":300}}', '{"t":{"0":1000}}'))
        )
        clock.now += 30.0  # 300 messages in 30 s: 10/s, 700 to go
    shown = text_of(console)
    assert "300/1,000 messages" in shown
    assert "900 events" in shown
    assert "2 dead letters" in shown
    assert "1 batch " in shown
    assert "2 tables" in shown
    assert "30 events/s" in shown
    assert "ETA 0:01:10" in shown
    assert "0:00:30 elapsed" in shown
    assert "━" in shown  # the bar itself


def test_the_bar_fits_an_80_column_terminal() -> None:
    console = Console(file=StringIO(), force_terminal=True, width=80)
    with RunProgress(console, available_now=True) as progress:
        progress.on_batch(batch(12, 123_456, 1_234_567, 12_345, "shop.orders"))
        progress.on_query_progress(
            query_progress(12, kafka_source(None, '{"t":{"0":1}}', '{"t":{"0":9876543}}'))
        )
    last_frame = text_of(console).rsplit("\r", 1)[-1]
    assert "123,456/9,999,998 messages · ETA" in last_frame
    assert "1,234,567 events · 12,345 dead letters · 1 batch · 1 table" in last_frame
    assert "━━━━━━━━━━" in last_frame


def test_an_interval_run_has_no_eta_and_a_file_run_no_total() -> None:
    console = terminal_console()
    with RunProgress(console, available_now=False) as progress:
        progress.on_batch(batch(0, 300, 900))
        progress.on_query_progress(
            query_progress(0, kafka_source(None, '{"t":{"0":300}}', '{"t":{"0":1000}}'))
        )
    assert "300/1,000 messages" in text_of(console)
    assert "ETA" not in text_of(console)

    console = terminal_console()
    with RunProgress(console, available_now=True) as progress:
        progress.on_batch(batch(0, 5000, 12000))
        progress.watch(lambda: query_progress(0, FILE_SOURCE))
    shown = text_of(console)
    last_frame = shown.rsplit("\r", 1)[-1]
    assert "5,000 messages · " in last_frame
    assert not re.search(r"\d/\d", shown)  # never a total
    assert "ETA" not in shown


@contextmanager
def bare_root_logger() -> Iterator[logging.Logger]:
    """The root logger without handlers (pytest's included), as in a fresh process; all
    put back afterwards, within the test (pytest swaps its handler between phases)."""
    root, py4j = logging.getLogger(), logging.getLogger("py4j")
    handlers, level, py4j_level = root.handlers[:], root.level, py4j.level
    for handler in handlers:
        root.removeHandler(handler)
    try:
        yield root
    finally:
        for handler in root.handlers[:]:
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)
        py4j.setLevel(py4j_level)


def test_without_a_bar_log_lines_are_plain_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    with bare_root_logger():
        setup_logging(None)
        logging.getLogger("anycdc.pipeline").info("batch 0: 10 messages, 25 events")
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} anycdc.pipeline batch 0: 10 messages, 25 events\n",
        stderr.getvalue(),
    )


def test_with_a_bar_log_lines_go_through_its_console_as_text() -> None:
    console = terminal_console()
    with bare_root_logger() as root:
        setup_logging(console)
        logging.getLogger("anycdc.pipeline").warning("shop.[bold]x[/bold]: 10 messages")
        handlers = root.handlers[:]
    shown = text_of(console)
    assert "anycdc.pipeline shop.[bold]x[/bold]: 10 messages" in shown  # not rich markup
    assert "WARNING" in shown
    assert [type(h) for h in handlers] == [type(rich_handler(console))]


# ---------------------------------------------------------------------- the CLI decides
def run_args(*flags: str) -> argparse.Namespace:
    return build_parser().parse_args(["run", "--source-dir", "in", "--target", "out", *flags])


def test_the_cli_shows_a_bar_only_on_a_terminal_without_no_progress(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    leader, follower = os.openpty()
    try:
        with open(follower, "w") as terminal:
            assert terminal.isatty()
            assert wants_progress(run_args(), terminal) is True
            assert wants_progress(run_args("--no-progress"), terminal) is False
            monkeypatch.setattr(sys, "stderr", terminal)  # the default stream is stderr
            assert wants_progress(run_args()) is True
            monkeypatch.setattr(sys, "stderr", StringIO())  # a pipe, a log file, CI
            assert wants_progress(run_args()) is False
    finally:
        os.close(leader)
    assert wants_progress(run_args(), terminal) is False  # closed


def test_the_run_help_explains_no_progress(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    assert "--no-progress" in capsys.readouterr().out
