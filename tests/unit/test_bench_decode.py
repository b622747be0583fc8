"""``make bench-decode`` compares every format with a bare parse of the same bytes."""

from __future__ import annotations

import pytest

from anycdc.bench.decode import SKIP, bare_parsers, messages, rates
from anycdc.bench.stage import DEFAULT_FORMATS
from anycdc.bench.stage import main as stage_main
from anycdc.changelog import CHANGELOG_NAMES
from anycdc.decoding import AUTO
from anycdc.formats import format_class, format_ids
from anycdc.spark.decode import ChangelogRows, RawRecord


def test_every_benchmarked_format_has_a_bare_parse_that_reads_its_messages() -> None:
    benchmarked = [f for f in format_ids() if f not in SKIP and format_class(f).can_encode]
    assert "dts-avro" in benchmarked and "canal-json" in benchmarked
    for format_id in benchmarked:
        parsers = bare_parsers(format_id)
        assert parsers, f"{format_id}: no bare parse to compare with"
        [message] = messages(format_id, 1)
        for name, parse in parsers.items():
            assert isinstance(parse(message), dict), (format_id, name)


def test_the_stage_detected_makes_the_rows_of_the_stage_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``python -m anycdc.bench.stage --auto`` times the same work as the named stage plus
    detection: on each timed format's messages both stages make the same changelog rows,
    but for the format named (a DTS message that only Canal's fields show, or DRS JSON-C's
    that no DELETE proves, is told as its family's first, whose rows are the same)."""
    at = CHANGELOG_NAMES.index("format")
    for format_id in DEFAULT_FORMATS:
        data = messages(format_id, 20)
        named = list(ChangelogRows(format_id, {}).values(_records(data)))
        detected = list(ChangelogRows(AUTO, {}).values(_records(data)))
        assert len(named) == 20
        assert [r[:at] + r[at + 1 :] for r in detected] == [r[:at] + r[at + 1 :] for r in named]
    assert (
        stage_main(["--formats", "canal-json", "--messages", "5", "--passes", "1", "--auto"]) == 0
    )
    assert capsys.readouterr().out.startswith("canal-json (detected): ")


def _records(data: list[bytes]) -> list[RawRecord]:
    return [("bench", 0, n, None, message, None) for n, message in enumerate(data)]


def test_rates_feed_a_stream_its_chunks_and_a_function_each_message() -> None:
    """The stage is timed as a worker runs it, a chunk of messages as one stream; the
    decoders and parsers one message at a time. Every message is fed to each, in order,
    once per repeat."""
    data = [bytes([n]) for n in range(7)]
    seen: list[bytes] = []
    chunks: list[list[bytes]] = []
    measured = rates(
        {"each": seen.append}, data, repeat=2, chunk=3, streams={"stream": chunks.append}
    )
    assert set(measured) == {"each", "stream"}
    assert chunks == [data[0:3], data[0:3], data[3:6], data[3:6], data[6:7], data[6:7]]
    assert seen == [m for start in (0, 3, 6) for m in data[start : start + 3] * 2]
