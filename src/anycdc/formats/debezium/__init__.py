"""Debezium change-event values, as Kafka Connect's JSON converter writes them (seed 004).

A message is either the envelope ``{"schema": {...}, "payload": {...}}``
(``schemas.enable=true``) or the payload alone. The payload holds ``op``
(``c`` create, ``u`` update, ``d`` delete, ``r`` snapshot read, ``t``
truncate, ``m`` logical-decoding message), ``before``/``after`` row images,
``source`` metadata and ``ts_ms``. Besides row changes a Debezium topic may
carry schema-change events (``ddl`` + ``tableChanges``), transaction markers
(``status`` BEGIN/END), heartbeats (``{"ts_ms": N}``) and tombstones (null
values, also rendered ``{"schema":null,"payload":null}``).

>>> from anycdc.formats.debezium.format import DebeziumJson
>>> fmt = DebeziumJson()
>>> [event] = fmt.decode(
...     b'{"before":null,"after":{"id":1,"price":9.90},"op":"c",'
...     b'"source":{"connector":"postgresql","db":"shop","schema":"public","table":"items",'
...     b'"ts_ms":1559033904863,"txId":555,"lsn":24023128}}',
...     key=b'{"id":1}',
... )
>>> event.op.value, event.qualified_table, event.key, event.after["price"], event.position
('insert', 'shop.public.items', ('id',), Decimal('9.90'), Position(parts=(24023128,)))

Decoding rules
--------------
* Types come from the schema part (``int8``..``int64``, ``float32``/``float64``,
  ``boolean``, ``string``, ``bytes`` as base64, and the logical names:
  Connect ``Decimal`` (base64 big-endian two's complement unscaled value with the
  ``scale`` parameter; a JSON number when the converter's ``decimal.format`` is
  NUMERIC), ``VariableScaleDecimal``, ``Date`` (days), ``Time`` (ms), ``MicroTime``,
  ``NanoTime``, ``Timestamp`` (ms), ``MicroTimestamp``, ``NanoTimestamp`` (wall-clock
  values without zone: naive, or in the ``timezone`` option's zone),
  ``ZonedTimestamp`` (aware), ``ZonedTime`` (time with offset), ``Year``, ``Json``,
  ``Enum``, ``EnumSet``, ``Uuid``, ``Bits``, Connect ``Date``/``Time``/``Timestamp``).
  Structs, arrays and maps (geometries ...) stay JSON values (``unknown``).
  Without a schema ``columns`` is None and values keep their JSON types.
* Key names are not in the value: they come from the Kafka key given to
  :meth:`DebeziumJson.decode` (its fields, with or without a schema part), else
  from the ``primary_key`` option, else None. A delete without a before image
  (Postgres without REPLICA IDENTITY FULL) uses the key's values as a partial
  before image; without a key it is an error.
* ``m`` (a logical-decoding message: application data, not a row) becomes a
  ``heartbeat`` event carrying ``extra["message"]`` (``prefix``/``content``).
* Positions, compared part by part: SQL Server (and Db2) ``commit_lsn`` parts,
  ``change_lsn`` parts, ``event_serial_no`` (hex groups as integers; a missing
  change LSN or serial number counts as 0); MySQL binlog file number, ``pos``,
  ``row``; PostgreSQL ``lsn``; Oracle ``scn``; MongoDB oplog seconds (``sec``, else
  ``ts_ms`` // 1000) and ``ord``; otherwise the generic ``source.sequence`` array.
  A MongoDB record read by a snapshot (Debezium 3.x writes ``ord: -1``: the read has
  no cluster time, and ``ts_ms`` is when it was read) counts ``ord`` 0: it sorts after
  every change of earlier seconds and before every change streamed in its second or
  later (oplog increments start at 1), so a change the read may have missed wins. An LSN that is not a valid
  (non-negative, 3-group for SQL Server) value gives no position.
* MongoDB: ``after``/``before``/``patch``/``updatedFields`` arrive as Extended JSON
  text in any ``json.serialization.mode`` (v1 strict: ``{"$date": ms}``,
  ``{"$binary": b64, "$type": t}``; v2 relaxed or canonical: ``$numberInt``,
  ``$numberDouble``, ``{"$date": {"$numberLong": ...}}`` ...). The document's
  top-level fields become the image (key ``_id``), typed exactly as
  ``drs-mongo-json`` types a document (:func:`anycdc.formats.codecs.mongo.ejson_document`:
  ``long``, ``decimal``, ``date`` -> timestamptz, ``binData`` -> binary, ``objectId``
  -> its hex text; nested documents and arrays as relaxed Extended JSON text, the
  same text whatever the mode). Update operators (old connector ``patch``, or
  ``updateDescription``: ``updatedFields`` -> ``$set`` in relaxed Extended JSON,
  ``removedFields`` -> ``$unset`` as a list, ``truncatedArrays`` kept under
  ``$truncatedArrays``) go to ``patch`` when the message has no full ``after``
  document; the after image is then ``{"_id": ...}`` marked partial.
* CloudEvents (``io.debezium.converters.CloudEventsConverter``, JSON envelope and
  JSON data): the payload is ``data`` (``{schema, payload}`` or the payload alone)
  plus ``op`` and ``source``/``transaction`` fields from the ``iodebezium*``
  extension attributes; the envelope's ``id``/``source``/``type`` go to
  ``extra["cloudevents"]`` (the encoder writes such events back as CloudEvents).
  Avro ``data`` (base64 text) is an error.
* Vitess: ``source.db`` is empty; the keyspace is the database, so same-named tables
  of two keyspaces stay apart.
* Not read, an error naming the reason and never rows (the detector says
  ``unknown``): Debezium Avro printed as Avro JSON by a console consumer (unions as
  ``{"<ns>.Value": {...}}``, ``{"long": 1}``) and the Cassandra connector (cells as
  ``{value, deletion_ts, set}``, null meaning unchanged).
* Speed: the plan that types a table's values is built once per schema text and
  cached on the instance; a message that starts with the exact bytes of a recently
  seen ``{"schema":<S>,"payload":`` is parsed from its payload on (the schema part
  is compared, not parsed again): the format's fast path, which ``Format.decode``
  dispatches to as it does every format's. The usual row change (``c``/``u``/``d``/``r`` with
  well-typed source fields and values) is decoded in one pass with the checks inlined
  (an update's unchanged columns reuse the after image's typed values); anything else
  takes the general path, which gives the same events and reports the errors.
* PostgreSQL's placeholder for unchanged TOASTed values
  (``__debezium_unavailable_value``) is not a value: the column is left out of
  the image and the image is marked partial.
"""

from __future__ import annotations

from typing import Any

from anycdc.formats.moved import moved_names

_find = moved_names(__name__)


def __getattr__(name: str) -> Any:
    """A name this package used to re-export (:data:`anycdc.formats.moved.MOVED_NAMES`):
    deprecated, read from the module that defines it."""
    return _find(name)
