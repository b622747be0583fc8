"""Every golden case decodes to exactly its expected canonical events, and is detected."""

from __future__ import annotations

import json

import pytest

from anycdc.formats import detect, format_class
from tests.cases import Case, decode_case, iter_cases

CASES = list(iter_cases())


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_decodes_to_expected(case: Case) -> None:
    assert case.expected_path.exists(), f"missing {case.expected_path.name}"
    decoded = decode_case(case)
    assert decoded == case.expected()
    if case.foreign:  # another format's messages: an error each, never rows
        assert len(decoded) == len(case.messages())
        assert all(e.keys() == {"error"} for e in decoded)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_detector_classifies_case(case: Case) -> None:
    # a schema-driven format (drs-avro) is named by configuration only: its messages carry
    # no shape of their own, so the detector must say unknown, never guess another format
    schema_driven = not format_class(case.format_id).detectable
    for index, message in enumerate(case.messages()):
        if message is None:
            continue  # a tombstone has no shape
        found = detect(message).format
        wanted = (
            "unknown"
            if schema_driven
            or case.foreign
            or (_invalid_json(message) and not case.input_path.suffix == ".avro")
            else case.format_id
        )
        assert found == wanted, f"message {index} detected as {found}, expected {wanted}"


def _invalid_json(message: bytes) -> bool:
    try:
        json.loads(message)
    except ValueError:
        return True
    return False


def test_every_format_has_golden_cases() -> None:
    from anycdc.formats import format_ids

    have = {c.format_id for c in CASES}
    assert set(format_ids()) <= have, f"formats without cases: {set(format_ids()) - have}"
