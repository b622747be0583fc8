"""``canonical-json``: anycdc's own canonical change events as a wire format.

What ``anycdc decode`` prints can be fed back to ``anycdc run`` or converted
to any vendor format; the simulator and the tests use it to express events no
single vendor format can (partial images, every logical type).

>>> fmt = CanonicalJson()
>>> line = b'{"op":"insert","format":"canal-json","table":"t","key":["id"],"after":{"id":1},"columns":{"id":{"type":"int64"}}}'
>>> [(e.op.value, e.after["id"], e.format) for e in fmt.decode(line)]
[('insert', 1, 'canal-json')]
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from anycdc.errors import DecodeError
from anycdc.event import ChangeEvent, Op, event_from_dict, event_to_json
from anycdc.formats.base import Capabilities, Format, expect_object

FIELD_OP: Final = "op"
FIELD_FORMAT: Final = "format"
FIELD_COLUMNS: Final = "columns"
FIELD_PARTIAL: Final = "partial"
_OPS: Final = frozenset(op.value for op in Op)


class CanonicalJson(Format):
    """One canonical event per message (the JSON form of :mod:`anycdc.event`)."""

    id: ClassVar[str] = "canonical-json"
    vendor: ClassVar[str] = "anycdc"
    title: ClassVar[str] = "anycdc canonical change event (JSON Lines)"
    capabilities: ClassVar[Capabilities] = Capabilities(
        before_image=Capabilities.Before.VARIES,
        types=Capabilities.Types.LOGICAL,
        key_names=True,
        before_detail="as given",
        types_detail="with vendor type names",
        position="position (integers)",
        key_detail="key",
    )

    sniff_keys = frozenset({FIELD_FORMAT})

    @classmethod
    def sniff(cls, message: Any) -> float:
        if not isinstance(message, dict):
            return 0.0
        if not (isinstance(message.get(FIELD_OP), str) and FIELD_FORMAT in message):
            return 0.0
        if FIELD_PARTIAL not in message:
            return 0.0
        return 0.99 if message[FIELD_OP] in _OPS else 0.8

    def decode_object(self, obj: Any, key: bytes | None = None) -> list[ChangeEvent]:
        data = expect_object(self.id, obj, "$")
        op = data.get(FIELD_OP)
        if not isinstance(op, str) or op not in _OPS:
            raise DecodeError(self.id, "$.op", f"unknown op {op!r}")
        if FIELD_FORMAT not in data:
            raise DecodeError(self.id, "$", "missing required field 'format'")
        if data.get(FIELD_COLUMNS) is not None:
            expect_object(self.id, data[FIELD_COLUMNS], "$.columns")
        try:
            event = event_from_dict(data)
        except (ValueError, TypeError, KeyError, AttributeError, ArithmeticError) as exc:
            raise DecodeError(self.id, "$", f"invalid canonical event: {exc}") from None
        event_key = self.primary_key(event.key)
        if event_key and event_key != event.key:
            event = event.with_changes(key=event_key)
        return [event]

    def encode(self, event: ChangeEvent) -> list[bytes]:
        return [event_to_json(event).encode("utf-8")]
