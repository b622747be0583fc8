"""The one fast-path protocol: a refusal falls back (counted), a bug is said."""

from __future__ import annotations

from typing import Any

import pytest

from anycdc.bench.decode import messages as bench_messages
from anycdc.errors import DecodeError
from anycdc.formats import get_format
from anycdc.formats.base import Cache, NotFast, PlanCache


def test_a_refused_message_is_decoded_by_the_reference_decoder_and_counted() -> None:
    fmt = get_format("canal-json")
    [message] = bench_messages("canal-json", 1)
    fmt.decode(message)
    assert fmt.fast_fallbacks == 0
    ddl = message.replace(b'"type":"INSERT"', b'"type":"QUERY"')
    assert fmt.decode(ddl) == fmt.decode_slow(ddl)
    assert fmt.fast_fallbacks == 1


def test_a_bug_in_a_fast_path_is_a_decode_error_not_a_silent_fallback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fmt = get_format("canal-json")
    [message] = bench_messages("canal-json", 1)

    def broken(value: bytes, key: bytes | None = None) -> Any:
        raise AttributeError("a bug")

    monkeypatch.setattr(fmt, "decode_fast", broken)
    with pytest.raises(DecodeError, match=r"canal-json: \$: fast path failed: AttributeError"):
        fmt.decode(message)
    assert fmt.fast_fallbacks == 0


def test_the_cache_drops_the_oldest_entry() -> None:
    cache: Cache[str, int] = Cache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("b", 3)  # a known key: nothing goes
    cache.put("c", 4)
    assert cache.get("a") is None and len(cache) == 2
    assert list(cache) == ["b", "c"]


def test_plan_builds_are_budgeted() -> None:
    plans = PlanCache(1)
    builds = 0

    def build() -> object:
        nonlocal builds
        builds += 1
        return object()

    with pytest.raises(NotFast):
        for n in range(1000):
            plans.plan(n, build)
    assert builds == PlanCache.CREDIT_CAP // PlanCache.BUILD_COST
