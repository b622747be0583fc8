"""The fast path's msgspec Structs of an OMS message and the light-type plans."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, Final

import msgspec

from anycdc.event import Column
from anycdc.formats.base import (
    NULL_RAW,
    TypedRows,
)
from anycdc.formats.events import OpRule
from anycdc.formats.oms.wire import LIGHT_TYPE, OPS

# --------------------------------------------------------------------------- the formats
# --------------------------------------------------------------------------- fast path
# The common row change, read without the generic field helpers: msgspec decodes
# the four top-level fields as plain JSON (the values parse_json gives); any other
# top-level field, and anything in them that the fast reading does not cover,
# raises and :meth:`Format.decode_slow` decides.
_INT64_MAX: Final = 2**63 - 1


class FastMeta(msgspec.Struct, forbid_unknown_fields=True, frozen=True, gc=False):
    """The ``allMetaData`` fields the decoders read, as the fast path takes them (text
    or null, a sequence number in range; any other value: slow path), and those they
    ignore (decoded all the same: msgspec would not check the text of a skipped field;
    any other field: slow path). Field names are the wire names."""

    source_identity: Any = None
    record_primary_value: Any = None
    checkpoint: Any = None
    record_primary_key: str | None = None
    dbType: str | None = None
    table_name: str | None = None
    db: str | None = None
    timestamp: str | None = None
    storeDataSequence: Annotated[int, msgspec.Meta(ge=0, le=_INT64_MAX)] | None = None
    uniqueId: str | None = None
    transId: str | None = None
    ddlType: str | None = None


NO_META: Final = FastMeta()


class _OmsMessage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The top level of an OMS message (field names are the wire names)."""

    allMetaData: FastMeta | None = None
    prevStruct: Any = None
    recordType: Any = None
    postStruct: Any = None


OMS_DECODER: Final = msgspec.json.Decoder(_OmsMessage, float_hook=Decimal)
# the codes the fast paths take: the op table's row ops (derived, not restated)
ROW_OPS: Final[Mapping[str, OpRule]] = {code: rule for code, rule in OPS.items() if rule.rows}


# DefaultExtendColumnType: the images stay raw bytes; their ``__light_type`` (the raw
# bytes of its value) is the cache key of a plan whose TypedDict decodes a whole image
# with a strict msgspec type per column (see ``json_value_type``) and the
# ``__light_type`` value again as raw bytes, which must be the plan's own (so a plan
# found for the previous message is checked by the decode itself), and
# :class:`~anycdc.formats.base.TypedRows` refuses unknown, repeated and missing keys.
# The slow path's rules that the fast one takes as given: the light types of both
# images are the same bytes, each image holds exactly its light type's columns
# (DATETIME columns are zone-less, unless the ``timezone`` option is set), and the
# image a record type does not use is null. Anything else: slow path.
class _OmsRawMessage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The top level of an OMS message with the images as raw bytes."""

    allMetaData: FastMeta | None = None
    prevStruct: msgspec.Raw = NULL_RAW
    recordType: Any = None
    postStruct: msgspec.Raw = NULL_RAW


class _LightOnly(msgspec.Struct):
    """Only the ``__light_type`` value of an image (the other keys are skipped)."""

    light: msgspec.Raw = msgspec.field(name=LIGHT_TYPE, default=NULL_RAW)


OMS_RAW_DECODER: Final = msgspec.json.Decoder(_OmsRawMessage, float_hook=Decimal)
LIGHT_DECODER: Final = msgspec.json.Decoder(_LightOnly)


@dataclass(frozen=True, slots=True)
class LightPlan:
    """How the fast path decodes and types the images of one ``__light_type``."""

    columns: dict[str, Column]
    names: tuple[str, ...]  # the columns in ``__light_type`` order
    rows: TypedRows
