"""Where a zone is asked for (``-o timezone=``), a fixed offset is one too: ``+08:00``."""

from __future__ import annotations

import datetime as dt

import pytest

from anycdc.errors import OptionError
from anycdc.formats import get_format

MESSAGE = (
    b'{"data":[{"id":"1","dt":"2021-06-25 17:51:53"}],"database":"shop","table":"items",'
    b'"type":"INSERT","isDdl":false,"pkNames":["id"],"es":1,"ts":2,'
    b'"sqlType":{"id":4,"dt":93},"mysqlType":{"id":"int","dt":"datetime"}}'
)


@pytest.mark.parametrize(
    ("zone", "offset"), [("+08:00", 8 * 60), ("+0800", 8 * 60), ("-05:30", -330), ("+08", 480)]
)
def test_an_offset_gives_zone_less_datetimes_that_offset(zone: str, offset: int) -> None:
    (event,) = get_format("canal-json", {"timezone": zone}).decode(MESSAGE)
    value = event.after["dt"]
    assert isinstance(value, dt.datetime)
    assert value.utcoffset() == dt.timedelta(minutes=offset)
    assert value.replace(tzinfo=None) == dt.datetime(2021, 6, 25, 17, 51, 53)


@pytest.mark.parametrize("zone", ["+25:00", "Mars/Olympus", "8"])
def test_neither_a_zone_nor_an_offset_is_refused_naming_both_forms(zone: str) -> None:
    with pytest.raises(OptionError, match=r"timezone.*zone id.*offset"):
        get_format("canal-json", {"timezone": zone})
