"""The bench's workload shapes: Zipf-skewed activity and the hot tables' freshness."""

from __future__ import annotations

import itertools
import re
import time
from collections import Counter
from pathlib import Path

from anycdc.bench.pipeline import BenchSettings
from anycdc.config import PipelineConfig
from anycdc.simulate import Workload


def _changes_per_table(workload: Workload) -> Counter[str]:
    counts: Counter[str] = Counter()
    for event in workload.events("canonical-json"):
        if event.op.value in ("insert", "update", "delete") and event.table:
            counts[event.table] += 1
    return counts


def test_skew_gives_the_first_tables_most_changes() -> None:
    skewed = _changes_per_table(Workload(seed=3, rows=1, events=20_000, tables=200, skew=1.5))
    uniform = _changes_per_table(Workload(seed=3, rows=1, events=20_000, tables=200))
    names = [t.name for t in Workload(tables=200).tables]
    top = set(names[:10])
    share = sum(n for t, n in skewed.items() if t in top) / sum(skewed.values())
    assert 0.7 < share < 0.9  # Zipf 1.5 over 200: ~81% expected
    uniform_share = sum(n for t, n in uniform.items() if t in top) / sum(uniform.values())
    assert uniform_share < 0.1  # 10 of 200 tables alike: ~5%
    assert skewed[names[0]] > skewed[names[9]] > skewed[names[150]]


def test_the_same_seed_without_skew_is_the_stream_it_was() -> None:
    # skew 0 draws tables as before: seeds keep their streams (golden runs, soak truth)
    plain = list(Workload(seed=5, rows=2, events=300).events("canonical-json"))
    zero = list(Workload(seed=5, rows=2, events=300, skew=0.0).events("canonical-json"))
    assert plain == zero


def test_hot_tables_get_their_own_freshness() -> None:
    settings = BenchSettings(tables=20, hot_tables=3, hot_freshness=15, freshness=600)
    mapping = settings.table_freshness()
    config = PipelineConfig.from_mapping(
        {"target": "t", "freshness": 600, "table_freshness": mapping}
    )
    names = [t.name for t in settings.workload(0, settings.seed).tables]
    policy = config.freshness_policy
    assert [policy.target_s(f"bench.{n}") for n in names[:4]] == [15, 15, 15, 600]
    assert all(re.escape(n) in next(iter(mapping)) for n in names[:3])
    assert BenchSettings().table_freshness() == {}


def test_pregenerated_stream_is_stamped_when_sent(tmp_path: Path) -> None:
    """The sustained phase's stream is generated before it and each message gets the time
    it is sent as its source time (the simulator's clock would make staleness meaningless)."""
    from anycdc.bench.pipeline import (
        STAMP_MS,
        pregenerate,
        stamped_messages,
        workload_messages,
    )
    from anycdc.formats import get_format

    settings = BenchSettings(events=10**9, tables=5, seed=3)
    stream = tmp_path / "stream.bin"
    assert pregenerate(settings, stream, 300)
    expected = list(itertools.islice(workload_messages(settings, stamp_ms=STAMP_MS), 300))
    before = int(time.time() * 1000)
    sent = list(stamped_messages(stream))
    after = int(time.time() * 1000)
    assert len(sent) == 300
    decoder = get_format("canal-json")
    for (key, value, partition), (want_key, want_value, want_partition) in zip(
        sent, expected, strict=True
    ):
        assert (key, partition) == (want_key, want_partition)
        [event] = decoder.decode(value)
        assert event.ts_ms is not None and before <= event.ts_ms <= after
        # the stamp is the only change: the message is the one generated
        assert value.replace(str(event.ts_ms).encode(), str(STAMP_MS).encode()) == want_value
    # a binary format does not carry the time as digits: the phase generates while it sends
    assert not pregenerate(
        BenchSettings(events=10**9, tables=5, seed=3, format="dts-avro"), tmp_path / "b", 10
    )


def test_named_format_runs_decode_the_stream_as_the_detecting_runs_do() -> None:
    # --named-format: the runs' config names the stream's format, which decodes every
    # message as detection would (the same events), without detecting
    from anycdc.bench.pipeline import workload_messages
    from anycdc.decoding import MessageDecoder

    detecting, named = (
        BenchSettings(events=400, tables=3),
        BenchSettings(events=400, tables=3, detect=False),
    )
    configs = [
        PipelineConfig.from_mapping({"kafka_bootstrap": "h:1", "topics": ["t"], "target": "/x", **s.format_config()})
        for s in (detecting, named)
    ]  # fmt: skip
    assert [c.format for c in configs] == ["auto", "canal-json"]
    auto, fixed = (MessageDecoder(c.routing.default.format) for c in configs)
    messages = list(workload_messages(named))
    assert messages
    for key, value, _ in messages:
        assert auto.decode(value, key) == fixed.decode(value, key)
