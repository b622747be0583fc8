"""``make bench-decode`` compares every format with a bare parse of the same bytes."""

from __future__ import annotations

from anycdc.bench.decode import SKIP, bare_parsers, messages
from anycdc.formats import format_class, format_ids


def test_every_benchmarked_format_has_a_bare_parse_that_reads_its_messages() -> None:
    benchmarked = [f for f in format_ids() if f not in SKIP and format_class(f).can_encode]
    assert "dts-avro" in benchmarked and "canal-json" in benchmarked
    for format_id in benchmarked:
        parsers = bare_parsers(format_id)
        assert parsers, f"{format_id}: no bare parse to compare with"
        [message] = messages(format_id, 1)
        for name, parse in parsers.items():
            assert isinstance(parse(message), dict), (format_id, name)
