"""Canonical text passes through: the changelog rows are the reference's, byte for byte.

The decode stage (:class:`~anycdc.spark.decode.ChangelogRows`) asks its decoder for images
of canonical text (:meth:`~anycdc.formats.base.Format.keep_canonical_text`): the Canal
family's fast path keeps an integer's, a decimal's or a boolean's text as sent where the
patterns of :mod:`anycdc.values` prove it is the text its typed value renders as
(:class:`~anycdc.formats.fastpath.TextRows`), and renders the rest itself. The reference is
the same stage with every value typed (``canonical_text=False``) and rendered by
:func:`~anycdc.changelog.value_text`. Both run on every golden case, every corpus message,
the benchmark's messages, mutations of them and hypothesis-built rows of the four formats
(canal-json, dts-canal-json, drs-json, drs-json-c), and must give the same rows: same
values, same types, same order, dead letters included. The patterns' claims are checked
against the parsers themselves, and the text path is checked to be taken.
"""

from __future__ import annotations

import datetime as dt
import json
import pickle
import re
import string
from collections.abc import Iterable
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anycdc.bench.decode import messages as bench_messages
from anycdc.changelog import CHANGELOG_NAMES, CanonicalImage, value_text
from anycdc.decoding import MessageDecoder
from anycdc.formats import get_format
from anycdc.formats.canal.fast import BOOL_TEXT, naive_iso
from anycdc.spark.decode import ChangelogRows, RawRecord
from anycdc.typemap import unsigned_range
from anycdc.values import (
    CANONICAL_BOOLEAN,
    CANONICAL_DATE,
    CANONICAL_DECIMAL,
    CANONICAL_NAIVE_DATETIME,
    CANONICAL_TIME,
    INTEGER_RANGES,
    canonical_int_pattern,
    iso_datetime_text,
    parse_bool,
    parse_date,
    parse_datetime,
    parse_decimal,
    parse_int,
    parse_time,
)
from tests.cases import CORPUS_DIR, iter_cases
from tests.unit.formats.test_fast_paths import (
    OPTION_VARIANTS,
    TEXTS,
    canal_messages,
    dump,
    mutations,
)

FORMATS = ["canal-json", "dts-canal-json", "drs-json", "drs-json-c"]
_IMAGES = tuple(CHANGELOG_NAMES.index(name) for name in ("before", "after"))


def stage_rows(
    format_id: str, options: dict[str, str], messages: Iterable[bytes | None], text: bool
) -> list[str]:
    """The stage's rows of ``messages`` (one stream), each as ``repr`` plus the types of its
    images: a subclass of dict, or a value of another type that prints the same, differs."""
    stage = ChangelogRows(format_id, options, canonical_text=text)
    records: list[RawRecord] = [
        ("t", 0, n, None, message, None) for n, message in enumerate(messages)
    ]
    out = []
    for values in [*stage.values(records), *stage.flush_values()]:
        images = [values[at] for at in _IMAGES]
        kinds = [
            (type(image).__name__, sorted({type(v).__name__ for v in image.values()}))
            for image in images
            if image is not None
        ]
        out.append(f"{values!r} {kinds}")
    return out


def assert_same_rows(format_id: str, options: dict[str, str], messages: list[bytes | None]) -> None:
    text = stage_rows(format_id, options, messages, text=True)
    reference = stage_rows(format_id, options, messages, text=False)
    assert len(text) == len(reference)
    for ours, theirs in zip(text, reference, strict=True):
        assert ours == theirs


# --------------------------------------------------------------------------- differential
@pytest.mark.parametrize("format_id", FORMATS)
def test_golden_cases_same_rows(format_id: str) -> None:
    cases = list(iter_cases(format_id))
    assert cases
    for case in cases:
        for extra in OPTION_VARIANTS[format_id]:
            assert_same_rows(format_id, {**case.options, **extra}, case.messages())


def corpus_messages() -> list[bytes]:
    out = []
    for path in sorted(CORPUS_DIR.rglob("*")):
        if not path.is_file() or path.suffix == ".md":
            continue
        data = path.read_bytes()
        out.append(data)
        lines = [line for line in data.split(b"\n") if line.strip()]
        if len(lines) > 1:
            out.extend(lines)
    return out


CORPUS = corpus_messages()


@pytest.mark.parametrize("format_id", [*FORMATS, "auto"])
def test_corpus_same_rows(format_id: str) -> None:
    assert len(CORPUS) > 200
    assert_same_rows(format_id, {}, CORPUS)


@pytest.mark.parametrize("format_id", FORMATS)
def test_benchmark_messages_same_rows(format_id: str) -> None:
    for options in OPTION_VARIANTS[format_id]:
        assert_same_rows(format_id, options, bench_messages(format_id, 300))


@pytest.mark.parametrize("format_id", FORMATS)
def test_mutated_messages_same_rows(format_id: str) -> None:
    """Every value of the benchmark's and a few golden messages replaced by odd texts
    (``-0``, ``007``, ``+1``, ``1_000``, exponents ...), fields removed, type names changed."""
    bases = bench_messages(format_id, 3)
    bases += [m for case in iter_cases(format_id) for m in case.messages() if m][::7]
    mutated: list[bytes | None] = []
    for raw in bases:
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        mutated.extend(build() for index, build in enumerate(mutations(obj)) if index % 8 == 0)
    assert len(mutated) > 500
    assert_same_rows(format_id, {}, mutated)


# rows whose numbers are mostly in their common form, with the forms that are not
ODD_NUMBERS = [
    "-0", "007", "+5", "1_000", " 5", "5 ", "-0.0", ".5", "5.", "0.0000001", "0.0000010",
    "0.000000", "0.0000000", "1E2", "1e-7", "00.5", "-00", "true", "false", "True", "1", "0",
    "\u0663", "9223372036854775807", "9223372036854775808", "18446744073709551616",
    "-9223372036854775809", "1" * 19, "9" * 30, "-1", "2", "2024-02-29", "2023-02-29",
    "0000-01-01", "2024-04-31", "2024-13-01", "2024-1-01", "20240101", " 2024-01-01",
    "2024-12-31", "9999-12-31", "0001-01-01", "00:00:00", "23:59:59.000001", "24:00:00",
    "12:00:00.5", "12:00:00.000000", "838:59:59", "-01:00:00", "1:02:03", " 12:00:00",
]  # fmt: skip
NUMBER_TEXTS = st.one_of(
    st.integers(-(2**65), 2**65).map(str),
    st.integers(-200, 200).map(str),
    st.decimals(allow_nan=False, allow_infinity=False, places=2).map(str),
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.decimals(allow_nan=False, allow_infinity=False).map(lambda d: f"{d:f}"),
    st.sampled_from(ODD_NUMBERS),
    st.dates().map(dt.date.isoformat),
    st.times().map(dt.time.isoformat),
    st.datetimes().map(lambda d: d.isoformat(sep=" ")),
    st.datetimes().map(lambda d: d.isoformat(sep="T", timespec="microseconds")),
    st.datetimes().map(lambda d: d.isoformat(sep=" ", timespec="milliseconds")),
    st.sampled_from(TEXTS),
)
NUMBER_TYPES = [
    "bigint", "bigint unsigned", "int", "int unsigned", "smallint", "tinyint", "tinyint(1)",
    "mediumint unsigned", "bit(1)", "bit(8)", "boolean", "serial", "decimal(10,2)", "decimal",
    "varchar(8)", "datetime", "date", "time",
]  # fmt: skip


@st.composite
def number_messages(draw: st.DrawFn) -> bytes:
    names = draw(st.lists(st.text(string.ascii_lowercase, min_size=1, max_size=4),
                          min_size=1, max_size=6, unique=True))  # fmt: skip
    types = {name: draw(st.sampled_from(NUMBER_TYPES)) for name in names}
    rows = [{name: draw(NUMBER_TEXTS | st.none()) for name in names} for _ in range(2)]
    kind = draw(st.sampled_from(["INSERT", "UPDATE", "DELETE"]))
    old = None
    if kind == "UPDATE":
        whole = draw(st.booleans())
        old = [{name: draw(NUMBER_TEXTS) for name in (names if whole else names[:1])} for _ in rows]
    return dump({
        "data": rows, "database": "d", "es": 1, "id": 3, "isDdl": False, "mysqlType": types,
        "old": old, "pkNames": names[:1], "sql": "", "sqlType": None, "table": "t", "ts": 2,
        "type": kind,
    })  # fmt: skip


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(number_messages(), min_size=1, max_size=3), st.sampled_from(FORMATS))
def test_random_numbers_same_rows(messages: list[bytes], format_id: str) -> None:
    assert_same_rows(format_id, {}, [*messages, *messages])  # again: the plan is cached


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(canal_messages(), st.sampled_from(FORMATS))
def test_random_rows_same_rows(message: bytes, format_id: str) -> None:
    assert_same_rows(format_id, {}, [message, message])


# --------------------------------------------------------------------------- the text path is taken
@pytest.mark.parametrize("format_id", FORMATS)
def test_benchmark_messages_keep_their_text(format_id: str) -> None:
    """The benchmark's rows take the fast path and come as canonical text (else the
    comparisons above would prove little), and only for the changelog stage."""
    decoder = MessageDecoder(format_id, canonical_text=True)
    typed = MessageDecoder(format_id)
    for message in bench_messages(format_id, 50):
        _, events = decoder.decode(message)
        for event in events:
            for image in (event.before, event.after):
                assert image is None or type(image) is CanonicalImage
        _, reference = typed.decode(message)
        assert all(type(e.after or e.before) is dict for e in reference)
        assert [type(v) for e in reference for v in (e.after or {}).values()] != [
            type(v) for e in events for v in (e.after or {}).values()
        ]
    fmt = decoder.format_for(format_id)
    assert fmt.fast_fallbacks == 0 and fmt.canonical_text
    assert not typed.format_for(format_id).canonical_text


def test_a_pickled_format_keeps_canonical_text() -> None:
    fmt = get_format("canal-json", {"primary_key": "id"})
    fmt.keep_canonical_text()
    clone = pickle.loads(pickle.dumps(fmt))
    assert clone.canonical_text and clone.options.primary_key == ("id",)
    assert not pickle.loads(pickle.dumps(get_format("canal-json"))).canonical_text


def test_zoned_plans_stay_typed() -> None:
    """A ``timezone`` plan types its timestamps (they widen the columns): no text there."""
    decoder = MessageDecoder("canal-json", {"timezone": "UTC"}, canonical_text=True)
    _, [event] = decoder.decode(bench_messages("canal-json", 1)[0])
    assert type(event.after) is dict


# --------------------------------------------------------------------------- the patterns' claims
def _int_ranges() -> list[tuple[int | None, int | None]]:
    ranges: list[tuple[int | None, int | None]] = [*INTEGER_RANGES.values(), (None, None)]
    for vendor in ("tinyint unsigned", "smallint unsigned", "mediumint unsigned", "int unsigned"):
        found = unsigned_range(vendor)
        assert found is not None
        ranges.append(found)
    return ranges


INT_RANGES = _int_ranges()
CLAIM_ALPHABET = "0123456789-+._eE \u0663"


@st.composite
def claim_texts(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return draw(st.text(CLAIM_ALPHABET, max_size=24))
    number = draw(
        st.integers(-(2**66), 2**66).map(str)
        | st.decimals(allow_nan=False, allow_infinity=False).map(str)
        | st.decimals(allow_nan=False, allow_infinity=False).map(lambda d: f"{d:f}")
    )
    chars = list(number)
    for _ in range(draw(st.integers(0, 2))):
        chars.insert(draw(st.integers(0, len(chars))), draw(st.sampled_from(CLAIM_ALPHABET)))
    return "".join(chars)


@settings(max_examples=400, deadline=None)
@given(claim_texts())
def test_a_kept_text_is_what_its_value_renders_as(text: str) -> None:
    """Every text a pattern takes is accepted by the parsers, in range, and renders back to
    itself (the claim :class:`TextRows` keeps texts by)."""
    for low, high in INT_RANGES:
        pattern = canonical_int_pattern(low, high)
        assert pattern is not None
        if re.fullmatch(pattern, text):
            value = int(text)  # canal's and DRS' first try (checked_int, int(text.strip()))
            assert value == parse_int(text)
            assert (low is None or low <= value) and (high is None or value <= high)
            assert value_text(value) == text
    if re.fullmatch(CANONICAL_DECIMAL, text):
        assert value_text(parse_decimal(text)) == text == value_text(Decimal(text))
    if re.fullmatch(CANONICAL_BOOLEAN, text):
        assert value_text(parse_bool(text)) == text == value_text(BOOL_TEXT[text])


DATE_ALPHABET = "0123456789-: T\u0663W"


@settings(max_examples=800, deadline=None)
@given(
    st.dates().map(dt.date.isoformat)
    | st.text(DATE_ALPHABET, min_size=8, max_size=12)
    | st.tuples(st.integers(0, 10000), st.integers(0, 13), st.integers(0, 32)).map(
        lambda ymd: f"{ymd[0]:04d}-{ymd[1]:02d}-{ymd[2]:02d}"
    )
)
def test_a_kept_date_is_what_its_value_renders_as(text: str) -> None:
    if re.fullmatch(CANONICAL_DATE, text):
        assert value_text(parse_date(text)) == text == value_text(dt.date.fromisoformat(text))


@settings(max_examples=800, deadline=None)
@given(
    st.tuples(
        st.datetimes(),
        st.sampled_from([" ", "T", "t"]),
        st.sampled_from(["auto", "microseconds", "milliseconds", "seconds", "minutes"]),
    ).map(lambda v: v[0].isoformat(sep=v[1], timespec=v[2]))
    | st.text(DATE_ALPHABET + ".", min_size=17, max_size=28)
)
def test_a_kept_datetime_is_written_as_its_value_renders(text: str) -> None:
    """A zone-less datetime text the pattern takes is written as its value renders (the
    canal fast path's, the ISO and the reference parser's value)."""
    if re.fullmatch(CANONICAL_NAIVE_DATETIME, text):
        form = iso_datetime_text(text)
        for value in (naive_iso(text), parse_datetime(text), dt.datetime.fromisoformat(text)):
            assert value_text(value) == form


@settings(max_examples=500, deadline=None)
@given(
    st.times().map(dt.time.isoformat)
    | st.times().map(lambda t: t.isoformat(timespec="milliseconds"))
    | st.text(DATE_ALPHABET + ".", min_size=7, max_size=16)
)
def test_a_kept_time_is_what_its_value_renders_as(text: str) -> None:
    if re.fullmatch(CANONICAL_TIME, text):
        assert value_text(parse_time(text)) == text


@settings(max_examples=200, deadline=None)
@given(st.times())
def test_common_times_are_kept(value: dt.time) -> None:
    assert re.fullmatch(CANONICAL_TIME, value_text(value))


@settings(max_examples=300, deadline=None)
@given(st.datetimes(), st.sampled_from([" ", "T"]))
def test_common_datetimes_are_kept(value: dt.datetime, sep: str) -> None:
    text = value.isoformat(sep=sep)
    leap_day = (value.month, value.day) == (2, 29)
    assert bool(re.fullmatch(CANONICAL_NAIVE_DATETIME, text)) is not leap_day
    assert leap_day or iso_datetime_text(text) == value_text(value)


@settings(max_examples=300, deadline=None)
@given(st.dates())
def test_common_dates_are_kept(value: dt.date) -> None:
    text = value.isoformat()
    leap_day = (value.month, value.day) == (2, 29)
    assert bool(re.fullmatch(CANONICAL_DATE, text)) is not leap_day


@settings(max_examples=500, deadline=None)
@given(st.integers(-(2**64), 2**64), st.sampled_from(INT_RANGES))
def test_common_integers_are_kept(value: int, bounds: tuple[int | None, int | None]) -> None:
    """An integer in its common form is kept unless it has more digits than every number of
    its length fits the range (then typed: the patterns are exact, not just safe)."""
    low, high = bounds
    pattern = canonical_int_pattern(low, high)
    assert pattern is not None
    text = str(value)
    kept = re.fullmatch(pattern, text) is not None
    fits = (low is None or low <= value) and (high is None or value <= high)
    if kept:
        assert fits
    digits = len(text.lstrip("-"))
    limit = high if value >= 0 else (None if low is None else -low)
    if fits and (digits <= 18 if limit is None else 10**digits - 1 <= limit):
        assert kept, (text, bounds)


@settings(max_examples=500, deadline=None)
@given(
    st.integers(0, 8).flatmap(
        lambda places: st.decimals(allow_nan=False, allow_infinity=False, places=places)
    )
)
def test_common_decimals_are_kept(value: Decimal) -> None:
    text = str(value)
    if "E" not in text and not text.startswith("-0"):
        assert re.fullmatch(CANONICAL_DECIMAL, text), text
    else:
        assert not re.fullmatch(CANONICAL_DECIMAL, text) or value_text(Decimal(text)) == text


def test_forms_that_are_not_canonical_are_not_kept() -> None:
    for text in ("007", "+5", "1_000", " 5", "5 ", "-0", "00", "\u0663", "1e3"):
        for low, high in INT_RANGES:
            assert not re.fullmatch(canonical_int_pattern(low, high) or "", text), text
    for text in ("-0.0", "-0", ".5", "5.", "0.0000001", "0.0000000", "1E2", "00.5", " 1.5"):
        assert not re.fullmatch(CANONICAL_DECIMAL, text), text
    for text in ("True", "1", "TRUE", " true"):
        assert not re.fullmatch(CANONICAL_BOOLEAN, text), text
    for text in ("0000-01-01", "2023-02-29", "2024-04-31", "2024-1-01", "20240101", "2024-W01-1"):
        assert not re.fullmatch(CANONICAL_DATE, text), text
    for text in (
        "2024-01-01 00:00:01.000000", "2024-01-01 00:00:01.5", "2024-01-01t00:00:01",
        "2024-01-01 24:00:00", "2024-01-01 00:00", "2024-01-01 00:00:01Z", " 2024-01-01 00:00:01",
        "2024-01-01 00:00:01.1234567", "2024-02-29 00:00:00",
    ):  # fmt: skip
        assert not re.fullmatch(CANONICAL_NAIVE_DATETIME, text), text
    for text in ("24:00:00", "12:00:00.5", "12:00:00.000000", "838:59:59", "-01:00:00", "1:02:03"):
        assert not re.fullmatch(CANONICAL_TIME, text), text
