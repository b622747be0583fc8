"""What every flow owner shares to make an event: one op rule, one header, one builder.

Each format keeps its own op table (its wire vocabulary: code -> :class:`OpRule`), and each
owner of a flow (:class:`~anycdc.formats.flow.RowFlow`, the Canal family, the DataWorks
family, Debezium) reads a message its own way; what they all do last is the same, and is
written here once:

* :class:`OpRule` says what a vendor's op code means: the canonical op, whether its events
  carry images (``rows``), which image the op needs (``images``: DataWorks' pairing reads
  it), the half of a split update it is (``split``) and whether the vendor's code is kept
  in ``extra`` (``keep_code``);
* :class:`Header` holds the event's fields a format reads from a message's metadata (names,
  time, position, transaction, row id, DDL text, ``extra``), whichever owner reads them;
* :func:`build_event` makes the :class:`~anycdc.event.ChangeEvent` of an op, a header and
  the row change's parts (key, images, columns, partial and invalid marks, split, patch).

>>> from anycdc.event import Op, Position
>>> rule = OpRule(Op.INSERT)
>>> rule.rows, rule.images, rule.split
(True, 'insert', None)
>>> OpRule(Op.UPDATE, images=RULE_UPDATE_BEFORE, keep_code=True).images
'update-before'
>>> head = Header(database="shop", table="orders", ts_ms=1, position=Position((7,)))
>>> e = build_event("tiny-json", rule.op, head, ("id",), None, {"id": 1})
>>> e.op.value, e.qualified_table, e.key, e.after, e.position.parts
('insert', 'shop.orders', ('id',), {'id': 1}, (7,))
>>> build_event("tiny-json", Op.DDL, Header(table="t", ddl="DROP TABLE t")).ddl
'DROP TABLE t'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Final

import msgspec

from anycdc.event import ROW_OPS, ChangeEvent, Column, Op, Position

# --------------------------------------------------------------------------- op rules
# Which image an op code needs, and what it makes of the other (the pairing that reads
# them: DataWorks' ``pair_images``; a flow whose formats pair images by the op reads ``op``)
RULE_INSERT: Final = "insert"  # after required
RULE_DELETE: Final = "delete"  # before required
RULE_UPDATE: Final = "update"  # after required, before optional (a whole update)
RULE_UPDATE_AFTER: Final = "update-after"  # after required; before present -> whole, else half
RULE_UPDATE_BEFORE: Final = "update-before"  # before required; the before half
RULE_NONE: Final = "none"  # no row

_IMAGES_OF: Final[Mapping[Op, str]] = {
    Op.INSERT: RULE_INSERT,
    Op.SNAPSHOT: RULE_INSERT,
    Op.UPDATE: RULE_UPDATE,
    Op.DELETE: RULE_DELETE,
}


@dataclass(frozen=True, slots=True)
class OpRule:
    """What one vendor op code means: the canonical ``op``; ``rows`` (derived): whether its
    events carry images (the op is one of :data:`~anycdc.event.ROW_OPS`); ``images``: which
    image the code needs (one of the ``RULE_*`` names; by default the op's own: an insert's
    after image, a delete's before image, none for DDL and markers); ``split``: the half of
    a split update the code always is; ``keep_code``: the vendor's code is kept in
    ``extra["vendor_op"]`` (several codes give one op)."""

    op: Op
    _: KW_ONLY
    images: str = ""
    split: str | None = None
    keep_code: bool = False
    rows: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rows", self.op in ROW_OPS)
        if not self.images:
            object.__setattr__(self, "images", _IMAGES_OF.get(self.op, RULE_NONE))


def op_rules(codes: Mapping[str, Op]) -> dict[str, OpRule]:
    """The plain rule of each code of an op table written as code -> op.

    >>> op_rules({"c": Op.INSERT})["c"].rows
    True
    """
    return {code: OpRule(op) for code, op in codes.items()}


# --------------------------------------------------------------------------- the header
class Header(msgspec.Struct, gc=False):
    """The event's fields a format reads from a message's metadata (any op), whichever
    owner reads them; see :class:`~anycdc.event.ChangeEvent` (a struct: built in C, one per
    message, untracked by the garbage collector: it holds no cycle). Mutable: an owner may
    complete it (a schema change's names, a DDL statement) before the event is built.

    >>> Header(table="t").extra
    {}
    """

    database: str | None = None
    schema: str | None = None
    table: str | None = None
    ts_ms: int | None = None
    position: Position | None = None
    tx: str | None = None
    row_id: str | None = None
    extra: dict[str, Any] = msgspec.field(default_factory=dict)
    ddl: str | None = None


# --------------------------------------------------------------------------- the builder
def build_event(
    format_id: str,
    op: Op,
    head: Header,
    key: tuple[str, ...] | None = None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    columns: Mapping[str, Column] | None = None,
    partial: tuple[str, ...] = (),
    invalid: tuple[str, ...] = (),
    split: str | None = None,
    patch: Mapping[str, Any] | None = None,
) -> ChangeEvent:
    """The event of ``op`` with ``head``'s fields and a row change's parts (all None or
    empty for an event without images): every flow owner's last step, here only.

    >>> build_event("x", Op.UPDATE, Header(), None, {"a": 1}, {"a": 2}, split="after").split
    'after'
    """
    if split is None and patch is None and not invalid and head.ddl is None:
        # the common event: 15 keywords (up to 15, msgspec matches keywords fast; above,
        # 3x slower), the rare fields left to their defaults
        return ChangeEvent(
            op=op, format=format_id, database=head.database, schema=head.schema,
            table=head.table, key=key, before=before, after=after, columns=columns,
            ts_ms=head.ts_ms, position=head.position, tx=head.tx, partial=partial,
            row_id=head.row_id, extra=head.extra,
        )  # fmt: skip
    return ChangeEvent(
        op=op, format=format_id, database=head.database, schema=head.schema, table=head.table,
        key=key, before=before, after=after, columns=columns, ts_ms=head.ts_ms,
        position=head.position, tx=head.tx, ddl=head.ddl, partial=partial, split=split,
        invalid=invalid, patch=patch, row_id=head.row_id, extra=head.extra,
    )  # fmt: skip


__all__ = [
    "RULE_DELETE",
    "RULE_INSERT",
    "RULE_NONE",
    "RULE_UPDATE",
    "RULE_UPDATE_AFTER",
    "RULE_UPDATE_BEFORE",
    "Header",
    "OpRule",
    "build_event",
    "op_rules",
]
