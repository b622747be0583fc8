"""DataWorks JSON: what Alibaba Cloud DataWorks "sync a whole database to Kafka" writes.

One message per change (seed 000, "付録: メッセージ形式")::

    {"schema": {"dataColumn": [{"name": "id", "type": "LONG"}, ...], "primaryKey": ["id"] | null,
                "source": {"dbType", "dbVersion", "dbName", "schemaName", "tableName"}},
     "payload": {"before": {"dataColumn": {...}} | null, "after": {...} | null,
                 "sequenceId": "1620457642589000001", "scn": "...", "op": "UPDATE_AFTER",
                 "timestamp": {"eventTime": ms, "systemTime": ms, "checkpointTime": ms},
                 "ddl": {"text": "...", "ddlMeta": "<base64>"} | null},
     "version": "0.0.1" | "1.0.0"}

How it maps onto the canonical event:

* ``op`` (case-sensitive): ``INSERT`` -> insert; ``DELETE`` -> delete; ``UPDATE_BEFOR`` (sic)
  -> the before half of a split update (``op=update``, ``split="before"``, before image only);
  ``UPDATE_AFTER`` with both images -> a whole update (single mode), with the after image only
  -> the after half (``split="after"``). Both halves of one update share their ``sequenceId``,
  hence their position: :class:`anycdc.pairing.SplitUpdatePairer` joins them.
  ``TRANSACTION_BEGIN`` -> begin; ``TRANSACTION_END`` and ``XACOMMIT`` -> commit;
  ``CREATE``/``ALTER``/``ERASE``/``QUERY``/``RENAME``/``CINDEX``/``DINDEX`` -> ddl;
  ``TRUNCATE`` -> truncate; ``MHEARTBEAT`` -> heartbeat. ``GTID`` and ``XAROLLBACK`` carry no
  row and no usable boundary (a GTID precedes a transaction that also gets its own
  ``TRANSACTION_BEGIN``; there is no canonical rollback), so they become heartbeat markers.
  Where the canonical op does not name the vendor code (every ddl code, ``XACOMMIT``, ``GTID``,
  ``XAROLLBACK``) the code is kept in ``extra["vendor_op"]``. Any other code is a
  :class:`~anycdc.errors.DecodeError` ``unknown op 'XYZ'`` (the pipeline dead-letters it).
* Types: ``LONG`` -> int64; ``STRING`` -> string; ``BOOLEAN`` -> boolean; ``BYTES`` -> binary
  (standard base64); ``DOUBLE`` -> **decimal** (DataWorks has no DECIMAL type: source DECIMAL
  columns arrive as ``DOUBLE``, often as text such as ``"1.100000"``; keeping them as exact
  decimals never loses a digit, and a true double's shortest text is exact too);
  ``DATE`` -> **timestamptz**: a 13-digit epoch-millisecond number is an instant, so it becomes
  an aware UTC datetime, whether the source column was a date, a datetime or a timestamp
  (the message cannot tell which). Any other type name -> ``unknown`` (value as sent).
* ``position`` = ``sequenceId`` (a digit string, ``"-1"`` or null = none); ``ts_ms`` =
  ``timestamp.eventTime`` (``-1`` = none: full-load rows carry ``-1``); ``ddl`` =
  ``payload.ddl.text``. ``ddlMeta`` (a serialized Java ``SQLStatement``) is ignored: it is
  opaque, large and redundant with the text. Oracle ``scn`` goes to ``extra["scn"]``
  (as sent) and ``source.dbType`` to ``extra["db_type"]``.
* ``key`` = ``schema.primaryKey``. Tables without a primary key have ``primaryKey: null`` and a
  synthetic ``#alibaba_rds_row_id#`` LONG column that identifies the row: it stays an ordinary
  column and ``key`` is None (set the ``primary_key`` option to make it the key). The Oracle
  ``rowid`` column is likewise kept as an ordinary STRING column.
* ``columns`` lists the declared columns that the images carry (declared order), then any image
  key the schema does not declare, typed ``unknown``; events without images (ddl, truncate,
  markers) list every declared column.

The encoder writes messages as the seed's examples do (version ``0.0.1`` unless the ``version``
option says ``1.0.0``; ``checkpointTime`` = ``eventTime``, no ``systemTime``; ``eventTime`` and
``sequenceId`` are ``-1`` / null when unknown); option ``split_update=true`` writes a whole
update as two messages with one ``sequenceId``. Events of other formats are written with the
nearest DataWorks type: integers LONG, decimals and floats DOUBLE, dates and datetimes DATE
(epoch ms, zone-less = UTC), time and JSON STRING; a snapshot row is an INSERT; a position
of more than one part cannot be a ``sequenceId`` (:class:`~anycdc.errors.EncodeError`).

>>> from anycdc.formats.dataworks.format import DataWorksJson
>>> fmt = DataWorksJson()
>>> [e] = fmt.decode(b'{"schema":{"dataColumn":[{"name":"id","type":"LONG"},'
...     b'{"name":"ts","type":"DATE"}],"primaryKey":["id"],"source":{"dbType":"MySQL",'
...     b'"dbName":"shop","tableName":"orders"}},"payload":{"before":null,"after":{"dataColumn":'
...     b'{"id":7,"ts":1590315269000}},"sequenceId":"42","timestamp":{"eventTime":1590315269000},'
...     b'"op":"INSERT","ddl":null},"version":"0.0.1"}')
>>> e.op.value, e.table, e.key, e.after["ts"].isoformat(), e.position
('insert', 'orders', ('id',), '2020-05-24T10:14:29+00:00', Position(parts=(42,)))
"""

from __future__ import annotations

from typing import Any

from anycdc.formats.moved import moved_names

_find = moved_names(__name__)


def __getattr__(name: str) -> Any:
    """A name this package used to re-export (:data:`anycdc.formats.moved.MOVED_NAMES`):
    deprecated, read from the module that defines it."""
    return _find(name)
