"""Canal flat-message JSON: open-source Canal and the OceanBase OMS "Canal" serialization.

One message is a *flat message*: table metadata, an operation ``type`` and two
parallel arrays, ``data`` (rows after the change) and ``old`` (for ``UPDATE``:
the previous values of the CHANGED columns only; element ``i`` of ``old``
belongs to element ``i`` of ``data``). A message with several rows yields
several events. The family is this package: :class:`~anycdc.formats.canal.family.CanalFamily`
(``family.py``, with ``rows.py``, ``types.py``, ``fast.py`` and the wire names of
``wire.py``) holds the flow; ``canal-json`` (``format.py``), Alibaba DTS' variant
``dts-canal-json`` (``dts.py``) and Huawei DRS' ``drs-json`` / ``drs-json-c``
(``drs.py``) give hooks; ``detect.py`` holds the detection rules they share.

Rules this decoder follows (seeds 000-003, FORMATS.md section 4):

* ops: ``INSERT``/``UPDATE``/``DELETE``; ``INIT`` (full-load row, as in Flink's
  ``canal-data-with-init`` and DTS/DRS full phases) is a ``snapshot``;
  ``isDdl=true`` or ``CREATE``/``ALTER``/``ERASE``/``QUERY``/``RENAME``/
  ``CINDEX``/``DINDEX``/``DDL``/``INIT_DDL`` is ``ddl`` and ``TRUNCATE`` is
  ``truncate``, both with ``sql`` as ``ddl``; ``GTID`` = begin, ``XACOMMIT``/
  ``XAROLLBACK`` = commit; ``MHEARTBEAT``/``HEARTBEAT`` and Huawei DataArts'
  ``"isHeartbeat": true`` are heartbeats.
* update images: ``after = data[i]``, ``before = {**data[i], **old[i]}`` (an
  explicit null in ``old`` wins). A missing ``old`` means no column changed
  (Canal drops empty ``old`` maps); when ``old`` and ``data`` differ in length
  the pairing is unknown and ``before`` is left ``None`` (never guessed).
* rows only in ``old`` with ``data`` null (DTS tasks created before 2022-03-20)
  are taken from ``old``: that placement is certain from the message alone.
* types: ``mysqlType`` names (with or without precision, ``ENUM('a','b')``,
  ``unsigned``) through :func:`anycdc.typemap.sql_type`; ``sqlType``
  (``java.sql.Types``) when the name says nothing (``POINT`` -> binary) or is
  wider (MySQL ``REAL`` sent with code 8 is a double). ``bit(1)`` is a boolean
  and ``bit(n)`` an unsigned integer, as Canal sends the bit value as a number;
  ``SERIAL`` is MySQL's ``BIGINT UNSIGNED``. Columns ``data`` has but the type
  maps lack are typed ``unknown``; listed columns a row lacks make it ``partial``.
* values: open-source Canal quotes every value; OMS writes numbers unquoted
  (big unsigned BIGINTs and decimals with hundreds of digits stay exact).
  A ``bigint`` value above the int64 maximum proves the column unsigned (OMS
  and DTS drop ``unsigned`` from ``mysqlType``): the column is ``uint64``.
  Timestamps written as epoch seconds (OMS ``TIMESTAMP``) or with a zone are
  instants: such a column is ``timestamptz`` in that message.
* binary (option ``binary``): Canal writes bytes as ISO-8859-1 text, OMS as
  base64 (and BIT as base64 bytes). ``auto`` picks base64 when the message has
  no ``id`` field (OMS writes none), ISO-8859-1 otherwise.
* ``es`` is ``ts_ms``; ``position`` is ``(id,)`` (Canal's batch id: rows of one
  message share it); without an ``id`` field (OMS) it is ``(es, ts)``: commit
  time, then write time. TiCDC (``enable-tidb-extension=true``) writes ``id`` 0 and
  ``_tidb.commitTs``, the transaction's TSO: the position is ``(commitTs,)``; its
  ``TIDB_WATERMARK`` messages are heartbeats at ``(watermarkTs,)``. A TiCDC message
  holding only the handle key (``_tidb.onlyHandleKey``) or a claim-check pointer
  (``_tidb.claimCheckLocation``) is an error: the row is not in it. ``gtid`` (a GTID set, not a transaction id) goes to
  ``extra``; ``ts`` (write time) is not kept.
* detection: see :func:`~anycdc.formats.canal.detect.is_canal_shaped`,
  :func:`~anycdc.formats.canal.detect.drs_evidence` (Huawei DRS' fields and renderings, read
  by every Canal-shaped sniffer) and :func:`~anycdc.formats.canal.detect.is_dts_certain`
  (the keys DTS leaves out).

>>> from anycdc.formats.canal.format import CanalJson
>>> fmt = CanalJson()
>>> [e] = fmt.decode(b'{"data":[{"id":"1","price":"9.90"}],"database":"shop","es":1589373515000,'
...     b'"id":3,"isDdl":false,"mysqlType":{"id":"int(11)","price":"decimal(10,2)"},"old":null,'
...     b'"pkNames":["id"],"sql":"","sqlType":{"id":4,"price":3},"table":"orders",'
...     b'"ts":1589373515477,"type":"INSERT"}')
>>> e.op.value, e.table, e.key, dict(e.after), e.position
('insert', 'orders', ('id',), {'id': 1, 'price': Decimal('9.90')}, Position(parts=(3,)))
>>> fmt.decode(fmt.encode(e)[0]) == [e]
True"""

from __future__ import annotations

from typing import Any

from anycdc.formats.moved import moved_names

_find = moved_names(__name__)


def __getattr__(name: str) -> Any:
    """A name this package used to re-export (:data:`anycdc.formats.moved.MOVED_NAMES`):
    deprecated, read from the module that defines it."""
    return _find(name)
