"""Every SQL text of the Spark layer: identifier and literal quoting, the MERGE, the rewrite,
the DDL of a table's schema step and its TRUNCATE, the maintenance statements, and the
expression fragments the stages' frames are built of (the round's actions, the staged
source, the fold, the key ranges, the reads' columns). No other ``spark/`` module writes SQL
text of its own (``tests/unit/test_sql_in_one_module.py``).

Where it sits: source -> decode -> changelog -> plan -> **apply** -> commit. The appliers
(:mod:`anycdc.spark.apply`, :mod:`anycdc.spark.scd2`), the schema step
(:mod:`anycdc.spark.table_schema`) and the pipeline's stages build their
statements as SQL text (a few calls into the JVM per table, whatever its width); every name
in that text comes from messages, so it is data: it is quoted here (:func:`q`, :func:`lit`)
and nowhere else. The MERGE of an SCD1 table (:func:`merge_statement`) and the batched
engine's rewrite of its files (:func:`rewrite_sql`) read the same staged source (the
``STAGE_`` columns) and are built side by side here, from one meaning of the actions:
:mod:`anycdc.spark.action_rules`' clauses (:data:`~anycdc.spark.action_rules.MERGE_CLAUSES`),
position guard (:func:`~anycdc.spark.action_rules.newer_than_row`) and column rule
(:func:`~anycdc.spark.action_rules.writes_column_sql`). No Spark import: text only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final, Protocol

from anycdc.spark.action_rules import (
    FOLD_START,
    FOLD_STEP,
    REPLACES,
    Effect,
    kept_sql,
    merge_clauses_sql,
    newer_than_row,
    reaches_sql,
    replaced_state,
    writes_column_sql,
)
from anycdc.spark.sql_types import cast_sql


class SourceTable(Protocol):
    """A source table by its names (a :class:`~anycdc.spark.plan.TablePlan`)."""

    @property
    def database(self) -> str | None: ...
    @property
    def schema(self) -> str | None: ...
    @property
    def table(self) -> str: ...


# The staged MERGE source holds the target's columns under their target names next to
# these: all in anycdc's ``_cdc_`` namespace, which no target column of a source takes.
STAGE_KIND: Final = "_cdc_in_kind"
STAGE_FULL: Final = "_cdc_in_full"
STAGE_POS: Final = "_cdc_in_pos"
STAGE_TS: Final = "_cdc_in_ts"
STAGE_OP: Final = "_cdc_in_op"
STAGE_BATCH: Final = "_cdc_in_batch"
STAGE_HAS: Final = "_cdc_in_has_"


def q(name: str) -> str:
    """Quote an identifier (names come from messages: they are data)."""
    return "`" + name.replace("`", "``") + "`"


def lit(text: str) -> str:
    """A SQL string literal. A ``$`` is written as its escape: Spark replaces ``${name}`` in
    a SQL text before parsing it (``spark.sql.variable.substitute``, on by default), and in
    a name from a message that is data.

    >>> print(lit("it's ${x}"))
    'it\\'s \\u0024{x}'
    """
    escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("$", "\\u0024")
    return "'" + escaped + "'"


def property_list(properties: dict[str, str]) -> str:
    """``'k' = 'v', ...`` for TBLPROPERTIES (names and values are the user's: quoted)."""
    return ", ".join(f"{lit(k)} = {lit(v)}" for k, v in properties.items())


# Key ranges: a key column's smallest and largest value in a batch are read as exact text
# and written back into the MERGE condition as bounds that Delta's data skipping compares
# with each file's min/max statistics. Dates and timestamps travel as day and microsecond
# counts (a timestamp's text would depend on the session time zone and its DST folds), a
# zone-less timestamp as its text when that has four-digit years; types without an exact
# round trip (BINARY, FLOAT, BOOLEAN) get no bounds.
_EXACT_TEXT: Final = re.compile(
    r"STRING|TINYINT|SMALLINT|INT|BIGINT|DECIMAL\(\d+,\d+\)|TIMESTAMP_NTZ"
)
_COUNTED: Final = {
    "DATE": ("unix_date", "date_from_unix_date"),
    "TIMESTAMP": ("unix_micros", "timestamp_micros"),
}
_NTZ_TEXT: Final = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?")


def has_exact_bounds(spark_type: str) -> bool:
    """Whether a key column of ``spark_type`` gets bounds (:func:`range_text_sql`).

    >>> has_exact_bounds("DECIMAL(12,2)"), has_exact_bounds("TIMESTAMP"), has_exact_bounds("BINARY")
    (True, True, False)
    """
    return spark_type in _COUNTED or _EXACT_TEXT.fullmatch(spark_type) is not None


def range_text_sql(spark_type: str, column: str) -> str:
    """SQL of ``column``'s value (of a type with :func:`has_exact_bounds`) as a text that
    :func:`range_bound_sql` turns back into the same value.

    >>> range_text_sql("DATE", "min(`d`)")
    'CAST(unix_date(min(`d`)) AS STRING)'
    """
    if spark_type in _COUNTED:
        return f"CAST({_COUNTED[spark_type][0]}({column}) AS STRING)"
    return f"CAST({column} AS STRING)"


def range_bound_sql(spark_type: str, text: str) -> str | None:
    """A constant of ``spark_type`` from a text of :func:`range_text_sql` (None where it
    could not be read back exactly).

    >>> range_bound_sql("DECIMAL(12,2)", "7.50"), range_bound_sql("TIMESTAMP", "1000")
    ("CAST('7.50' AS DECIMAL(12,2))", 'timestamp_micros(1000)')
    >>> range_bound_sql("TIMESTAMP_NTZ", "+10000-01-01 00:00:00") is None
    True
    """
    if spark_type == "TIMESTAMP_NTZ" and not _NTZ_TEXT.fullmatch(text):
        return None
    if spark_type in _COUNTED:
        return f"{_COUNTED[spark_type][1]}({int(text)})"
    if spark_type == "STRING":
        return lit(text)
    return f"CAST({lit(text)} AS {spark_type})"


def table_condition(plan: SourceTable) -> str:
    """SQL of "the event is of ``plan``'s source table" over changelog rows.

    >>> from anycdc.spark.plan import TablePlan
    >>> print(table_condition(TablePlan("shop", None, "orders")))
    database <=> 'shop' AND schema IS NULL AND `table` = 'orders'
    """
    parts = [
        f"{column} <=> {lit(value)}" if value is not None else f"{column} IS NULL"
        for column, value in (("database", plan.database), ("schema", plan.schema))
    ]
    return " AND ".join([*parts, f"`table` = {lit(plan.table)}"])


STAGED_META: Final = {
    "_cdc_position": STAGE_POS,
    "_cdc_ts": STAGE_TS,
    "_cdc_op": STAGE_OP,
    "_cdc_batch": STAGE_BATCH,
}
"""Each ``_cdc_`` column of an SCD1 table -> the staged column that writes it."""


def delta_ref(path: str) -> str:
    """A Delta table by its path, in SQL: ``delta.`/path```.

    >>> delta_ref("/t/a`b")
    'delta.`/t/a``b`'
    """
    return f"delta.{q(path)}"


def key_match(keys: Sequence[str]) -> list[str]:
    """The key columns of the table ``t`` and the staged source ``s`` equal, NULL to NULL
    included (``<=>``: a key column may hold NULL)."""
    return [f"t.{q(k)} <=> s.{q(k)}" for k in keys]


def merge_statement(
    table: str, view: str, keys: Sequence[str], ranges: Sequence[str], columns: Mapping[str, bool]
) -> str:
    """The MERGE of the staged rows in ``view`` into ``table`` (a SQL reference): the
    clauses of :data:`~anycdc.spark.action_rules.MERGE_CLAUSES`, every matched one guarded
    by the position (:func:`~anycdc.spark.action_rules.newer_than_row`).

    ``keys``: the key columns (their names in the table); ``ranges``: conditions that narrow
    the files read (:meth:`~anycdc.spark.apply.TableApplier.key_ranges`); ``columns``: each
    column of the source's by its name in the table -> whether the source still has it (a
    column dropped or renamed at the source keeps its values: only a change carrying it
    writes it).
    """
    on = " AND ".join([*key_match(keys), *ranges])
    newer = newer_than_row(f"s.{STAGE_POS}")
    sets = {}
    for target, current in columns.items():
        if target in keys:
            continue
        col, has = q(target), q(STAGE_HAS + target)
        writes = writes_column_sql(f"s.{STAGE_FULL}", f"s.{has}", current)
        sets[col] = f"CASE WHEN {writes} THEN s.{col} ELSE t.{col} END"
    meta = {name: f"s.{staged}" for name, staged in STAGED_META.items()}
    inserts = {q(target): f"s.{q(target)}" for target in columns}
    inserts.update(meta)
    update_set = ", ".join(f"{k} = {v}" for k, v in {**sets, **meta}.items())
    insert_cols = ", ".join(inserts)
    insert_vals = ", ".join(inserts.values())
    then = {
        Effect.DROP: "DELETE",
        Effect.UPDATE: f"UPDATE SET {update_set}",
        Effect.INSERT: f"INSERT ({insert_cols}) VALUES ({insert_vals})",
    }
    clauses = merge_clauses_sql(f"s.{STAGE_KIND}", newer, then)
    return f"MERGE INTO {table} t USING {view} s ON {on} {clauses}"


def rewrite_sql(
    existing: Sequence[str], keys: Sequence[str], columns: Mapping[str, bool]
) -> tuple[str, str, list[str]]:
    """What the MERGE of :func:`merge_statement` leaves of a table's rows, as the parts of one
    full outer join of the table's rows ``t`` (flagged ``_cdc_t_present``) and the staged
    source ``s``: (join condition, which joined rows are kept, each of the ``existing``
    columns' value).

    The rows kept are those the MERGE's clauses leave
    (:func:`~anycdc.spark.action_rules.kept_sql`); an action writes a kept row where no row
    has its key or where it is newer than the row
    (:func:`~anycdc.spark.action_rules.reaches_sql`, the MERGE's guard): an upsert replaces
    the columns its image has (all of them for a full image), a new row takes the action's
    values, and a row no newer action reaches stays as it was. ``keys`` and ``columns`` as
    for :func:`merge_statement`.
    """
    on = " AND ".join(key_match(keys))
    row = "coalesce(t._cdc_t_present, false)"
    newer = newer_than_row(f"s.{STAGE_POS}")
    kind = f"s.{STAGE_KIND}"
    applies = reaches_sql(row, kind, newer)
    values = []
    for column in existing:
        mine, theirs = f"t.{q(column)}", f"s.{q(column)}"
        if column in STAGED_META:
            value = f"CASE WHEN {applies} THEN s.{STAGED_META[column]} ELSE {mine} END"
        elif column not in columns:
            value = mine  # a column no action knows of
        elif column in keys:
            value = f"CASE WHEN {row} THEN {mine} ELSE {theirs} END"
        else:
            writes = writes_column_sql(
                f"s.{STAGE_FULL}", f"s.{q(STAGE_HAS + column)}", current=columns[column]
            )
            if columns[column]:
                # a new row (no row had the key) takes every column of the action's
                given = f"({writes} OR NOT {row})"
                value = f"CASE WHEN {applies} AND {given} THEN {theirs} ELSE {mine} END"
            else:
                # a column dropped or renamed at the source: kept, written only by a change
                # that still carries it (one from before the DDL), filled by an insert
                value = (
                    f"CASE WHEN {applies} AND {writes} THEN {theirs} WHEN {row} THEN {mine} "
                    f"ELSE {theirs} END"
                )
        values.append(f"{value} AS {q(column)}")
    return on, kept_sql(row, kind, newer), values


# --------------------------------------------------------------------------- DDL
# The statements of a table's schema step (:mod:`anycdc.spark.table_schema`: create, evolve,
# properties, layout, catalog) and of its TRUNCATE (:mod:`anycdc.spark.apply`). ``table`` is
# the table in SQL (:func:`delta_ref`); every other name is quoted here.


def column_sql(name: str, spark_type: str, comment: str | None = None) -> str:
    """A column's definition (CREATE TABLE, ADD COLUMNS), with its ``comment`` if any.

    >>> column_sql("a`b", "BIGINT", "source column: A b")
    "`a``b` BIGINT COMMENT 'source column: A b'"
    """
    ddl = f"{q(name)} {spark_type}"
    return ddl if comment is None else f"{ddl} COMMENT {lit(comment)}"


def create_table_sql(
    table: str,
    columns: Sequence[str],
    properties: dict[str, str],
    partitioned_by: Sequence[str] = (),
    clustered_by: Sequence[str] = (),
) -> str:
    """CREATE TABLE (if it does not exist) of the column definitions ``columns``
    (:func:`column_sql`) with ``properties``, partitioned by the columns ``partitioned_by``,
    else clustered by ``clustered_by`` (none: neither)."""
    layout = ""
    if partitioned_by:
        layout = f" PARTITIONED BY ({', '.join(q(c) for c in partitioned_by)})"
    elif clustered_by:
        layout = f" CLUSTER BY ({', '.join(q(c) for c in clustered_by)})"
    return (
        f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(columns)}) USING delta"
        f"{layout} TBLPROPERTIES ({property_list(properties)})"
    )


def set_properties_sql(table: str, properties: dict[str, str]) -> str:
    """ALTER TABLE ... SET TBLPROPERTIES of ``properties``."""
    return f"ALTER TABLE {table} SET TBLPROPERTIES ({property_list(properties)})"


def add_columns_sql(table: str, columns: Sequence[str]) -> str:
    """ALTER TABLE ... ADD COLUMNS of the column definitions ``columns`` (:func:`column_sql`)."""
    return f"ALTER TABLE {table} ADD COLUMNS ({', '.join(columns)})"


def alter_type_sql(table: str, column: str, spark_type: str) -> str:
    """ALTER TABLE ... ALTER COLUMN ... TYPE (Delta's type widening)."""
    return f"ALTER TABLE {table} ALTER COLUMN {q(column)} TYPE {spark_type}"


def rename_column_sql(table: str, old: str, new: str) -> str:
    """ALTER TABLE ... RENAME COLUMN (column mapping: metadata only)."""
    return f"ALTER TABLE {table} RENAME COLUMN {q(old)} TO {q(new)}"


def comment_column_sql(table: str, column: str, comment: str) -> str:
    """ALTER TABLE ... ALTER COLUMN ... COMMENT (``''`` clears it)."""
    return f"ALTER TABLE {table} ALTER COLUMN {q(column)} COMMENT {lit(comment)}"


def drop_column_sql(table: str, column: str) -> str:
    """ALTER TABLE ... DROP COLUMN (column mapping: metadata only)."""
    return f"ALTER TABLE {table} DROP COLUMN {q(column)}"


def cluster_by_sql(table: str, columns: Sequence[str]) -> str:
    """ALTER TABLE ... CLUSTER BY the table's ``columns``."""
    return f"ALTER TABLE {table} CLUSTER BY ({', '.join(q(c) for c in columns)})"


def catalog_name_sql(parts: Sequence[str]) -> str:
    """A catalog name from its parts (unquoted).

    >>> catalog_name_sql(["lake", "shop.orders"])
    '`lake`.`shop.orders`'
    """
    return ".".join(q(p) for p in parts)


def create_database_sql(namespace: Sequence[str]) -> str:
    """CREATE DATABASE (if it does not exist) of the catalog namespace ``namespace``."""
    return f"CREATE DATABASE IF NOT EXISTS {catalog_name_sql(namespace)}"


def register_table_sql(name: Sequence[str], path: str) -> str:
    """Register the Delta table at ``path`` in the catalog as ``name`` (its parts, unquoted),
    an external table; an existing name is left as it is."""
    return f"CREATE TABLE IF NOT EXISTS {catalog_name_sql(name)} USING delta LOCATION {lit(path)}"


def truncated_sql(position: str) -> str:
    """The rows a TRUNCATE at ``position`` empties (SQL): those older than it (and those
    without a position).

    >>> truncated_sql("0007")
    "_cdc_position IS NULL OR _cdc_position < '0007'"
    """
    return f"_cdc_position IS NULL OR _cdc_position < {lit(position)}"


def after_truncate_sql(position: str) -> str:
    """The rows a TRUNCATE at ``position`` keeps (SQL): those after it.

    >>> after_truncate_sql("0007")
    "NOT (_cdc_position IS NULL OR _cdc_position < '0007')"
    """
    return f"NOT ({truncated_sql(position)})"


def truncate_sql(table: str, position: str) -> str:
    """DELETE of the rows a TRUNCATE at ``position`` empties (:func:`truncated_sql`)."""
    return f"DELETE FROM {table} WHERE {truncated_sql(position)}"


# --------------------------------------------------------------------------- SCD2
# The statements of a history table's write (:mod:`anycdc.spark.scd2`).


def create_table_of_sql(table: str, schema: str) -> str:
    """CREATE TABLE (if it does not exist) of the DDL column list ``schema`` (anycdc's own
    table: no name in it comes from a message).

    >>> create_table_of_sql("delta.`/e`", "_key STRING, seq STRING")
    'CREATE TABLE IF NOT EXISTS delta.`/e` (_key STRING, seq STRING) USING delta'
    """
    return f"CREATE TABLE IF NOT EXISTS {table} ({schema}) USING delta"


def history_merge_sql(table: str, view: str, updates: Sequence[str], columns: Sequence[str]) -> str:
    """The MERGE of a history table's recomputed versions from ``view`` on ``(_cdc_key,
    _cdc_seq)``: a new version (``_cdc_in_new``) is inserted with ``columns``, a changed one
    has ``updates`` set; nothing else is written."""
    update_set = ", ".join(f"{q(n)} = s.{q(n)}" for n in updates)
    insert_cols = ", ".join(q(n) for n in columns)
    insert_vals = ", ".join(f"s.{q(n)}" for n in columns)
    return (
        f"MERGE INTO {table} t USING {view} s "
        "ON t._cdc_key = s._cdc_key AND t._cdc_seq = s._cdc_seq "
        f"WHEN MATCHED AND NOT s._cdc_in_new THEN UPDATE SET {update_set} "
        f"WHEN NOT MATCHED AND s._cdc_in_new THEN INSERT ({insert_cols}) VALUES ({insert_vals})"
    )


def ends_merge_sql(table: str, view: str) -> str:
    """The MERGE of a history table's end markers (deletes, truncates) from ``view`` into its
    end-marker table: each ``(key, seq, kind)`` once."""
    return (
        f"MERGE INTO {table} t USING {view} s "
        "ON t._key <=> s._key AND t.seq = s.seq AND t.kind = s.kind "
        "WHEN NOT MATCHED THEN INSERT (_key, seq, ts_ms, kind, batch) "
        "VALUES (s._key, s.seq, s.ts_ms, s.kind, s.batch)"
    )


def describe_detail_sql(table: str) -> str:
    """DESCRIBE DETAIL: a Delta table's properties, files and size in one look at its log."""
    return f"DESCRIBE DETAIL {table}"


def show_properties_sql(table: str) -> str:
    """SHOW TBLPROPERTIES: a table's properties as (key, value) rows."""
    return f"SHOW TBLPROPERTIES {table}"


def vacuum_sql(table: str, retain_hours: float | None = None) -> str:
    """VACUUM, with the table's own retention or ``retain_hours``.

    >>> vacuum_sql("delta.`/t`", 0.5)
    'VACUUM delta.`/t` RETAIN 0.5 HOURS'
    """
    if retain_hours is None:
        return f"VACUUM {table}"
    return f"VACUUM {table} RETAIN {retain_hours:g} HOURS"


def max_text_sql(table: str, column: str) -> str:
    """The greatest value of ``column`` as text (``high``): a key bound's read."""
    return f"SELECT CAST(max({q(column)}) AS STRING) AS high FROM {table}"


# --------------------------------------------------------------------------- fragments
# The expressions the stages' frames are built of (``F.expr``, ``selectExpr``, ``where``):
# built here as the statements are, with the same quoting, so that a frame's module holds
# the plan and this one its SQL text.

NAMES_A_TABLE: Final = "`table` IS NOT NULL AND `table` <> ''"
"""The changelog rows some table takes (SQL): a DDL may name no table (``CREATE DATABASE``);
such a row, like a heartbeat, is counted as skipped (:mod:`anycdc.spark.accounting`)."""
NAMES_A_TABLE_OR_FALSE: Final = f"coalesce({NAMES_A_TABLE}, false)"
""":data:`NAMES_A_TABLE`, false where it is NULL (a filter's negation keeps those rows)."""
QUALIFIED_NAME_SQL: Final = (
    "array_join(filter(array(`database`, `schema`, `table`), x -> x <> ''), '.')"
)
"""A changelog row's table as ``db.schema.table``, its empty parts left out."""
KAFKA_SOURCE_COLUMNS: Final = (
    "topic AS source", "partition", "offset", "key", "value",
    "unix_millis(timestamp) AS produced_ms",
)  # fmt: skip
"""The columns the pipeline reads of a Kafka record."""
NOW_SQL: Final = "SELECT current_timestamp() AS now"
"""The session's clock, as one row ``now``."""
ROW_KEY: Final = "_cdc_row_key"
"""The full-row identity column of a table without a key (:func:`row_key_sql`)."""


def null_of_sql(spark_type: str) -> str:
    """A NULL of ``spark_type``.

    >>> null_of_sql("DECIMAL(9,2)")
    'CAST(NULL AS DECIMAL(9,2))'
    """
    return f"CAST(NULL AS {spark_type})"


def as_text_sql(column: str) -> str:
    """The column ``column``'s value as text (a value re-read through its new type).

    >>> as_text_sql("a`b")
    'CAST(`a``b` AS STRING)'
    """
    return f"CAST({q(column)} AS STRING)"


def converted_sql(column: str, spark_type: str) -> str:
    """The column ``column``'s value cast to ``spark_type`` (a widening Spark casts exactly).

    >>> converted_sql("n", "BIGINT")
    'CAST(`n` AS BIGINT)'
    """
    return f"CAST({q(column)} AS {spark_type})"


def named_sql(value: str, name: str) -> str:
    """``value`` under the column name ``name``.

    >>> named_sql("1", "x y")
    '1 AS `x y`'
    """
    return f"{value} AS {q(name)}"


def image_value_sql(image: str, name: str, spark_type: str) -> str:
    """The typed value of column ``name`` in the map ``image`` (SQL of a map of texts).

    >>> image_value_sql("image", "id", "INT")
    "try_cast(element_at(image, 'id') AS INT)"
    """
    return cast_sql(f"element_at({image}, {lit(name)})", spark_type)


def timestamp_of_millis_sql(millis: str) -> str:
    """The timestamp of ``millis`` (SQL of milliseconds since the epoch)."""
    return f"timestamp_millis({millis})"


def millis_of_timestamp_sql(timestamp: str) -> str:
    """The milliseconds since the epoch of ``timestamp`` (SQL of a timestamp)."""
    return f"unix_millis({timestamp})"


def bad_cast_sql(text: str, name: str, target_sql: str, target: str) -> str:
    """SQL: why the value ``text`` of column ``name`` (SQL) cannot be cast to ``target``
    (named by ``target_sql`` in the reason), or NULL when it can.

    >>> print(bad_cast_sql("v", "'id'", "'INT'", "INT"))  # doctest: +NORMALIZE_WHITESPACE
    CASE WHEN v IS NOT NULL AND try_cast(v AS INT) IS NULL
    THEN 'id' || ': cannot cast ' || substr(v, 1, 80) || ' to ' || 'INT' END
    """
    return (
        f"CASE WHEN {cannot_cast_sql(text, target)} "
        f"THEN {name} || ': cannot cast ' || substr({text}, 1, 80) || ' to ' || {target_sql} END"
    )


def cannot_cast_sql(text: str, target: str) -> str:
    """SQL: the value ``text`` is there and cannot be cast to ``target`` (the one test
    behind :func:`bad_cast_sql`'s reason).

    >>> cannot_cast_sql("v", "INT")
    'v IS NOT NULL AND try_cast(v AS INT) IS NULL'
    """
    return f"{text} IS NOT NULL AND {cast_sql(text, target)} IS NULL"


_NUMERIC_TYPES: Final = r"^(TINYINT|SMALLINT|INT|BIGINT|FLOAT|DOUBLE|DECIMAL)"
_TEMPORAL_TYPES: Final = r"^(DATE|TIMESTAMP_NTZ)$"


def identity_value_sql(value: str, type_sql: str) -> str:
    """SQL: the text ``value`` as the full-row identity reads it, for a column of the Spark
    type ``type_sql`` (SQL; NULL for an untyped or text column).

    The one rule of what "the same row" means for a table without a key. The identity must
    not change when a column widens (``sql_types.widened``), or a delete whose before image
    was written after the widening finds no row written before it. So a value is read by
    its type's family, not by its type:

    - numbers (every integer, FLOAT/DOUBLE, DECIMAL): a plain decimal text loses its
      fraction's trailing zeros (``8462274.8500`` and ``8462274.85``, ``5.00`` and ``5``:
      a DECIMAL's scale growing, an integer column becoming a DECIMAL);
    - DATE and TIMESTAMP_NTZ: a fraction loses its trailing zeros and a midnight time is
      dropped (``2024-01-02`` and ``2024-01-02T00:00:00.000``: DATE -> TIMESTAMP_NTZ);
    - anything else (text, a value in exponent form) is its text as sent.

    >>> print(identity_value_sql("v", "t"))  # doctest: +ELLIPSIS
    CASE WHEN t RLIKE '^(TINYINT|...)' AND v RLIKE '^-?[0-9]+[.][0-9]+$' THEN ...
    """
    trimmed = f"regexp_replace(regexp_replace({value}, '0+$', ''), '[.]$', '')"
    temporal = (
        f"regexp_replace(regexp_replace(regexp_replace({value}, '([.][0-9]*?)0+$', '$1'), "
        "'[.]$', ''), '[T ]00:00:00$', '')"
    )
    return (
        f"CASE WHEN {type_sql} RLIKE '{_NUMERIC_TYPES}' AND {value} RLIKE '^-?[0-9]+[.][0-9]+$' "
        f"THEN {trimmed} WHEN {type_sql} RLIKE '{_TEMPORAL_TYPES}' THEN {temporal} "
        f"ELSE {value} END"
    )


def row_key_sql(image: str, types: str) -> str:
    """SQL: the map ``image`` with its full-row identity :data:`ROW_KEY` added (a table
    without a key): a hash of its sorted non-null entries, each value read by
    :func:`identity_value_sql` for its column's type in ``types`` (SQL: a map column ->
    Spark type, the table's typed columns). So the same row hashes the same whatever the
    column order of its message, before and after an ADD COLUMN, and before and after a
    column's type widens.

    The identity is stored in the table (column :data:`ROW_KEY`, written with the row) and
    compared with the identity of a delete's before image. As the rule reads a value by
    its type's family only, an identity stored before a widening equals the one computed
    after it, and no stored identity has to be recomputed when the schema changes."""
    values = f"map_filter({image}, (k, v) -> v IS NOT NULL)"
    read = identity_value_sql("v", f"element_at({types}, k)")
    content = f"to_json(array_sort(map_entries(transform_values({values}, (k, v) -> {read}))))"
    return (
        f"CASE WHEN {image} IS NULL THEN {image} "
        f"ELSE map_concat({image}, map({lit(ROW_KEY)}, sha2({content}, 256))) END"
    )


def round_rows_sql(ops: str) -> str:
    """The changelog rows of a round that give row actions (their op in ``ops``, SQL), the
    second half of a split update aside, not older than their table's TRUNCATE floor
    (``_s_floor``, a column of :class:`~anycdc.spark.actions.ActionSpec`'s frame)."""
    return (
        f"{ops} AND coalesce(split, '') <> 'before' "
        "AND (_s_floor IS NULL OR position IS NULL OR position > _s_floor)"
    )


def renamed_image_sql(image: str) -> str:
    """The map ``image`` with the table's renames (``_s_renames``) of a later position
    applied: an older event's column under the name it has now.

    A table without renames (nearly every one) takes the image as it is: ``aggregate``
    is a lambda, which Spark evaluates without generated code for every row, even over an
    empty list.

    >>> renamed_image_sql("after").startswith("CASE WHEN size(_s_renames) = 0 THEN after ELSE")
    True
    """
    return (
        f"CASE WHEN size(_s_renames) = 0 THEN {image} "
        f"ELSE aggregate(_s_renames, {image}, (acc, r) -> CASE WHEN position < r.pos "
        "AND map_contains_key(acc, r.old) THEN map_concat(map_filter(acc, (k, v) -> k <> r.old), "
        "map(r.new, element_at(acc, r.old))) ELSE acc END) END"
    )


def keyless_image_sql(image: str) -> str:
    """The map ``image`` with its full-row identity (:func:`row_key_sql`) where its table
    has no key (``_s_keyless``), its values read by the table's typed columns."""
    return (
        f"CASE WHEN _s_keyless THEN {row_key_sql(image, 'map_from_entries(_s_checks)')} "
        f"ELSE {image} END"
    )


def key_text_sql(image: str) -> str:
    """An action's key: the values of the table's key columns (``_s_keys``) in ``image``,
    as JSON text (a JSON array of the values, in key order).

    A one-column key, the common case, is read without a lambda: Spark runs a lambda
    (``transform``) without generated code, ~0.9 s per million rows of a round, and an
    update's key is read up to three times (its upsert's, and its before and after keys
    compared for a key change). Both give the same text.

    >>> print(key_text_sql("after"))  # doctest: +NORMALIZE_WHITESPACE
    CASE WHEN size(_s_keys) = 1 THEN to_json(array(element_at(after, _s_keys[0])))
    ELSE to_json(transform(_s_keys, k -> element_at(after, k))) END
    """
    return (
        f"CASE WHEN size(_s_keys) = 1 THEN to_json(array(element_at({image}, _s_keys[0]))) "
        f"ELSE to_json(transform(_s_keys, k -> element_at({image}, k))) END"
    )


def key_changed_sql() -> str:
    """Whether an update's key changed: its ``before`` and ``after`` keys' texts
    (:func:`key_text_sql`) differ. A one-column key compares the two values, NULL-safe, as
    its texts would (one value's JSON text is the same exactly when the value is), without
    writing either as JSON.

    >>> print(key_changed_sql())  # doctest: +NORMALIZE_WHITESPACE
    CASE WHEN size(_s_keys) = 1
    THEN NOT (element_at(before, _s_keys[0]) <=> element_at(after, _s_keys[0]))
    ELSE to_json(transform(_s_keys, k -> element_at(before, k)))
    <> to_json(transform(_s_keys, k -> element_at(after, k))) END
    """
    texts = [
        f"to_json(transform(_s_keys, k -> element_at({image}, k)))" for image in ("before", "after")
    ]
    return (
        "CASE WHEN size(_s_keys) = 1 "
        "THEN NOT (element_at(before, _s_keys[0]) <=> element_at(after, _s_keys[0])) "
        f"ELSE {texts[0]} <> {texts[1]} END"
    )


def history_truncates_sql(truncate_rows: str) -> str:
    """The TRUNCATE events (``truncate_rows``, SQL) of history tables (``_s_history``)."""
    return f"_s_history AND {truncate_rows}"


def bad_reasons_sql(types: Sequence[str], common: Sequence[tuple[str, str]] = ()) -> str:
    """Why an action's values cannot be cast to their columns' types (``_s_checks``: each
    checked column and its Spark type, one of ``types``), as one text; NULL when they all
    can (:func:`bad_cast_sql`).

    The reasons come from a lambda over the table's checks, which Spark runs without
    generated code, a column at a time: most of an apply round's cost per action when
    every action ran it. So with ``common`` (the round's most shared (column, type)
    checks) the lambda runs only for an action that may hold a bad value: one whose
    table has checks outside ``common`` (``_s_rest``), or whose value of one of its
    ``common`` checks (bit ``i`` of ``_s_mask`` for ``common[i]``) cannot be cast. That
    test is plain, generated code; a good action's ``_bad`` is NULL either way.

    >>> print(bad_reasons_sql(["INT"], [("id", "INT")]))  # doctest: +ELLIPSIS
    CASE WHEN _s_rest OR ((_s_mask & 1) <> 0 AND element_at(image, 'id') IS NOT NULL ...
    """
    if not types:
        return null_of_sql("STRING")
    value = "element_at(image, c.name)"
    branches = " ".join(
        f"WHEN {lit(t)} THEN {bad_cast_sql(value, 'c.name', 'c.type', t)}" for t in types
    )
    reasons = f"nullif(concat_ws('; ', transform(_s_checks, c -> CASE c.type {branches} END)), '')"
    if not common:
        return reasons
    maybe_bad = " OR ".join(
        f"((_s_mask & {1 << bit}) <> 0 AND "
        f"{cannot_cast_sql(f'element_at(image, {lit(name)})', spark_type)})"
        for bit, (name, spark_type) in enumerate(common)
    )
    return f"CASE WHEN _s_rest OR {maybe_bad} THEN {reasons} END"


def key_number_sql(number_type: str) -> str:
    """The number of the table's key bound column (``_s_bound``) in an action's image, as
    ``number_type``; NULL for a table without a key bound."""
    return (
        f"CASE WHEN _s_bound IS NULL THEN {null_of_sql(number_type)} "
        f"ELSE CAST(element_at(image, _s_bound) AS {number_type}) END"
    )


def fold_order_sql(batch_column: str) -> str:
    """The order the fold takes a key's actions in, as one orderable struct: source
    position, then arrival (the ingest batch ``batch_column``, then the Kafka coordinates)."""
    return (
        f"struct(coalesce(position, '') AS p, coalesce({batch_column}, -1) AS b, source, "
        "partition, offset, event_index)"
    )


def _fold_event_sql(batch_column: str) -> str:
    """An action as the fold reads it: its order ``o`` and what the step reads."""
    return (
        f"struct({fold_order_sql(batch_column)} AS o, kind, image, full, ts_ms, op, "
        "coalesce(position, '') AS position)"
    )


_BY_ORDER: Final = "(l, r) -> CASE WHEN l.o < r.o THEN -1 WHEN l.o > r.o THEN 1 ELSE 0 END"
"""Actions compared by their order alone (maps are not orderable)."""


def fold_events_sql(batch_column: str) -> str:
    """A key's actions as one array, in the order the fold takes them
    (:func:`fold_order_sql`): the reference fold's input (:data:`FOLD_STATE_SQL`)."""
    return f"array_sort(collect_list({_fold_event_sql(batch_column)}), {_BY_ORDER})"


FOLD_STATE_SQL: Final = f"aggregate(evs, {FOLD_START}, {FOLD_STEP})"
"""A key's final state from its ordered actions ``evs`` (:func:`fold_events_sql`), by
:data:`~anycdc.spark.action_rules.FOLD_STEP`: the reference fold."""

FOLD_ANCHOR: Final = "_anchor"
"""The anchored fold's column of a key's last action that :data:`~anycdc.spark.action_rules.REPLACES`
the state (NULL: none)."""
FOLD_PARTIALS: Final = "_partials"
"""The anchored fold's column of a key's other actions (partial images), unordered."""


def fold_anchor_sql(batch_column: str) -> str:
    """Aggregate: a key's last action (by :func:`fold_order_sql`) that
    :data:`~anycdc.spark.action_rules.REPLACES` the state: a plain ``max_by`` in generated
    code, where the reference collects and sorts every action (a lambda per comparison)."""
    order = fold_order_sql(batch_column)
    return f"max_by({_fold_event_sql(batch_column)}, CASE WHEN {REPLACES} THEN {order} END)"


def fold_partials_sql(batch_column: str) -> str:
    """Aggregate: a key's actions that do not replace the state (empty for a stream of full
    images, the common case)."""
    return f"collect_list(CASE WHEN NOT {REPLACES} THEN {_fold_event_sql(batch_column)} END)"


_ANCHORED: Final = replaced_state(FOLD_ANCHOR)
FOLD_ANCHORED_STATE_SQL: Final = (
    f"CASE WHEN size({FOLD_PARTIALS}) = 0 THEN {_ANCHORED} "
    f"ELSE aggregate(array_sort(filter({FOLD_PARTIALS}, "
    f"p -> {FOLD_ANCHOR} IS NULL OR p.o > {FOLD_ANCHOR}.o), {_BY_ORDER}), "
    f"CASE WHEN {FOLD_ANCHOR} IS NULL THEN {FOLD_START} ELSE {_ANCHORED} END, {FOLD_STEP}) END"
)
"""A key's final state from :func:`fold_anchor_sql` and :func:`fold_partials_sql`: the
anchor's (:func:`~anycdc.spark.action_rules.replaced_state`), then the partial images after
it in order, by the same step as :data:`FOLD_STATE_SQL` (partials before the anchor cannot
change the state, so they are left out). The same state as the reference fold's."""


def staged_columns_sql(
    types: Mapping[str, str], targets: Mapping[str, str], batch_column: str
) -> list[str]:
    """The staged MERGE source's columns from a folded state ``st``: its kind and
    fullness, each column's typed value (``types``: source name -> Spark type) under its
    target name (``targets``) with whether the image carried it, then the state's
    position, time, op and the batch (``batch_column``).

    >>> staged_columns_sql({"id": "INT"}, {"id": "id"}, "b")[2:4]
    ["try_cast(element_at(st.row, 'id') AS INT) AS `id`", "map_contains_key(st.row, 'id') AS `_cdc_in_has_id`"]
    """
    columns = [f"st.kind AS {STAGE_KIND}", f"st.full AS {STAGE_FULL}"]
    for name, spark_type in types.items():
        target = targets[name]
        columns.append(named_sql(image_value_sql("st.row", name, spark_type), target))
        columns.append(named_sql(f"map_contains_key(st.row, {lit(name)})", STAGE_HAS + target))
    return [
        *columns,
        f"nullif(st.pos, '') AS {STAGE_POS}",
        f"{timestamp_of_millis_sql('st.ts')} AS {STAGE_TS}",
        f"st.op AS {STAGE_OP}",
        f"{batch_column} AS {STAGE_BATCH}",
    ]


def inserted_columns_sql(targets: Sequence[str]) -> list[str]:
    """The columns an append writes from staged rows: the table's ``targets``, then its
    ``_cdc_`` columns from their staged ones (:data:`STAGED_META`)."""
    return [*(q(t) for t in targets), *(f"{s} AS {n}" for n, s in STAGED_META.items())]


def has_null_sql(column: str) -> str:
    """Whether any row's ``column`` is NULL (an aggregate).

    >>> has_null_sql("id")
    'bool_or(`id` IS NULL)'
    """
    return f"bool_or({q(column)} IS NULL)"


def key_range_sql(column: str, low: str, high: str) -> list[str]:
    """The table's (``t``) ``column`` between the constants ``low`` and ``high``
    (:func:`range_bound_sql`): a MERGE's key range, which Delta compares with its files'
    statistics.

    >>> key_range_sql("id", "1", "9")
    ['t.`id` >= 1', 't.`id` <= 9']
    """
    return [f"t.{q(column)} >= {low}", f"t.{q(column)} <= {high}"]


def expiry_sql(hours: float) -> str:
    """The time before which a row of ``hours``' retention has expired (SQL of a timestamp).

    >>> expiry_sql(1.5)
    'current_timestamp() - make_interval(0, 0, 0, 0, 0, 0, 5400)'
    """
    return f"current_timestamp() - make_interval(0, 0, 0, 0, 0, 0, {hours * 3600:.0f})"


def delete_expired_sql(table: str, column: str, hours: float) -> str:
    """DELETE of the rows of ``table`` whose ``column`` is older than ``hours`` ago."""
    return f"DELETE FROM {table} WHERE {q(column)} < {expiry_sql(hours)}"


def optimize_sql(table: str) -> str:
    """OPTIMIZE: ``table``'s small files compacted."""
    return f"OPTIMIZE {table}"
