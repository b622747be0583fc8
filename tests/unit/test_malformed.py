"""Malformed input never crashes or hangs a decoder: it yields events or a DecodeError.

Besides fixed nasty inputs, every golden case message is mutated field by
field (removed, or replaced by a value of every other JSON type) and the
result must still decode or fail with a DecodeError naming the format.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anycdc.decoding import MessageDecoder
from anycdc.errors import DecodeError
from anycdc.formats import format_class, format_ids, get_format
from tests.cases import iter_cases

JSON_FORMATS = [f for f in format_ids() if not format_class(f).binary]
BINARY_FORMATS = [f for f in format_ids() if format_class(f).binary and format_class(f).detectable]

NASTY: list[tuple[str, bytes]] = [
    ("empty", b""),
    ("whitespace", b"   \n"),
    ("truncated", b'{"database":"d","table":"t","type":"INSERT","data":[{"id":"1"'),
    ("garbage", bytes(range(256))),
    ("invalid-utf8", b'{"op":"c","payload":"\xff\xfe"}'),
    ("nan", b'{"op":"c","after":{"x":NaN}}'),
    ("nan-string", b'{"op":"c","after":{"x":"NaN"},"source":{}}'),
    (
        "duplicate-keys",
        b'{"type":"INSERT","type":"DELETE","data":[{"id":"1"}],"database":"d","table":"t"}',
    ),
    ("deep-nesting", b'{"a":' * 100 + b"1" + b"}" * 100),
    ("very-deep-nesting", b"[" * 100_000 + b"]" * 100_000),
    ("array", b"[1,2,3]"),
    ("number", b"42"),
    ("string", b'"hello"'),
    ("json-null-in-fields", b'{"schema":null,"payload":null,"data":null,"meta":null}'),
    ("huge-string", b'{"database":"' + b"x" * 10_000_000 + b'","table":"t","type":"INSERT"}'),
    ("huge-number", b'{"id":' + b"9" * 5000 + b',"type":"INSERT","data":[{"id":1e999999}]}'),
]


def _decode_or_error(fmt_id: str, message: bytes | None) -> None:
    fmt = get_format(fmt_id)
    try:
        events = fmt.decode(message)
    except DecodeError as exc:
        assert exc.format_id == fmt_id
        assert str(exc).startswith(f"{fmt_id}: ")
        return
    assert isinstance(events, list)


@pytest.mark.parametrize("fmt_id", JSON_FORMATS + BINARY_FORMATS)
@pytest.mark.parametrize("name,message", NASTY, ids=[n for n, _ in NASTY])
def test_nasty_input_is_an_error_or_events(fmt_id: str, name: str, message: bytes) -> None:
    _decode_or_error(fmt_id, message)


@pytest.mark.parametrize("name,message", NASTY, ids=[n for n, _ in NASTY])
def test_auto_detection_survives_nasty_input(name: str, message: bytes) -> None:
    decoder = MessageDecoder("auto")
    try:
        decoder.decode(message)
    except DecodeError:
        pass


_REPLACEMENTS: list[Any] = [None, True, 0, -1, 2**70, "x", "", [], {}, [{}], {"a": []}]


def _mutations(obj: Any, path: tuple[Any, ...] = (), depth: int = 0) -> Iterator[tuple[Any, ...]]:
    if depth > 4:
        return
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield (*path, key)
            yield from _mutations(value, (*path, key), depth + 1)
    elif isinstance(obj, list):
        for index, value in enumerate(obj[:3]):
            yield (*path, index)
            yield from _mutations(value, (*path, index), depth + 1)


def _mutated(obj: Any, path: tuple[Any, ...], replacement: Any, remove: bool) -> Any:
    clone = copy.deepcopy(obj)
    parent = clone
    for step in path[:-1]:
        parent = parent[step]
    if remove:
        del parent[path[-1]]
    else:
        parent[path[-1]] = replacement
    return clone


def _json_case_messages() -> list[tuple[str, str, Any]]:
    out = []
    for case in iter_cases():
        if format_class(case.format_id).binary:
            continue
        for index, message in enumerate(case.messages()[:3]):
            if message is None:
                continue
            try:
                out.append((case.format_id, f"{case.id}#{index}", json.loads(message)))
            except ValueError:
                continue
    return out


CASE_MESSAGES = _json_case_messages()


@pytest.mark.parametrize("fmt_id,case_id,obj", CASE_MESSAGES, ids=[c for _, c, _ in CASE_MESSAGES])
def test_field_mutations_never_crash(fmt_id: str, case_id: str, obj: Any) -> None:
    fmt = get_format(fmt_id, _options_for(case_id))
    checked = 0
    for path in _mutations(obj):
        variants = [_mutated(obj, path, None, remove=True)] + [
            _mutated(obj, path, r, remove=False) for r in _REPLACEMENTS
        ]
        for variant in variants:
            data = json.dumps(variant).encode()
            try:
                fmt.decode(data)
            except DecodeError as exc:
                assert exc.format_id == fmt_id
            checked += 1
    assert checked > 0


def _options_for(case_id: str) -> dict[str, str]:
    fmt_id, name = case_id.split("#")[0].split("/", 1)
    for case in iter_cases(fmt_id):
        if case.name == name:
            return case.options
    return {}


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.floats(allow_nan=False),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=20,
)
KEYS = st.sampled_from(
    ["schema", "payload", "data", "old", "type", "op", "meta", "before", "after", "database",
     "table", "source", "prevStruct", "postStruct", "allMetaData", "recordType", "value", "where",
     "version", "id", "es", "ts", "pkNames", "mysqlType", "sqlType", "isDdl", "key", "coll", "db"]
)  # fmt: skip


@given(st.dictionaries(KEYS, JSON_VALUES, max_size=8))
def test_random_shapes_never_crash_any_decoder(obj: dict[str, Any]) -> None:
    data = json.dumps(obj).encode()
    for fmt_id in JSON_FORMATS:
        _decode_or_error(fmt_id, data)
