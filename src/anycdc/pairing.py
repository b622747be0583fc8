"""Pair the halves of split updates into whole updates.

DataWorks (split mode) writes an update as two messages with the same
``sequenceId``: ``UPDATE_BEFOR`` (before image only) then ``UPDATE_AFTER``
(after image only). Decoding is stateless, so each half decodes to an update
event marked ``split="before"`` / ``split="after"``. :class:`SplitUpdatePairer`
is the small stateful step that joins them; the pipeline keeps one per Kafka
partition (both halves always share a partition: vendors key by primary key).

>>> from anycdc.event import ChangeEvent, Op, Position
>>> pairer = SplitUpdatePairer()
>>> half = dict(op=Op.UPDATE, format="dataworks-json", table="t", key=("id",), position=Position((7,)))
>>> pairer.push(ChangeEvent(**half, before={"id": 1, "v": "a"}, split="before"))
[]
>>> [(e.before, e.after, e.split) for e in pairer.push(ChangeEvent(**half, after={"id": 1, "v": "b"}, split="after"))]
[({'id': 1, 'v': 'a'}, {'id': 1, 'v': 'b'}, None)]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from anycdc.event import ChangeEvent

SPLIT_BEFORE = "before"
SPLIT_AFTER = "after"


class SplitUpdatePairer:
    """Joins ``split`` update halves that share a table and a position.

    Every other event passes through unchanged and in order. A lone after-half
    whose before-half never came passes on as it is (it still carries the full
    new row); a before-half followed by anything other than its partner is
    emitted first as it is, so nothing is ever held back for long or dropped.
    """

    def __init__(self) -> None:
        self._pending: ChangeEvent | None = None

    def push(self, event: ChangeEvent) -> list[ChangeEvent]:
        """Feed one event; returns the events that are ready, in order."""
        out: list[ChangeEvent] = []
        if self._pending is not None:
            if _is_partner(self._pending, event):
                merged = _merge(self._pending, event)
                self._pending = None
                return [merged]
            out.append(self._pending)
            self._pending = None
        if event.split == SPLIT_BEFORE:
            self._pending = event
        else:
            out.append(event)
        return out

    def flush(self) -> list[ChangeEvent]:
        """Emit a before-half still waiting (end of a batch or of the stream)."""
        pending, self._pending = self._pending, None
        return [pending] if pending is not None else []

    def pair_all(self, events: Iterable[ChangeEvent]) -> Iterator[ChangeEvent]:
        """Pair a whole sequence, flushing at the end."""
        for event in events:
            yield from self.push(event)
        yield from self.flush()


def _identity(event: ChangeEvent) -> tuple[Any, ...]:
    return (event.database, event.schema, event.table, event.position)


def _is_partner(before_half: ChangeEvent, event: ChangeEvent) -> bool:
    return event.split == SPLIT_AFTER and _identity(event) == _identity(before_half)


def _merge(before_half: ChangeEvent, after_half: ChangeEvent) -> ChangeEvent:
    columns = dict(before_half.columns or {})
    columns.update(after_half.columns or {})
    partial = tuple(p for p in (*before_half.partial, *after_half.partial) if p)
    invalid = tuple(dict.fromkeys((*before_half.invalid, *after_half.invalid)))
    return after_half.with_changes(
        before=before_half.before,
        columns=columns or None,
        split=None,
        partial=tuple(dict.fromkeys(partial)),
        invalid=invalid,
        key=after_half.key or before_half.key,
    )
