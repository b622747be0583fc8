"""Alibaba Cloud DTS Avro (``dts-avro``): one schemaless Avro ``Record`` per Kafka message.

DTS writes each change as the Avro binary encoding of
``com.alibaba.dts.formats.avro.Record`` (``schemas/dts_record.avsc``, the schema
Alibaba publishes) with no container header and no schema-registry prefix.
The record is read by :class:`~anycdc.formats.codecs.avro.AvroReader`, which
checks every length, union index and enum index against the message and names
the field path of any problem.

How the record maps onto the canonical event (see FORMATS.md section 2):

* ``operation`` INSERT / UPDATE / DELETE / INIT -> insert / update / delete /
  snapshot; DDL -> ddl (statement text is the string held in ``afterImages``);
  BEGIN / COMMIT / HEARTBEAT -> begin / commit / heartbeat. The other markers,
  which carry no row (ROLLBACK, ABORT, CHECKPOINT, FILL, FINISH, CONTROL, NOOP),
  become heartbeats with ``extra["operation"]`` naming them. COMMAND and RDB
  (Redis / MongoDB payloads) are a DecodeError: they carry data we cannot express.
* ``objectName`` is split on every dot after DTS's own escaping (a dot inside a
  name is written ``\u002e``): ``db`` / ``db.table`` / ``db.schema.table``. A
  two-part name is always database.table, as the DTS SDK reads it (an Oracle
  ``SCHEMA.TABLE`` therefore lands in ``database``).
* ``sourcePosition`` ``"72469@78"`` (binlog end offset @ binlog file number) and
  the record ``id`` (unique, increasing in the stream; the tie-break between rows
  of one binlog event) give ``Position((78, 72469, id))``; a bare number (an SCN)
  gives ``(n, id)``; a PostgreSQL LSN ``"16/B374D848"`` gives ``(lsn, id)``;
  anything else gives no position.
* ``sourceTimestamp`` is epoch SECONDS: ``ts_ms`` is it times 1000.
  ``bornTimestamp`` (ms) goes to ``extra`` when non-zero, and so does
  ``source.sourceType``.
* ``tags["pk_uk_info"]`` ``{"PRIMARY":["id"]}`` gives the key; unique keys are
  not primary keys and are ignored.
* ``fields[i].dataTypeNumber`` is the MySQL binlog type code for MySQL and DRDS
  sources; for other sources the code is kept as ``vendor_code`` only, since its
  numbering is not published. The union branch of the values refines the type:
  Decimal{precision, scale} -> ``decimal(p,s)``; Character with charset
  ``binary`` -> ``binary``, other charsets -> text; Timestamp (epoch seconds +
  microseconds) and TimestampWithTimeZone -> ``timestamptz``; DateTime -> naive
  date / time / timestamp (or YEAR as an int) by column type. The binlog code
  carries no signedness: an integer beyond the signed range widens that column
  in this event (INT UNSIGNED 4294967295 -> ``int64``, BIGINT UNSIGNED ->
  ``uint64``) instead of being refused.
* The ``millis`` fields of Timestamp and DateTime hold MICROSECONDS despite their
  name: Alibaba's consumers render them as six fraction digits (LioRoger
  ``MysqlFieldConverter``) and store them as micros (aliyun DTS SDK).
* An UPDATE record carries both images (seed 001 describes no split form, so
  ``split`` is never set). EmptyObject ``NULL`` is SQL NULL; ``NONE`` means the
  source did not send the column: it is left out of the image and the image is
  named in ``partial``.
* BIT values arrive as Integer and become integers; geometry arrives as WKB
  bytes (``binary``) or WKT text (``string``).
* Invalid dates (``0000-00-00``) and MySQL TIME beyond a day (``838:59:59``) are
  kept as the vendor's text and listed in ``invalid``.
* The flow is :class:`~anycdc.formats.flow.RowFlow`'s (one row per record, DDL and
  markers too); DTS fills its hooks: ``header``, ``images`` (values as union branches
  by field name), ``key_names``, ``columns_of`` and ``value_parser`` (a branch as a value).

The encoder writes the published schema with fastavro, naming every union branch
explicitly. It floors ``ts_ms`` to seconds, writes a decimal column's precision
and scale (0 / 0 when unknown), columns an image lacks as EmptyObject NONE, and
refuses ``truncate`` (DTS sends a TRUNCATE as DDL text).

Example (a tiny INSERT, as DTS writes it):

>>> from anycdc.formats.dts_avro.format import DtsAvro
>>> message = bytes.fromhex(
...     "0c0a8cc0f0f50b1037323436394037380000000c352e372e333400021673686f702e6f7264657273"
...     "000214706b5f756b5f696e666f247b225052494d415259223a5b226964225d7d000404046964100a"
...     "746f74616cec03000004040204043230060c3132332e343514040000")
>>> [event] = DtsAvro().decode(message)
>>> event.op.value, event.database, event.table, event.key, event.position
('insert', 'shop', 'orders', ('id',), Position(parts=(78, 72469, 5)))
>>> event.after["total"], str(event.columns["total"].type), event.ts_ms
(Decimal('123.45'), 'decimal(10,2)', 1600000006000)
"""

from __future__ import annotations

from typing import Any

from anycdc.formats.moved import moved_names

_find = moved_names(__name__)


def __getattr__(name: str) -> Any:
    """A name this package used to re-export (:data:`anycdc.formats.moved.MOVED_NAMES`):
    deprecated, read from the module that defines it."""
    return _find(name)
