"""Simulated source databases: realistic change streams with a known final state.

A :class:`Workload` plays a source database and keeps the ground truth — the
final rows of every table — so a pipeline's output can be checked. The
profiles:

``rich`` (the default of ``anycdc simulate``)
    ``all_types`` (every logical type the formats carry: TINYINT .. BIGINT,
    BIGINT UNSIGNED above 2^63, DECIMAL(38,10), FLOAT, DOUBLE, unicode and
    escape-laden text, binary, DATE, TIME(6), DATETIME(6), TIMESTAMP(6), BOOLEAN,
    JSON, NULLs; hot keys, key changes), ``order_lines`` (a composite key; DDL
    mid-stream: ADD COLUMN, then INT -> BIGINT, DECIMAL precision up, VARCHAR
    longer, each followed by rows of the new shape; key changes) and
    ``audit_log`` (no primary key: the truth is a multiset; ADD COLUMN, then a
    TRUNCATE). Transactions with BEGIN/COMMIT markers and heartbeats in between.
``shop``
    The demo's shop (``customers``, ``orders``, ``products``): snapshot,
    inserts, updates, deletes, key changes, hot keys; nothing else.
``names``
    The shop's history under names real databases allow and Delta or a file
    system do not take as they are (:data:`ODD_NAMES`): tables ``Customer List``,
    ``select`` and a 128-character CJK name (too long for a folder), columns with
    spaces, dots, ``;{}()=``, a newline, quotes and a backtick, emoji, a case-only
    pair (``name``/``Name``) and anycdc's own ``_cdc_op`` and ``_cdc_position``.
``linked``
    ``customers``, ``orders`` and ``order_lines`` with foreign keys (a line's
    ``order_id`` names an order, an order's ``customer_id`` a customer;
    :func:`linked_tables`): a snapshot that keeps them, then only multi-table
    transactions (BEGIN/COMMIT markers, one ``tx`` on every row): an order placed
    with 1-3 lines, an order and one of its lines amended, an order cancelled (its
    lines deleted, then the order), a customer updated. After every COMMIT no line
    is without its order: a read as of a cut that splits a transaction shows one
    only if it does not hold the transaction back.

``drs-mongo-json`` carries documents, not rows: whatever the profile, its
stream is a MongoDB-like ``profiles`` collection (inserts, replacements,
``$set``/``$unset`` patches, deletes; nested documents and arrays).

Every stream is generated ONCE per seed, independent of the format: the
same seed gives the same source history in every format. Each format then
gets what it can encode and the pipeline can apply (:data:`FORMAT_PROFILES`):
markers, heartbeats, DDL and TRUNCATE are left out where the format has
none (a TRUNCATE becomes deletes of every row, so the final state is the
same), and column types and values become what the format delivers (MySQL
formats carry BOOLEAN as TINYINT(1), DataWorks has six types, untyped OMS,
SharePlex, GoldenGate and Maxwell JSON deliver text). The truth is the final state AS THE PIPELINE
STORES IT for that format. What the pipeline cannot apply yet
(:data:`PIPELINE_GAPS`) is left out unless ``avoid_gaps=False``.

>>> w = Workload(seed=1, rows=5, events=20)
>>> events = list(w.events("canal-json"))
>>> events[0].op.value, len(w.truth["shop.customers"]) > 0
('snapshot', True)
>>> rich = Workload(seed=1, rows=3, events=40, profile="rich")
>>> [t.name for t in rich.tables], rich.tables[2].key
(['all_types', 'order_lines', 'audit_log'], ())
>>> linked = Workload(seed=1, rows=3, events=20, profile="linked")
>>> [(e.op.value, e.table) for e in linked.events("canonical-json")][9:13]
[('begin', None), ('update', 'orders'), ('insert', 'order_lines'), ('commit', None)]"""

from __future__ import annotations

from anycdc.simulate.profiles import (
    FORMAT_PROFILES,
    PIPELINE_GAPS,
    SIMULATION,
    FormatProfile,
    Simulation,
    adapt_column,
    adapt_value,
    derive_profile,
    format_profile,
    untyped_text,
    value_converter,
)
from anycdc.simulate.streams import (
    TRUTH_MANIFEST,
    Stream,
    build_stream,
    partition_of,
    truth_file,
    write_truth,
)

# the names the module had before it became a package, importable from here still
from anycdc.simulate.tables import (
    ACTIONS,
    FIRST_NAMES,
    JSON_DOCS,
    MONGO_FORMAT,
    ODD_NAMES,
    PROFILES,
    STATUSES,
    TRICKY_TEXT,
    TableSpec,
    linked_tables,
    many_tables,
    mongo_collections,
    names_tables,
    rename_columns,
    rich_tables,
    shop_tables,
)
from anycdc.simulate.workload import (
    DDL,
    HEARTBEAT,
    MARKER,
    ROW,
    TRUNCATE,
    TRUNCATE_FALLBACK,
    Workload,
)

__all__ = [
    "ACTIONS",
    "DDL",
    "FIRST_NAMES",
    "FORMAT_PROFILES",
    "HEARTBEAT",
    "JSON_DOCS",
    "MARKER",
    "MONGO_FORMAT",
    "ODD_NAMES",
    "PIPELINE_GAPS",
    "PROFILES",
    "ROW",
    "SIMULATION",
    "STATUSES",
    "TRICKY_TEXT",
    "TRUNCATE",
    "TRUNCATE_FALLBACK",
    "TRUTH_MANIFEST",
    "FormatProfile",
    "Simulation",
    "Stream",
    "TableSpec",
    "Workload",
    "adapt_column",
    "adapt_value",
    "build_stream",
    "derive_profile",
    "format_profile",
    "linked_tables",
    "many_tables",
    "mongo_collections",
    "names_tables",
    "partition_of",
    "rename_columns",
    "rich_tables",
    "shop_tables",
    "truth_file",
    "untyped_text",
    "value_converter",
    "write_truth",
]
