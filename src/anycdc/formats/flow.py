"""The flow of the single-row JSON formats, once: message -> op -> header -> images -> event.

Maxwell, GoldenGate, SharePlex and OceanBase OMS (and any format that writes one row
change per JSON object) share one flow, as Apache Paimon's CDC ``RecordParser`` owns
``extractRecords`` and each format fills a few hooks. :class:`RowFlow` owns it and its errors:

1. the message is an object; the op code is a string field of the root or of a header
   object (``op_field`` in ``header_field``); an unknown code is ``unknown <op_field>``
   (a null one is missing where the vendor writes null for absent fields: ``null_missing``);
2. the format reads its metadata (:meth:`RowFlow.header`: names, time, position, ...);
3. a row change (insert, update, delete, snapshot) gets its images
   (:meth:`RowFlow.images`: pairing before/after, partial marking); an image the op
   needs and the message lacks is ``missing '<field>' when '<op_field>' is '<code>'``
   (:meth:`RowFlow.missing`);
4. the key: the names the message gives (:meth:`RowFlow.key_names`), where the
   configured key wins (:meth:`Format.primary_key`);
5. typed formats type both images by their columns (:meth:`RowFlow.columns_of`, which
   sees the paired images, :meth:`Format.convert_image`: invalid values are marked,
   never a crash); a format whose values carry their own types (MongoDB's BSON documents)
   reads images and columns in one pass instead (:meth:`RowFlow.typed_images`, steps 3
   and 5), with the change's ``patch`` where it gives field changes, not an after image;
6. the event is built in one place (:meth:`RowFlow.flow`, steps 2 to 6, ending in the one
   builder of every flow, :func:`~anycdc.formats.events.build_event`), which a format's
   fast path (:meth:`Format.decode_fast`, refusing with :class:`~anycdc.formats.base.NotFast`)
   calls too, after reading the common message's envelope its own quicker way (it may
   hand over the images it paired, and the columns of images its decode typed); a message
   carrying several rows reads its header once and hands it to the flow of each row.

A format is its wire names (constants), an op table (``ops``: code ->
:class:`~anycdc.formats.events.OpRule`, the op rule of every flow) and these hooks:

>>> from typing import Any
>>> from anycdc.formats.base import Capabilities
>>> class Tiny(RowFlow):
...     id, vendor, title = "tiny-json", "example", "one row per message"
...     capabilities = Capabilities(Capabilities.Before.FULL, Capabilities.Types.NONE,
...                                 key_names=True)
...     op_field = "op"
...     ops = {"c": OpRule(Op.INSERT), "d": OpRule(Op.DELETE), "t": OpRule(Op.TRUNCATE)}
...     @classmethod
...     def sniff(cls, message: Any) -> float:
...         return 0.0
...     def header(self, msg: Any, head: Any, code: str, rule: OpRule) -> Header:
...         return Header(table=msg.get("table"))
...     def images(self, msg: Any, head: Any, code: str, rule: OpRule) -> Images:
...         return self.one_row(rule, self.required_image(msg, "row", code))
...     def key_names(self, msg: Any, head: Any, rule: OpRule, images: Images) -> Any:
...         return msg.get("pk")
>>> [e] = Tiny().decode('{"op":"c","table":"t","pk":["id"],"row":{"id":1}}')
>>> e.op.value, e.table, e.key, e.after
('insert', 't', ('id',), {'id': 1})
>>> Tiny({"primary_key": "no"}).decode('{"op":"t","table":"t"}')[0].key
('no',)
>>> Tiny().decode('{"op":"d"}')
Traceback (most recent call last):
anycdc.errors.DecodeError: tiny-json: $: missing 'row' when 'op' is 'd'
>>> Tiny().decode('{"op":"x"}')
Traceback (most recent call last):
anycdc.errors.DecodeError: tiny-json: $.op: unknown op 'x'

A typed format says its columns' types; values that do not parse stay as sent, marked:

>>> from anycdc.values import INT64
>>> class TypedTiny(Tiny):
...     def columns_of(self, msg: Any, head: Any, images: Images) -> Any:
...         return {"id": Column(INT64), "n": Column(INT64)}
>>> [e] = TypedTiny().decode('{"op":"c","row":{"id":"7","n":"x"}}')
>>> e.after, e.invalid, e.columns["id"].type.name
({'id': 7, 'n': 'x'}, ('n',), 'int64')

A format whose values carry their types reads images, columns and patch in one pass:

>>> class DocTiny(Tiny):
...     def typed_images(self, msg: Any, head: Any, code: str, rule: OpRule) -> Any:
...         row = self.required_image(msg, "row", code)
...         return self.one_row(rule, row), {"id": Column(INT64)}, msg.get("patch")
>>> [e] = DocTiny().decode('{"op":"c","row":{"id":7},"patch":{"$set":{"n":1}}}')
>>> e.after, e.columns["id"].type.name, e.patch
({'id': 7}, 'int64', {'$set': {'n': 1}})
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final, NoReturn

from anycdc.event import ROW_OPS, ChangeEvent, Column, Op
from anycdc.formats.base import Cache, Format, expect_object, expect_str, require
from anycdc.formats.events import Header, OpRule, build_event
from anycdc.values import epoch_ms, parse_datetime

# the ops for hooks' hot paths: ``Op.INSERT`` is an enum lookup (~65 ns), a global is not
INSERT: Final = Op.INSERT
UPDATE: Final = Op.UPDATE
DELETE: Final = Op.DELETE
DDL: Final = Op.DDL

_TIMES_CACHED: Final = 1024


Images = tuple[dict[str, Any] | None, dict[str, Any] | None, tuple[str, ...]]
"""The images of a row change as the format pairs them: (before, after, the names of
those that are partial). A plain tuple: one is built per message."""

NO_IMAGES: Final[Images] = (None, None, ())


class RowFlow(Format):
    """The flow of a single-row JSON format (see the module docstring); formats fill hooks.

    Class attributes: ``op_field`` (the op code's wire name), ``op_noun`` (what the error of
    an unknown code calls it; None: ``op_field``), ``header_field`` (the object
    holding it, None: the root), ``ops`` (code -> :class:`OpRule`; a format whose codes are
    options sets it per instance) and ``rowless_key`` (False: events without images, such
    as DDL and markers, carry no key, not even the configured one); ``null_missing``
    (True: a null op code is a missing one, ``missing required field``, as the format's
    vendor writes null for absent fields).
    """

    op_field: ClassVar[str]
    op_noun: ClassVar[str | None] = None
    header_field: ClassVar[str | None] = None
    rowless_key: ClassVar[bool] = True
    null_missing: ClassVar[bool] = False
    ops: Mapping[str, OpRule]

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        self.header_path: Final = "$" if self.header_field is None else f"$.{self.header_field}"
        self.op_path: Final = f"{self.header_path}.{self.op_field}"
        self._typed = type(self).columns_of is not RowFlow.columns_of
        self._typed_images = type(self).typed_images is not RowFlow.typed_images
        self.time_zone: dt.tzinfo = dt.UTC
        """The zone of zone-less datetime texts (:meth:`datetime_ms`; set it once, in
        ``__init__``: parsed times are kept by text)."""
        self.times: Cache[str, int] = Cache(_TIMES_CACHED)
        """Datetime text -> ts_ms, kept by :meth:`datetime_ms` (a topic's messages share
        few commit times); a hook on a hot path may look a text up here first."""

    # ------------------------------------------------------------------ hooks
    def header(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Header:
        """The event's metadata fields (names, time, position, tx, extra, ddl) of a message;
        ``head`` is the object holding the op code (``msg`` itself without ``header_field``)."""
        return Header()

    def images(self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule) -> Images:
        """The images of a row change (ops in :data:`~anycdc.event.ROW_OPS`), paired and marked partial
        where they lack columns; :meth:`missing` for an image the op needs."""
        raise NotImplementedError

    def key_names(
        self, msg: dict[str, Any], head: dict[str, Any], rule: OpRule, images: Images
    ) -> Sequence[str] | None:
        """The key column names the message gives (None: it names none)."""
        return None

    def columns_of(
        self, msg: dict[str, Any], head: dict[str, Any], images: Images
    ) -> Mapping[str, Column] | None:
        """The columns' types of a row change's ``images`` (as :meth:`images` paired them)
        where the message carries them (typed formats override it); None: values stay as
        sent."""
        return None

    def typed_images(
        self, msg: dict[str, Any], head: dict[str, Any], code: str, rule: OpRule
    ) -> tuple[Images, Mapping[str, Column], Mapping[str, Any] | None]:
        """Instead of :meth:`images` and :meth:`columns_of`, for a format whose values
        carry their own types (reading a BSON document types it): a row change's images,
        their columns, and its patch (update operators to apply to the stored document,
        as MongoDB's ``$set``/``$unset``; None: the images say the change)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the flow
    def decode_object(self, obj: Any, key: bytes | None = None) -> list[ChangeEvent]:
        msg = obj if type(obj) is dict else expect_object(self.id, obj, "$")
        head = msg
        if self.header_field is not None:
            head = expect_object(
                self.id, require(self.id, msg, self.header_field, "$"), self.header_path
            )
        code = head.get(self.op_field)
        if type(code) is not str:
            self.unreadable(msg)
            found = require(self.id, head, self.op_field, self.header_path)
            if found is None and self.null_missing:
                raise self.error(self.header_path, f"missing required field {self.op_field!r}")
            code = expect_str(self.id, found, self.op_path)
        rule = self.ops.get(code)
        if rule is None:
            self.unreadable(msg)
            raise self.error(self.op_path, f"unknown {self.op_noun or self.op_field} {code!r}")
        return [self.flow(msg, head, code, rule)]

    def unreadable(self, msg: dict[str, Any]) -> None:
        """A hook for a message whose op code is missing or unknown, before the flow's error:
        a format whose vendor writes row-less shapes without an op code (Maxwell's encrypted
        messages) raises its own, clearer error here. A format that checks such shapes on
        messages with a known op code does it in :meth:`header`: there the check costs no
        call of its own on the hot path."""

    def flow(
        self,
        msg: dict[str, Any],
        head: dict[str, Any],
        code: str,
        rule: OpRule,
        images: Images | None = None,
        typed: Mapping[str, Column] | None = None,
        h: Header | None = None,
    ) -> ChangeEvent:
        """The event of a message whose op is known: header, images, key, types, and the
        event, built here only. A fast path that read the envelope its own way hands the
        message here, with the ``images`` it paired by :meth:`images`' rules (None: the
        hooks pair them) and ``typed``: the columns of images its decode typed already;
        ``h``: the header, read already, of a message of several rows."""
        if h is None:
            h = self.header(msg, head, code, rule)
        columns = typed
        invalid: tuple[str, ...] = ()
        patch: Mapping[str, Any] | None = None
        if rule.rows:
            if images is None:
                if self._typed_images:
                    images, columns, patch = self.typed_images(msg, head, code, rule)
                else:
                    images = self.images(msg, head, code, rule)
            names = self.key_names(msg, head, rule, images)
            before, after, partial = images
            if self._typed and columns is None:
                columns = self.columns_of(msg, head, images)
                if columns is not None:
                    refused: list[str] = []
                    if before is not None:
                        before = self.convert_image(before, columns, "$.before", refused)
                    if after is not None:
                        after = self.convert_image(after, columns, "$.after", refused)
                    invalid = tuple(refused)
        elif self.rowless_key:
            names = self.key_names(msg, head, rule, NO_IMAGES)
            before = after = None
            partial = ()
        else:  # the format's rowless events carry no key
            return build_event(self.id, rule.op, h, split=rule.split)
        key = self.unnamed_key if names is None else self.primary_key(names)
        return build_event(
            self.id, rule.op, h, key, before, after, columns, partial, invalid, rule.split, patch
        )

    # ------------------------------------------------------------------ helpers
    def missing(self, field: str, code: str) -> NoReturn:
        """Raise the error of an image (or field) the op needs and the message lacks."""
        raise self.error("$", f"missing {field!r} when {self.op_field!r} is {code!r}")

    def image(self, obj: Mapping[str, Any], field: str, path: str = "$") -> dict[str, Any] | None:
        """The row image ``obj[field]``: an object, or None when absent or null."""
        value = obj.get(field)
        if value is None or type(value) is dict:
            return value
        return expect_object(self.id, value, f"{path}.{field}")

    def one_row(self, rule: OpRule, row: dict[str, Any], partial: tuple[str, ...] = ()) -> Images:
        """The images of a change carrying one row: a delete's before image, else the after."""
        return (row, None, partial) if rule.op is DELETE else (None, row, partial)

    def required_image(self, msg: Mapping[str, Any], field: str, code: str) -> dict[str, Any]:
        """The row image ``msg[field]`` the op ``code`` needs (:meth:`missing` without it)."""
        image = msg.get(field)
        if type(image) is dict:
            return image
        if image is None:
            self.missing(field, code)
        return expect_object(self.id, image, f"$.{field}")

    def datetime_ms(self, raw: Any, path: str, what: str) -> int | None:
        """``ts_ms`` of a datetime text (zone-less: in :attr:`time_zone`), parsed once per
        text; None when absent or empty; else ``invalid <what> '<text>'``."""
        if raw is None or raw == "":
            return None
        if type(raw) is str:
            found = self.times.get(raw)
            if found is not None:
                return found
        try:
            ms = epoch_ms(parse_datetime(expect_str(self.id, raw, path), self.time_zone))
        except ValueError:
            raise self.error(path, f"invalid {what} {raw!r}") from None
        return self.times.put(raw, ms)


__all__ = [
    "DDL",
    "DELETE",
    "INSERT",
    "NO_IMAGES",
    "ROW_OPS",
    "UPDATE",
    "Images",
    "RowFlow",
]
