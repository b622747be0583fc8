"""The fast reader of MongoDB shell text gives exactly what the recursive parser gives.

:func:`anycdc.formats.codecs.mongo.parse_shell` first rewrites the common document
(JSON + constructor calls with literal arguments + bare keys) into JSON for
msgspec and falls back to the recursive parser for anything else. These tests
read the same texts both ways and compare ``repr`` of the results (key order,
BSON kinds, time zones, NaN) or the error text: the golden cases' documents,
the benchmark's, documents written by ``shell_text``, hand-picked oddities, and
character-level mutations of all of them. They also check that the fast reader
really takes the common documents.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anycdc.bench.decode import messages as bench_messages
from anycdc.errors import DecodeError
from anycdc.formats.base import NotFast
from anycdc.formats.codecs.mongo import (
    MAX_DEPTH,
    _read_fast,
    _ShellParser,
    parse_shell,
    shell_text,
)
from tests.cases import iter_cases
from tests.unit.formats.test_drs_mongo import NESTED, st_document

ODD_DOCUMENTS = [
    "{}",
    "{ }",
    '{"a": 1}',
    "{a: 1, $b: 2, _c: 3}",
    "{true: 1, null: 2, NaN: 3}",
    '{"a": NaN, "b": Infinity, "c": -Infinity, "d": undefined, "e": MinKey, "f": MaxKey()}',
    '{"a": 1e5, "b": 1.5E-3, "c": -0, "d": 01, "e": 1., "f": .5, "g": 1e400}',
    '{"a": 123456789012345678901234567890, "b": ' + "9" * 5000 + "}",
    '{"a": 1, "a": 2, "b": 3}',
    '{"a": "x(y)", "b": "ObjectId(\\"00\\")", "c": "a:b", "d": "true"}',
    '{"a": ObjectId("64650CF67DC36A464E76E583")}',
    '{"a": ObjectId("64650cf6")}',
    '{"a": ObjectId ( "64650cf67dc36a464e76e583" ) }',
    '{"a": ObjectId\t("64650cf67dc36a464e76e583")}',
    '{"a": new ObjectId("64650cf67dc36a464e76e583")}',
    '{"a": ISODate("2023-05-17T12:00:00.123Z"), "b": ISODate("2023-05-17T12:00:00Z")}',
    '{"a": ISODate("2023-05-17"), "b": ISODate("0000-01-01T00:00:00.000Z")}',
    '{"a": ISODate("2023-02-30T00:00:00.000Z")}',
    '{"a": ISODate(" 2023-05-17T12:00:00.000Z ")}',
    '{"a": Date(1684344064000), "b": new Date(-1)}',
    '{"a": NumberLong(5), "b": NumberLong("5"), "c": NumberLong(" 5"), "d": NumberLong(1.5)}',
    '{"a": NumberLong(9223372036854775808)}',
    '{"a": NumberInt(2147483648)}',
    '{"a": NumberDecimal("1.50"), "b": NumberDecimal("x"), "c": NumberDecimal(1.5)}',
    '{"a": Timestamp(1, 2), "b": Timestamp({"t": 1, "i": 2})}',
    '{"a": BinData(0, "aGk="), "b": BinData(0, "a"), "c": HexData(0, "0102")}',
    '{"a": UUID("5f2b3c4d-1111-2222-3333-444455556666")}',
    '{"a": Eval("x")}',
    '{"a": ObjectId("64650cf67dc36a464e76e583",)}',
    '{"a": /ab+c/i}',
    "{'a': 'b'}",
    '{"a": [1, ObjectId("64650cf67dc36a464e76e583"), {"b": NumberLong(1)}]}',
    '{"a": {"b": {"c": [NumberDecimal("1"), [NaN]]}}}',
    '{"\\u0000": 1}',
    '{"a": "\\u0000"}',
    '{"\\u0000": 0, "b": NumberLong(1)}',
    '{"a": {"\\u0000": 0}, "b": NumberLong(1)}',
    '{"a": "\\ud800"}',
    '{"a": "x\ny"}',
    '{"a"\f: 1}',
    '{"a":\u00a01}',
    '{"a": 1,}',
    '{"a": 1}}',
    '{"a": 1} x',
    "[1, 2]",
    "1",
    '"a"',
    'ObjectId("64650cf67dc36a464e76e583")',
    "",
    "   ",
    "{",
    '{"a": "',
    '{"a": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}",
    '{"a": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}",
]
# pieces a mutation inserts: syntax, words, constructors, whitespace, escapes
PIECES = [
    '"', "'", "\\", "(", ")", ":", ",", "{", "}", "[", "]", " ", "\t", "\x0b", "\u00a0", "e",
    "E5", "1", "-", ".", "0", "/", "$", "a", "NaN", "Infinity", "true", "null", "new ",
    "\\u0000", "ObjectId(", "NumberLong(", 'ISODate("', "\u0663",
]  # fmt: skip


def outcome(read: str, text: str) -> str:
    """``repr`` of what a reader gives, or its error."""
    try:
        if read == "parse_shell":
            return repr(parse_shell(text, "drs-mongo-json", "$.value"))
        return repr(_ShellParser(text, "drs-mongo-json", "$.value").document())
    except DecodeError as exc:
        return f"error: {exc}"


def same_both_ways(text: str) -> None:
    assert outcome("parse_shell", text) == outcome("parser", text), text


def takes_fast(text: str) -> bool:
    try:
        _read_fast(text)
    except Exception:
        return False
    return True


def golden_documents() -> Iterator[str]:
    for case in iter_cases("drs-mongo-json"):
        for message in case.messages():
            try:
                msg = json.loads(message) if message else None
            except ValueError:
                continue
            if isinstance(msg, dict):
                yield from (msg[f] for f in ("value", "where") if isinstance(msg.get(f), str))


def bench_documents(count: int = 60) -> list[str]:
    return [json.loads(m)["value"] for m in bench_messages("drs-mongo-json", count)]


def mutations(text: str, step: int) -> Iterator[str]:
    for index in range(0, len(text) + 1, step):
        yield text[:index] + text[index + 1 :]  # a character dropped
        for piece in PIECES:
            yield text[:index] + piece + text[index:]  # a piece inserted
            yield text[:index] + piece + text[index + 1 :]  # a character replaced


def test_golden_and_odd_documents_read_the_same() -> None:
    texts = [*golden_documents(), *ODD_DOCUMENTS]
    assert len(texts) > len(ODD_DOCUMENTS) + 10
    for text in texts:
        same_both_ways(text)


def test_fast_reader_takes_the_common_documents() -> None:
    # a fast reader that always fell back would pass every comparison and be slow
    valid = [t for t in golden_documents() if not outcome("parser", t).startswith("error")]
    # what the fast reader leaves to the parser: `new`, single quotes, -Infinity,
    # constructors with non-literal arguments
    plain = [t for t in valid if not any(s in t for s in ("new ", "'", "-Inf", "({"))]
    assert len(plain) > 10 and all(takes_fast(text) for text in plain)
    assert all(takes_fast(text) for text in bench_documents())
    with pytest.raises(NotFast):
        _read_fast('{"a": new Date(1)}')


@pytest.mark.parametrize(
    "seed",
    [
        *bench_documents(3),
        '{_id: ObjectId("64650cf67dc36a464e76e583"), n: NumberLong(5), t: Timestamp(1, 2)}',
        '{"a": [1.5e3, {"b": NaN}], "c": BinData(0, "aGk="), "d": MinKey}',
    ],
)
def test_mutated_documents_read_the_same(seed: str) -> None:
    fast = 0
    for text in mutations(seed, step=3 if len(seed) > 120 else 1):
        same_both_ways(text)
        fast += takes_fast(text)
    assert fast > 50  # the mutations exercise the fast reader, not only the parser


@settings(max_examples=300, deadline=None)
@given(st_document())
def test_written_documents_read_the_same(document: tuple[dict, dict]) -> None:
    text = shell_text(document[0])
    same_both_ways(text)
    assert takes_fast(text) or "new " in text  # shell_text writes new Date(...) far dates


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=6), NESTED, max_size=4))
def test_nested_documents_read_the_same(document: dict) -> None:
    same_both_ways(shell_text(document))
