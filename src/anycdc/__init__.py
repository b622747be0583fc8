"""anycdc: decode, encode and apply every vendor CDC format.

>>> import anycdc
>>> fmt = anycdc.get_format("canal-json")
>>> [e.op.value for e in fmt.decode(b'{"database":"d","table":"t","type":"INSERT","data":[{"id":"1"}],"pkNames":["id"],"es":1,"ts":2,"id":3,"isDdl":false}')]
['insert']
"""

from anycdc.errors import DecodeError, EncodeError, OptionError, UnknownFormatError
from anycdc.event import ChangeEvent, Column, Op, Position, event_from_json, event_to_json
from anycdc.formats import Detection, detect, format_ids, get_format

__all__ = [
    "ChangeEvent",
    "Column",
    "DecodeError",
    "Detection",
    "EncodeError",
    "Op",
    "OptionError",
    "Position",
    "UnknownFormatError",
    "detect",
    "event_from_json",
    "event_to_json",
    "format_ids",
    "get_format",
]
__version__ = "0.1.0"
