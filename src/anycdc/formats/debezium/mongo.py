"""MongoDB change events of Debezium's MongoDB connector: documents in Extended JSON,
update descriptions and patches, typed as ``drs-mongo-json`` types a document."""

from __future__ import annotations

from typing import Any

import msgspec

from anycdc.errors import type_name
from anycdc.event import ChangeEvent, Column, Op
from anycdc.formats.base import Format
from anycdc.formats.codecs.mongo import (
    ejson_document,
    from_ejson,
    update_patch,
)
from anycdc.formats.debezium.wire import (
    AFTER,
    BEFORE,
    CONNECTOR_MONGODB,
    DOCUMENT_JSON,
    MONGO_FILTER,
    MONGO_ID,
    MONGO_KEY_ID,
    MONGO_PATCH,
    MONGO_REMOVED_FIELDS,
    MONGO_TRUNCATED_ARRAYS,
    MONGO_UPDATE_DESCRIPTION,
    MONGO_UPDATED_FIELDS,
    NUMBER_JSON,
    OP_CODES,
    PATCH_SET,
    PATCH_TRUNCATED_ARRAYS,
    PATCH_UNSET,
    SRC_CONNECTOR,
)
from anycdc.formats.events import Header, build_event


# --------------------------------------------------------------------------- decoding
def mongo_event(
    fmt: Format,
    op: Op,
    payload: dict[str, Any],
    meta: Header,
    key_values: dict[str, Any] | None,
    path: str,
) -> ChangeEvent:
    """The event of a MongoDB connector's payload (``meta``: its header, read from
    ``source`` by the decoder; ``key_values``: the Kafka key's), built by the one builder
    (:func:`~anycdc.formats.events.build_event`)."""
    fid = fmt.id
    key = fmt.primary_key((MONGO_ID,))
    if op is Op.TRUNCATE:
        return build_event(fid, op, meta, key)
    # documents are typed as drs-mongo-json types them (one Extended JSON reader)
    before, before_columns = _document(fmt, payload.get(BEFORE), f"{path}.before")
    after, columns = _document(fmt, payload.get(AFTER), f"{path}.after")
    columns = {**before_columns, **columns}
    patch: dict[str, Any] | None = None
    old_patch = _json_document(fmt, payload.get(MONGO_PATCH), f"{path}.patch")
    if old_patch is not None:
        if any(k.startswith("$") for k in old_patch):
            patch = update_patch(from_ejson(old_patch), fmt.id, f"{path}.patch")
        elif after is None:
            after, replaced = ejson_document(old_patch)  # a replacement document
            columns.update(replaced)
    elif payload.get(MONGO_UPDATE_DESCRIPTION) is not None:
        patch = _update_description(
            fmt, payload[MONGO_UPDATE_DESCRIPTION], f"{path}.updateDescription"
        )
    # the document's id, for an image that has nothing else: from a document, else the key
    id_image: dict[str, Any] | None = None
    id_columns: dict[str, Column] = {}
    found, found_columns = _document(fmt, payload.get(MONGO_FILTER), f"{path}.filter")
    for doc, doc_columns in ((after, columns), (before, columns), (found, found_columns)):
        if doc is not None and MONGO_ID in doc:
            id_image = {MONGO_ID: doc[MONGO_ID]}
            id_columns = {MONGO_ID: doc_columns[MONGO_ID]}
            break
    else:
        if key_values is not None and MONGO_KEY_ID in key_values:
            id_image, id_columns = ejson_document(
                {MONGO_ID: _mongo_key_id(key_values[MONGO_KEY_ID])}
            )
    columns = {**id_columns, **columns}
    partial_images: tuple[str, ...] = ()
    if op in (Op.INSERT, Op.SNAPSHOT):
        if after is None:
            raise fmt.error(f"{path}.after", f"missing after image for op '{OP_CODES[op]}'")
        return build_event(fid, op, meta, key, None, after, columns or None)
    if op is Op.UPDATE:
        if after is not None:
            return build_event(fid, op, meta, key, before, after, columns or None)
        if patch is None:
            raise fmt.error(f"{path}.after", "update without an after document or a patch")
        return build_event(
            fid, op, meta, key, before, id_image, columns or None, (AFTER,), patch=patch
        )
    if before is None:
        if id_image is None:
            raise fmt.error(
                f"{path}.before", "delete without a before document, filter or Kafka key"
            )
        before, partial_images = id_image, (BEFORE,)
    return build_event(fid, op, meta, key, before, None, columns or None, partial_images)


def _json_document(fmt: Format, raw: Any, path: str) -> dict[str, Any] | None:
    """A document as sent (JSON text, usually), parsed: numbers with a fraction are
    BSON doubles (floats), not decimals."""
    if raw is None:
        return None
    try:
        if isinstance(raw, str):
            raw = DOCUMENT_JSON.decode(raw)
        elif isinstance(raw, dict):
            raw = DOCUMENT_JSON.decode(NUMBER_JSON.encode(raw))
    except (msgspec.DecodeError, RecursionError, UnicodeError) as exc:
        raise fmt.error(path, f"invalid document JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise fmt.error(path, f"expected document, got {type_name(raw)}")
    return raw


def _document(fmt: Format, raw: Any, path: str) -> tuple[dict[str, Any] | None, dict[str, Column]]:
    """A document in Extended JSON (any ``json.serialization.mode``) and its columns."""
    doc = _json_document(fmt, raw, path)
    return (None, {}) if doc is None else ejson_document(doc)


def _update_description(fmt: Format, raw: Any, path: str) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        raise fmt.error(path, f"expected object, got {type_name(raw)}")
    operators: dict[str, Any] = {}
    updated = _json_document(fmt, raw.get(MONGO_UPDATED_FIELDS), f"{path}.updatedFields")
    if updated:
        operators[PATCH_SET] = from_ejson(updated)
    removed = raw.get(MONGO_REMOVED_FIELDS)
    if removed is not None:
        if not isinstance(removed, list) or not all(isinstance(f, str) for f in removed):
            raise fmt.error(f"{path}.removedFields", "expected array of field names")
        if removed:
            operators[PATCH_UNSET] = dict.fromkeys(removed, True)
    patch = update_patch(operators, fmt.id, path)
    truncated = raw.get(MONGO_TRUNCATED_ARRAYS)
    if truncated:
        patch[PATCH_TRUNCATED_ARRAYS] = truncated
    return patch or None


def is_mongo(payload: dict[str, Any], source: dict[str, Any]) -> bool:
    """Whether a payload comes from the MongoDB connector: by ``source.connector``, or by its
    fields (``before``/``after`` as document text, ``patch``, ``updateDescription``)."""
    return (
        source.get(SRC_CONNECTOR) == CONNECTOR_MONGODB
        or isinstance(payload.get(AFTER), str)
        or isinstance(payload.get(BEFORE), str)
        or MONGO_PATCH in payload
        or MONGO_UPDATE_DESCRIPTION in payload
    )


def _mongo_key_id(raw: Any) -> Any:
    """The MongoDB key's ``id`` is the Extended JSON text of ``_id`` (``"1004"``,
    ``'{"$oid": ...}'``): the ``_id`` value as the document gives it (Extended JSON)."""
    if isinstance(raw, str):
        try:
            return DOCUMENT_JSON.decode(raw)
        except (msgspec.DecodeError, RecursionError, UnicodeError):
            return raw
    return raw
