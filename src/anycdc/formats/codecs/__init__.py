"""Codecs that several formats share: wire encodings, not formats.

A vendor module (``canal``, ``oms``, ``dts_avro``, ...) decodes one vendor's
messages; what more than one vendor needs lives here, so that no vendor module
is another's library:

* :mod:`~anycdc.formats.codecs.avro` -- the schemaless Avro binary reader
  (``dts-avro``, ``drs-avro``, ``debezium-avro``);
* :mod:`~anycdc.formats.codecs.text` -- column values as vendors print them and
  integer header fields (OMS, Maxwell, OGG, SharePlex, AWS DMS, DRS);
* :mod:`~anycdc.formats.codecs.java` -- Java's number text and Gson's JSON
  (Canal, DRS, DRS for MongoDB);
* :mod:`~anycdc.formats.codecs.mongo` -- MongoDB Extended JSON and shell text
  (``drs-mongo-json``, Debezium's MongoDB connector).

Codecs import only :mod:`anycdc.event`, :mod:`anycdc.values`,
:mod:`anycdc.errors`, :mod:`anycdc.formats.base` and each other, never a vendor
module (``tests/unit/test_layout.py`` checks it).
"""
