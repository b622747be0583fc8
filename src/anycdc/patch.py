"""MongoDB update operators as partial row updates.

A MongoDB ``update`` change carries operators, not the new document:
``{"$set": {"c1": "aaa"}, "$unset": ["c2"]}``. Top-level ``$set``/``$unset``
are exactly a partial update of a row whose columns are the document's
fields: set fields take their new value, unset fields become NULL, every
other field keeps its current value. That is how the pipeline applies them.
``$set`` values are Extended JSON (relaxed): they are typed as a document's
fields are (``{"$date": ...}`` a timestamp, ``{"$numberDecimal": ...}`` a
decimal, ``{"$binary": ...}`` bytes, documents and arrays JSON text).
Operators that need the current value (``$inc``, ``$push``, dotted paths
into nested documents) cannot be applied without it and are refused with a
clear reason (they go to the dead-letter table).

>>> from anycdc.event import ChangeEvent, Column, Op
>>> e = ChangeEvent(op=Op.UPDATE, format="drs-mongo-json", table="c", key=("_id",),
...                 before={"_id": "64650c"}, patch={"$set": {"c1": "aaa"}, "$unset": ["c2"]})
>>> dict(patch_as_partial_update(e).after), patch_as_partial_update(e).partial
({'_id': '64650c', 'c1': 'aaa', 'c2': None}, ('after',))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from anycdc.errors import AnyCdcError
from anycdc.event import ChangeEvent, Column, Op

SET: Final = "$set"
UNSET: Final = "$unset"


class PatchError(AnyCdcError):
    """A MongoDB update that cannot be applied as a partial row update."""


def patch_as_partial_update(event: ChangeEvent) -> ChangeEvent:
    """Turn an update's ``patch`` into a partial after image; other events pass unchanged."""
    if event.op is not Op.UPDATE or event.patch is None or not _key_only_after(event):
        return event
    unsupported = sorted(op for op in event.patch if op not in (SET, UNSET))
    if unsupported:
        raise PatchError(
            f"{event.format}: $.patch: operator(s) {', '.join(unsupported)} not supported"
        )
    sets = _mapping(event, SET)
    unsets = _names(event.patch.get(UNSET))
    nested = [name for name in (*sets, *unsets) if "." in name]
    if nested:
        raise PatchError(
            f"{event.format}: $.patch: nested path(s) {', '.join(nested)} not supported "
            "(only top-level fields)"
        )
    after: dict[str, Any] = {
        k: v for k, v in (event.before or {}).items() if k in (event.key or ())
    }
    after.update(event.after or {})
    columns = dict(event.columns or {})
    for name, value in sets.items():
        after[name], column = _typed(value)
        if column.type.name != "unknown":  # a $set to null says nothing of the field's type
            columns[name] = column
    after.update(dict.fromkeys(unsets))
    partial = tuple(dict.fromkeys((*event.partial, "after")))
    return event.with_changes(after=after, partial=partial, columns=columns or None)


def _key_only_after(event: ChangeEvent) -> bool:
    """No after image (drs-mongo-json), or one of the key alone marked partial
    (debezium-json: ``{"_id": ...}`` from the key): the patch makes the rest."""
    if event.after is None:
        return True
    return "after" in event.partial and event.after.keys() <= set(event.key or ())


def _typed(value: Any) -> tuple[Any, Column]:
    """A ``$set`` value (Extended JSON, relaxed) as the value and column a document field has:
    ``{"$date": ...}`` a timestamp, ``{"$numberDecimal": ...}`` a decimal, ``{"$binary": ...}``
    bytes, so the pipeline casts it like the field of an inserted document."""
    from anycdc.formats.codecs.mongo import ejson_field  # the one Extended JSON reader

    return ejson_field(value)


def _mapping(event: ChangeEvent, operator: str) -> Mapping[str, Any]:
    value = (event.patch or {}).get(operator) or {}
    if not isinstance(value, Mapping):
        raise PatchError(f"{event.format}: $.patch.{operator}: expected object")
    return value


def _names(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, Mapping):
        return [str(k) for k in value]
    if isinstance(value, list):
        return [str(v) for v in value]
    raise PatchError(f"$.patch.$unset: expected array or object, got {type(value).__name__}")
