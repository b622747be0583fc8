"""OceanBase OMS JSON: serialisation ``Default`` and ``DefaultExtendColumnType`` (seed 003).

Both carry full row images and metadata::

    {"allMetaData": {"checkpoint", "record_primary_key": "id\u0001no",
                     "source_identity", "record_primary_value": "3\u0001129",
                     "dbType": "OB_MYSQL", "table_name": "t", "db": "tenant.database",
                     "timestamp": "1609344671", "storeDataSequence": 160934467100001,
                     "uniqueId": "..."},
     "prevStruct": {col: val} | null, "recordType": "INSERT", "postStruct": {col: val} | null}

``DefaultExtendColumnType`` adds, inside each image, the metadata key
``"__light_type": {col: {"schemaType": "TINYINT"}}``, which gives the column
types; ``Default`` carries no types at all.

Decisions (the seed leaves them open):

* ``recordType``: INSERT, UPDATE, DELETE, ROW (full-load row -> ``snapshot``),
  HEARTBEAT, DDL (the image holds the single key ``"ddl"``: the statement).
* ``db``: for OceanBase ``dbType`` values (``OB_MYSQL``, ``OB_ORACLE``,
  ``OCEANBASE``, ``OB_IN_ORACLE_MODE``) it is ``{tenant}.{database}``: the
  event's ``database`` is the part after the first dot and the tenant goes to
  ``extra["tenant"]``; without a dot (the seed's DefaultExtendColumnType
  examples) or for other sources the whole value is the database.
* ``key``: ``record_primary_key`` split on U+0001 (empty -> no key).
* ``ts_ms``: ``timestamp`` (epoch SECONDS) x 1000. ``position``:
  ``storeDataSequence`` (an integer, compared numerically); ``tx``:
  ``uniqueId`` (else ``transId``). ``extra`` keeps ``tenant``, ``dbType``,
  ``checkpoint`` and ``ddlType`` when present.
* ``Default`` images keep their JSON types (``columns`` is None; JSON numbers
  stay exact: big integers as ``int``, fractions as ``Decimal``). A key
  ``__light_type`` is metadata in both formats, never a column.
* ``DefaultExtendColumnType``: ``schemaType`` names (OMS light types such as
  ``INT64``, MySQL-tenant and Oracle-tenant names) map to logical types and
  the values are parsed by the OceanBase text rules: numbers unquoted, BOOL
  1/0, binary and BIT base64, DATE ``YYYY-MM-DD``, TIME ``HH:mm:ss[.n]``,
  DATETIME ``YYYY-MM-DD HH:mm:ss[.n] [zoneId]`` (a column whose values carry a
  zone id is ``timestamptz``, else naive ``timestamp``), MySQL TIMESTAMP
  ``epoch-seconds[.n]`` (``timestamptz``, UTC). ``BIGINT`` is OMS's light type
  for integers beyond int64 (the seed's ``bigInt`` column holds
  10223372036854775806) and its sign is not stated, so it maps to the
  unbounded ``integer``. A value that is not valid for its type (``0000-00-00
  00:00:00``) is kept as sent and named in ``invalid``. Columns without a
  ``schemaType`` are ``unknown``; types of columns absent from the images are
  not kept.

Encoding writes the seed's field order (``allMetaData``, ``prevStruct``,
``recordType``, ``postStruct``), joins key names and key values with U+0001,
renders values by the rules above (FLOAT/DOUBLE with Python's shortest exact
repr rather than 7/16 digits, so no value changes), ``timestamp`` in whole
seconds, ``storeDataSequence`` from a one-part position, ``uniqueId`` from
``tx``, ``dbType`` from ``extra`` (null when unknown). The extended format
appends ``__light_type`` to each image: the column's vendor type when it reads
back as the same logical type, else the OMS name of the logical type
(``INT64``, ``BIGINT UNSIGNED``, ``DECIMAL(p,s)``, ``DATETIME``, ``TIMESTAMP``
...). Truncates, transaction markers, split halves and partial images cannot
be written (EncodeError).

Detection: the two formats differ only by ``__light_type`` inside the images.
A message with no row image (HEARTBEAT, and DDL whose image holds only
``ddl``) cannot tell them apart: ``oms-json`` scores higher and wins.

>>> from anycdc.formats.oms.format import OmsJson
>>> msg = ('{"allMetaData":{"record_primary_key":"id","db":"t1.shop","dbType":"OB_MYSQL",'
...        '"table_name":"orders","timestamp":"1609344671","storeDataSequence":160934467100001},'
...        '"prevStruct":null,"recordType":"INSERT","postStruct":{"id":3,"total":12.50}}')
>>> [e] = OmsJson().decode(msg)
>>> e.op.value, e.database, e.table, e.key, e.after["total"], e.ts_ms, str(e.position)
('insert', 'shop', 'orders', ('id',), Decimal('12.50'), 1609344671000, '160934467100001')
>>> e.extra["tenant"]
't1'
"""

from __future__ import annotations

from typing import Any

from anycdc.formats.moved import moved_names

_find = moved_names(__name__)


def __getattr__(name: str) -> Any:
    """A name this package used to re-export (:data:`anycdc.formats.moved.MOVED_NAMES`):
    deprecated, read from the module that defines it."""
    return _find(name)
