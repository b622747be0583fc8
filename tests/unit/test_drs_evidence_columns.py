"""DRS' detection evidence reads a type map's binary and TIMESTAMP columns, kept per map
content (auto-detection reads them for every message): what is kept must be what a
fresh read gives, whatever map a message carries."""

from __future__ import annotations

from typing import Any

import pytest

from anycdc.formats.base import Cache
from anycdc.formats.canal import detect
from anycdc.formats.canal.detect import read_drs_evidence


def _evidence_uncached(message: dict[str, Any]) -> tuple[int, int]:
    detect._EVIDENCE_COLUMNS.clear()
    return read_drs_evidence(message)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # a byte list in a binary column: DRS only
        ({"data": [{"b": "[1, 2]"}], "type": "INSERT", "mysqlType": {"b": "varbinary(16)"}}, (3, 0)),
        # the same column typed as text: nothing of DRS
        ({"data": [{"b": "[1, 2]"}], "type": "INSERT", "mysqlType": {"b": "varchar(16)"}}, (1, 0)),
        # a MySQL TIMESTAMP as datetime text proves JSON-C, as epoch seconds proves JSON
        ({"data": [{"t": "2024-01-02 03:04:05"}], "type": "INSERT", "mysqlType": {"t": "timestamp"}, "jobId": "j"}, (3, 1)),
        ({"data": [{"t": "1700000000"}], "type": "INSERT", "mysqlType": {"t": "timestamp(3)"}, "jobId": "j"}, (3, -1)),
        # a TIMESTAMP in columnType (GaussDB, which proves JSON) is not read: datetime text
        # there would otherwise prove JSON-C too, and the variant would be open (0)
        ({"data": [{"t": "2024-01-02 03:04:05"}], "type": "INSERT", "columnType": {"t": "timestamp"}}, (3, -1)),
        # a type that is no text is not read (and a map holding a list is not kept)
        ({"data": [{"b": "[1]", "c": "[2]"}], "type": "INSERT", "mysqlType": {"b": ["blob"], "c": "blob"}}, (3, 0)),
        ({"data": [{"b": "[1]"}], "type": "INSERT", "mysqlType": {"b": ["blob"]}}, (1, 0)),
        # no sign, no binary or TIMESTAMP column: flat whatever its rows hold (told without
        # reading them), a DELETE's row in data and epoch-like text beside an id included
        ({"data": [{"t": "1700000000"}], "type": "DELETE", "mysqlType": {"t": "int"}, "id": 1}, (1, 0)),
        # the same text in a TIMESTAMP column beside an id: DRS-like (JSON's rendering)
        ({"data": [{"t": "1700000000"}], "type": "INSERT", "mysqlType": {"t": "timestamp"}, "id": 1}, (2, 0)),
        # a sign of DRS (its field order) with no binary or TIMESTAMP column: the rows read
        ({"mysqlType": {"a": "int"}, "data": [{"a": "1"}], "type": "DELETE"}, (3, 1)),
        ({"mysqlType": {"a": "int"}, "data": [{"a": 1}], "type": "INSERT"}, (2, 0)),
    ],
)  # fmt: skip
def test_evidence_is_what_a_fresh_read_gives(
    message: dict[str, Any], expected: tuple[int, int]
) -> None:
    assert _evidence_uncached(message) == expected
    assert read_drs_evidence(message) == expected  # kept: the same
    assert read_drs_evidence(dict(message)) == expected  # another dict of the same content


def test_a_kept_map_is_kept_by_content_and_by_which_field_held_it() -> None:
    detect._EVIDENCE_COLUMNS.clear()
    types = {"t": "timestamp", "b": "blob"}
    mysql = detect._evidence_columns(dict(types), True)
    assert mysql == (("b",), (("t", True),))
    # the same content in columnType: no TIMESTAMP read (the rendering rule is MySQL's)
    assert detect._evidence_columns(dict(types), False) == (("b",), ())
    # another content: its own columns, not the kept ones
    assert detect._evidence_columns({"t": "timestamp with time zone"}, True) == (
        (),
        (("t", False),),
    )
    assert detect._evidence_columns(dict(types), True) is mysql


def test_the_kept_maps_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(detect, "_EVIDENCE_COLUMNS", Cache(3))
    for n in range(10):
        detect._evidence_columns({f"c{n}": "blob"}, True)
        assert len(detect._EVIDENCE_COLUMNS) <= 3
    assert detect._evidence_columns({"c9": "blob"}, True) == (("c9",), ())
