"""Auto mode keeps shape-determined scores per envelope shape: the verdict is the reference's.

:func:`anycdc.formats.detect_parsed` keeps the scores of the formats that declare
:attr:`~anycdc.formats.base.Format.sniff_fields` per envelope shape (keys in order, value
types, a few fields' values, the declared evidence such as DRS') and sniffs only the others
per message. :func:`anycdc.formats.detect_parsed_reference` asks every candidate about every
message. The two must give the same :class:`~anycdc.formats.Detection` (format, confidence
and every candidate's score) on every golden case, every corpus message and messages built
by mutating them, with the verdicts kept from earlier messages of the same shape: a
declaration that promises too much shows here as a stale verdict.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anycdc.decoding import MessageDecoder
from anycdc.errors import DecodeError
from anycdc.formats import _index, detect_parsed, detect_parsed_reference
from anycdc.formats.base import parse_json
from anycdc.formats.fastpath import SNIFF_PASS
from tests.cases import iter_cases
from tests.strategies import st_json_value
from tests.unit.test_detect_index import CORPUS

MESSAGES: list[tuple[str, bytes]] = [
    (f"{case.format_id}/{case.name}#{n}", message)
    for case in iter_cases()
    for n, message in enumerate(case.messages())
] + CORPUS


def _objects() -> list[dict[str, Any]]:
    found = []
    for _, message in MESSAGES:
        try:
            value = parse_json("test", message)
        except Exception:
            continue
        if type(value) is dict:
            found.append(value)
    return found


OBJECTS = _objects()


def _same(message: Any) -> None:
    # the reference first: its sniffers see the message as the kept verdicts never did
    expected = detect_parsed_reference(message)[0]
    assert detect_parsed(message)[0] == expected


@pytest.mark.parametrize(("name", "message"), MESSAGES, ids=[name for name, _ in MESSAGES])
def test_every_case_and_corpus_message(name: str, message: bytes) -> None:
    _same(message)
    _same(message)  # now from the kept verdict


def test_every_message_with_verdicts_kept_in_both_orders() -> None:
    for _, message in MESSAGES + MESSAGES[::-1]:
        _same(message)


CANAL = {"database": "d", "table": "t", "type": "INSERT", "isDdl": False,
         "data": [{"id": "1"}], "old": None, "pkNames": ["id"], "mysqlType": {"id": "int"},
         "sqlType": {"id": 4}, "es": 1, "ts": 2, "id": 3, "sql": ""}  # fmt: skip


def test_canal_shapes_are_decided_by_shape_and_evidence() -> None:
    """Not vacuous: no candidate of a Canal-shaped message reads content (debezium-json
    claims a ``data`` key only beside a CloudEvent's ``specversion``); the Canal family's
    scores are kept, DRS' evidence being their one per-message read."""
    plan = _index().plan(CANAL)
    assert {fid for _, fid, _ in plan.fixed} >= {"canal-json", "dts-canal-json", "drs-json"}
    assert [fid for _, fid, _ in plan.content] == []
    assert "debezium-json" not in {fid for fid, _ in plan.sniffers}
    assert [read.__name__ for read in plan.evidence] == ["read_drs_evidence", "_unreadable"]
    cloud_event = {"specversion": "1.0", "data": {}, "type": "t", "source": "s"}
    assert "debezium-json" in {fid for fid, _ in _index().plan(cloud_event).sniffers}


def test_a_kept_verdict_asks_no_sniffer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second message of a Canal shape is told by its kept verdict: its evidence read,
    no sniffer asked and no sniffing pass begun (what makes ``auto`` cheap per message)."""
    message = {**CANAL, "table": "kept_verdict"}
    assert detect_parsed(message)[0].format == "canal-json"
    asked: list[str] = []
    for _, cls in _index().plan(message).sniffers:
        monkeypatch.setattr(cls, "sniff", classmethod(lambda c, m: asked.append(c.__name__)))
    monkeypatch.setattr(SNIFF_PASS, "begin", lambda m: asked.append("pass"))
    found = detect_parsed({**message, "type": "INSERT", "data": [{"id": "2"}]})[0]
    assert (found.format, asked) == ("canal-json", [])


def test_content_sniffers_are_asked_per_message() -> None:
    debezium = {"op": "c", "after": {"id": 1}, "source": {"table": "t"}}
    assert [fid for _, fid, _ in _index().plan(debezium).content] == ["debezium-json"]


_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(
        ["INSERT", "UPDATE", "DELETE", "DDL", "INIT_DDL", "QUERY", "insert", "c", "u", "I",
         "mongodb", "x", "", "[106, 103]", "2024-01-02 03:04:05", "varbinary(16)", "timestamp"]
    ),
)  # fmt: skip
_VALUE = st.one_of(
    _SCALAR, st_json_value(), st.lists(st.dictionaries(st.text(max_size=3), _SCALAR), max_size=2)
)
_DRS_KEYS = ["columnType", "opType", "jobId", "dbType", "type", "isDdl", "data", "old",
             "mysqlType", "sqlType", "pkNames", "reason", "encrypted", "op", "op_type"]  # fmt: skip


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside a value where a mutation may write (nested row values too: the
    DRS-vs-Canal evidence reads them)."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, (*prefix, i))
    return found


@st.composite
def _mutated(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    seed = draw(st.sampled_from(OBJECTS))
    message = copy.deepcopy(seed)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["drop", "retype", "add", "field", "nested", "reorder"]))
        if kind == "field":  # a field's value only (its type kept or not): sniffers read them
            message[draw(st.sampled_from(_DRS_KEYS))] = draw(_SCALAR)
        elif kind == "drop" and message:
            message.pop(draw(st.sampled_from(sorted(message))))
        elif kind == "retype" and message:
            message[draw(st.sampled_from(sorted(message)))] = draw(_VALUE)
        elif kind == "add":
            message[draw(st.sampled_from(_DRS_KEYS))] = draw(_VALUE)
        elif kind == "nested" and (paths := [p for p in _paths(message) if len(p) > 1]):
            *head, last = draw(st.sampled_from(paths))
            parent: Any = message
            for step in head:
                parent = parent[step]
            parent[last] = draw(_SCALAR)
        elif kind == "reorder":
            message = dict(reversed(list(message.items())))
    return seed, message


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_mutated_messages_after_their_seed(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """The seed first, so its shape's verdict is kept; then the mutation, as an object and as
    the bytes of it: content changed under a kept shape is where a false promise shows."""
    seed, message = pair
    _same(seed)
    _same(message)
    _same(json.dumps(message, default=str).encode())


def test_every_field_value_swept_under_a_kept_shape() -> None:
    """Each shape once (the first object of each key order), then each sniffed field set to
    each of a few values that sniffers tell apart: ``isDdl`` True beside a DTS header, an
    unknown ``type`` ... The verdict of the seed's shape must not answer for them."""
    seeds = {tuple(obj): obj for obj in reversed(OBJECTS)}
    for seed in seeds.values():
        for name in _DRS_KEYS:
            if name not in seed:
                continue
            for value in (True, False, None, 0, "INSERT", "DELETE", "QUERY", "insert", "x"):
                _same(seed)
                _same({**seed, name: value})


def test_not_json_says_why_in_auto_mode() -> None:
    with pytest.raises(DecodeError) as caught:
        MessageDecoder("auto").decode(b'{"database":"d","table":"t","type":"INSERT"')
    assert "invalid JSON" in str(caught.value)
    assert "format not recognised" in str(caught.value)
