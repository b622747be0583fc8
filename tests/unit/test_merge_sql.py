"""The SQL text of the apply step's statements (:mod:`anycdc.spark.merge_sql`): every name
quoted by ``q``, every value by ``lit``, the statements as the schema step and the TRUNCATE
have always sent them. No Spark."""

from __future__ import annotations

from anycdc.spark.merge_sql import (
    add_columns_sql,
    alter_type_sql,
    catalog_name_sql,
    cluster_by_sql,
    column_sql,
    comment_column_sql,
    create_database_sql,
    create_table_of_sql,
    create_table_sql,
    delta_ref,
    describe_detail_sql,
    drop_column_sql,
    ends_merge_sql,
    history_merge_sql,
    max_text_sql,
    merge_statement,
    register_table_sql,
    rename_column_sql,
    rewrite_sql,
    set_properties_sql,
    show_properties_sql,
    truncate_sql,
    vacuum_sql,
)

T = delta_ref("/lake/shop/orders")
ODD = "o'dd`c"  # a name that needs both quotings


def test_the_table_is_its_quoted_path() -> None:
    assert T == "delta.`/lake/shop/orders`"


def test_a_column_definition_with_and_without_a_comment() -> None:
    assert column_sql("id", "BIGINT") == "`id` BIGINT"
    assert column_sql(ODD, "DECIMAL(12,2)", "it's A") == (
        "`o'dd``c` DECIMAL(12,2) COMMENT 'it\\'s A'"
    )
    assert column_sql("x", "STRING", "") == "`x` STRING COMMENT ''"


def test_create_table_plain_partitioned_and_clustered() -> None:
    cols = [column_sql("id", "BIGINT"), column_sql("_cdc_position", "STRING")]
    props = {"delta.appendOnly": "false", "anycdc.x": "a'b"}
    head = f"CREATE TABLE IF NOT EXISTS {T} (`id` BIGINT, `_cdc_position` STRING) USING delta"
    tail = " TBLPROPERTIES ('delta.appendOnly' = 'false', 'anycdc.x' = 'a\\'b')"
    assert create_table_sql(T, cols, props) == head + tail
    assert create_table_sql(T, cols, props, ["day", ODD]) == (
        head + " PARTITIONED BY (`day`, `o'dd``c`)" + tail
    )
    assert create_table_sql(T, cols, props, [], ["id"]) == head + " CLUSTER BY (`id`)" + tail
    # partitions win: a table is never both
    assert create_table_sql(T, cols, props, ["day"], ["id"]) == (
        head + " PARTITIONED BY (`day`)" + tail
    )
    assert create_table_sql(T, cols, {}) == head + " TBLPROPERTIES ()"


def test_alter_table_statements() -> None:
    assert set_properties_sql(T, {"delta.enableTypeWidening": "true"}) == (
        f"ALTER TABLE {T} SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')"
    )
    assert set_properties_sql(T, {"anycdc.truncatePosition": "0001'2"}) == (
        f"ALTER TABLE {T} SET TBLPROPERTIES ('anycdc.truncatePosition' = '0001\\'2')"
    )
    assert add_columns_sql(T, [column_sql("a", "INT"), column_sql("b", "DATE", "B")]) == (
        f"ALTER TABLE {T} ADD COLUMNS (`a` INT, `b` DATE COMMENT 'B')"
    )
    assert alter_type_sql(T, ODD, "BIGINT") == f"ALTER TABLE {T} ALTER COLUMN `o'dd``c` TYPE BIGINT"
    assert rename_column_sql(T, "qty", ODD) == (f"ALTER TABLE {T} RENAME COLUMN `qty` TO `o'dd``c`")
    assert comment_column_sql(T, "amount", "") == (
        f"ALTER TABLE {T} ALTER COLUMN `amount` COMMENT ''"
    )
    assert (
        comment_column_sql(T, "a", "it's") == f"ALTER TABLE {T} ALTER COLUMN `a` COMMENT 'it\\'s'"
    )
    assert drop_column_sql(T, ODD) == f"ALTER TABLE {T} DROP COLUMN `o'dd``c`"
    assert cluster_by_sql(T, ["k", ODD]) == f"ALTER TABLE {T} CLUSTER BY (`k`, `o'dd``c`)"


def test_catalog_statements() -> None:
    assert catalog_name_sql(["lake", "shop_orders"]) == "`lake`.`shop_orders`"
    assert create_database_sql(["spark_catalog", "lake"]) == (
        "CREATE DATABASE IF NOT EXISTS `spark_catalog`.`lake`"
    )
    assert register_table_sql(["lake", ODD], "/t/it's") == (
        "CREATE TABLE IF NOT EXISTS `lake`.`o'dd``c` USING delta LOCATION '/t/it\\'s'"
    )


def test_truncate_deletes_the_rows_before_its_position() -> None:
    assert truncate_sql(T, "00000012'x") == (
        f"DELETE FROM {T} WHERE _cdc_position IS NULL OR _cdc_position < '00000012\\'x'"
    )


def test_the_history_merge_inserts_new_versions_and_updates_changed_ones() -> None:
    text = history_merge_sql(T, "v", [ODD, "_cdc_valid_to"], [ODD, "_cdc_key", "_cdc_seq"])
    assert text == (
        f"MERGE INTO {T} t USING v s ON t._cdc_key = s._cdc_key AND t._cdc_seq = s._cdc_seq "
        "WHEN MATCHED AND NOT s._cdc_in_new THEN UPDATE SET `o'dd``c` = s.`o'dd``c`, "
        "`_cdc_valid_to` = s.`_cdc_valid_to` "
        "WHEN NOT MATCHED AND s._cdc_in_new THEN INSERT (`o'dd``c`, `_cdc_key`, `_cdc_seq`) "
        "VALUES (s.`o'dd``c`, s.`_cdc_key`, s.`_cdc_seq`)"
    )


def test_the_end_markers_are_merged_once_each() -> None:
    ends = delta_ref("/lake/_anycdc/scd2_ends/shop/orders")
    assert create_table_of_sql(ends, "_key STRING, seq STRING") == (
        f"CREATE TABLE IF NOT EXISTS {ends} (_key STRING, seq STRING) USING delta"
    )
    assert ends_merge_sql(ends, "e") == (
        f"MERGE INTO {ends} t USING e s ON t._key <=> s._key AND t.seq = s.seq "
        "AND t.kind = s.kind WHEN NOT MATCHED THEN INSERT (_key, seq, ts_ms, kind, batch) "
        "VALUES (s._key, s.seq, s.ts_ms, s.kind, s.batch)"
    )


def test_the_maintenance_statements_and_the_key_bound_read() -> None:
    assert describe_detail_sql(T) == "DESCRIBE DETAIL delta.`/lake/shop/orders`"
    assert show_properties_sql(T) == "SHOW TBLPROPERTIES delta.`/lake/shop/orders`"
    assert vacuum_sql(T) == "VACUUM delta.`/lake/shop/orders`"
    assert vacuum_sql(T, 168) == "VACUUM delta.`/lake/shop/orders` RETAIN 168 HOURS"
    assert vacuum_sql(T, 0.25) == "VACUUM delta.`/lake/shop/orders` RETAIN 0.25 HOURS"
    assert max_text_sql(T, ODD) == (
        "SELECT CAST(max(`o'dd``c`) AS STRING) AS high FROM delta.`/lake/shop/orders`"
    )


NEWER = "(s._cdc_in_pos IS NULL OR t._cdc_position IS NULL OR s._cdc_in_pos > t._cdc_position)"


def test_the_merge_of_an_scd1_table() -> None:
    # the text the MERGE has always sent (its clauses now come from action_rules)
    text = merge_statement(
        T, "v", ["a", "b"], ["t.`a` >= 1"], {"a": True, "b": True, "x": True, "g": False}
    )
    assert text == (
        f"MERGE INTO {T} t USING v s ON t.`a` <=> s.`a` AND t.`b` <=> s.`b` AND t.`a` >= 1 "
        f"WHEN MATCHED AND s._cdc_in_kind = 'delete' AND {NEWER} THEN DELETE "
        f"WHEN MATCHED AND s._cdc_in_kind = 'upsert' AND {NEWER} THEN UPDATE SET "
        "`x` = CASE WHEN s._cdc_in_full OR s.`_cdc_in_has_x` THEN s.`x` ELSE t.`x` END, "
        "`g` = CASE WHEN s.`_cdc_in_has_g` THEN s.`g` ELSE t.`g` END, "
        "_cdc_position = s._cdc_in_pos, _cdc_ts = s._cdc_in_ts, _cdc_op = s._cdc_in_op, "
        "_cdc_batch = s._cdc_in_batch "
        "WHEN NOT MATCHED AND s._cdc_in_kind = 'upsert' THEN INSERT "
        "(`a`, `b`, `x`, `g`, _cdc_position, _cdc_ts, _cdc_op, _cdc_batch) VALUES "
        "(s.`a`, s.`b`, s.`x`, s.`g`, s._cdc_in_pos, s._cdc_in_ts, s._cdc_in_op, s._cdc_in_batch)"
    )


def test_the_rewrite_keeps_and_writes_what_the_merge_would() -> None:
    row = "coalesce(t._cdc_t_present, false)"
    applies = f"(s._cdc_in_kind IS NOT NULL AND (NOT {row} OR {NEWER}))"
    existing = ["a", "x", "g", "other", "_cdc_position"]
    on, kept, values = rewrite_sql(existing, ["a"], {"a": True, "x": True, "g": False})
    assert on == "t.`a` <=> s.`a`"
    assert kept == (
        f"({row} AND NOT (s._cdc_in_kind <=> 'delete' AND {NEWER})) "
        f"OR (NOT {row} AND (s._cdc_in_kind <=> 'upsert'))"
    )
    assert values == [
        f"CASE WHEN {row} THEN t.`a` ELSE s.`a` END AS `a`",
        f"CASE WHEN {applies} AND (s._cdc_in_full OR s.`_cdc_in_has_x` OR NOT {row}) "
        "THEN s.`x` ELSE t.`x` END AS `x`",
        f"CASE WHEN {applies} AND s.`_cdc_in_has_g` THEN s.`g` WHEN {row} THEN t.`g` "
        "ELSE s.`g` END AS `g`",
        "t.`other` AS `other`",
        f"CASE WHEN {applies} THEN s._cdc_in_pos ELSE t.`_cdc_position` END AS `_cdc_position`",
    ]


# --------------------------------------------------------------------------- fragments


def test_a_fragment_quotes_every_name_from_a_message() -> None:
    from anycdc.spark.merge_sql import (
        as_text_sql,
        converted_sql,
        has_null_sql,
        image_value_sql,
        key_range_sql,
        named_sql,
    )

    assert image_value_sql("image", ODD, "BIGINT") == (
        "try_cast(element_at(image, 'o\\'dd`c') AS BIGINT)"
    )
    assert named_sql("1", ODD) == "1 AS `o'dd``c`"
    assert as_text_sql(ODD) == "CAST(`o'dd``c` AS STRING)"
    assert converted_sql(ODD, "DECIMAL(12,4)") == "CAST(`o'dd``c` AS DECIMAL(12,4))"
    assert has_null_sql(ODD) == "bool_or(`o'dd``c` IS NULL)"
    assert key_range_sql(ODD, "1", "9") == ["t.`o'dd``c` >= 1", "t.`o'dd``c` <= 9"]


def test_the_staged_source_of_a_merge() -> None:
    from anycdc.spark.merge_sql import inserted_columns_sql, staged_columns_sql

    assert staged_columns_sql({ODD: "INT"}, {ODD: "renamed"}, "_cdc_batch") == [
        "st.kind AS _cdc_in_kind",
        "st.full AS _cdc_in_full",
        "try_cast(element_at(st.row, 'o\\'dd`c') AS INT) AS `renamed`",
        "map_contains_key(st.row, 'o\\'dd`c') AS `_cdc_in_has_renamed`",
        "nullif(st.pos, '') AS _cdc_in_pos",
        "timestamp_millis(st.ts) AS _cdc_in_ts",
        "st.op AS _cdc_in_op",
        "_cdc_batch AS _cdc_in_batch",
    ]
    assert inserted_columns_sql([ODD]) == [
        "`o'dd``c`",
        "_cdc_in_pos AS _cdc_position",
        "_cdc_in_ts AS _cdc_ts",
        "_cdc_in_op AS _cdc_op",
        "_cdc_in_batch AS _cdc_batch",
    ]


def test_the_fold_orders_by_position_then_arrival_and_steps_by_the_rules() -> None:
    from anycdc.spark.action_rules import FOLD_START, FOLD_STEP
    from anycdc.spark.merge_sql import FOLD_STATE_SQL, fold_events_sql

    text = fold_events_sql("ingest_batch")
    assert text.startswith("array_sort(collect_list(struct(struct(coalesce(position, '') AS p, ")
    assert "coalesce(ingest_batch, -1) AS b, source, partition, offset, event_index) AS o" in text
    assert FOLD_STATE_SQL == f"aggregate(evs, {FOLD_START}, {FOLD_STEP})"


def test_the_anchored_fold_takes_the_last_replacing_action_and_the_partials_after_it() -> None:
    from anycdc.spark.action_rules import FOLD_START, FOLD_STEP, REPLACES, replaced_state
    from anycdc.spark.merge_sql import (
        FOLD_ANCHORED_STATE_SQL,
        fold_anchor_sql,
        fold_order_sql,
        fold_partials_sql,
    )

    order = fold_order_sql("b")
    assert fold_anchor_sql("b").endswith(f", CASE WHEN {REPLACES} THEN {order} END)")
    assert fold_anchor_sql("b").startswith(f"max_by(struct({order} AS o, kind, image, ")
    assert fold_partials_sql("b").startswith(f"collect_list(CASE WHEN NOT {REPLACES} THEN ")
    state = FOLD_ANCHORED_STATE_SQL
    assert state.startswith(f"CASE WHEN size(_partials) = 0 THEN {replaced_state('_anchor')} ")
    assert "filter(_partials, p -> _anchor IS NULL OR p.o > _anchor.o)" in state
    assert f"CASE WHEN _anchor IS NULL THEN {FOLD_START} ELSE " in state
    assert state.endswith(f", {FOLD_STEP}) END")


def test_the_round_actions_fragments() -> None:
    from anycdc.spark.merge_sql import (
        bad_reasons_sql,
        history_truncates_sql,
        key_number_sql,
        key_text_sql,
        keyless_image_sql,
        round_rows_sql,
    )

    assert round_rows_sql("op IN ('c')") == (
        "op IN ('c') AND coalesce(split, '') <> 'before' "
        "AND (_s_floor IS NULL OR position IS NULL OR position > _s_floor)"
    )
    assert key_text_sql("before") == (
        "CASE WHEN size(_s_keys) = 1 THEN to_json(array(element_at(before, _s_keys[0]))) "
        "ELSE to_json(transform(_s_keys, k -> element_at(before, k))) END"
    )
    assert history_truncates_sql("op = 't'") == "_s_history AND op = 't'"
    assert keyless_image_sql("after").startswith("CASE WHEN _s_keyless THEN CASE WHEN after IS")
    assert bad_reasons_sql([]) == "CAST(NULL AS STRING)"
    reasons = bad_reasons_sql(["DATE", "INT"])
    assert "WHEN 'DATE' THEN CASE WHEN element_at(image, c.name) IS NOT NULL" in reasons
    assert "WHEN 'INT' THEN" in reasons
    # the lambda guarded by the round's common checks, tested in generated code
    guarded = bad_reasons_sql(["DATE", "INT"], [("id", "INT"), ("at", "DATE")])
    assert guarded == (
        "CASE WHEN _s_rest "
        "OR ((_s_mask & 1) <> 0 AND element_at(image, 'id') IS NOT NULL "
        "AND try_cast(element_at(image, 'id') AS INT) IS NULL) "
        "OR ((_s_mask & 2) <> 0 AND element_at(image, 'at') IS NOT NULL "
        f"AND try_cast(element_at(image, 'at') AS DATE) IS NULL) THEN {reasons} END"
    )
    assert key_number_sql("DECIMAL(38,0)") == (
        "CASE WHEN _s_bound IS NULL THEN CAST(NULL AS DECIMAL(38,0)) "
        "ELSE CAST(element_at(image, _s_bound) AS DECIMAL(38,0)) END"
    )


def test_expired_rows_are_deleted_by_their_age() -> None:
    from anycdc.spark.merge_sql import delete_expired_sql, expiry_sql, optimize_sql

    assert expiry_sql(0.5) == "current_timestamp() - make_interval(0, 0, 0, 0, 0, 0, 1800)"
    assert delete_expired_sql(T, "deleted_at", 2) == (
        f"DELETE FROM {T} WHERE `deleted_at` < current_timestamp() - "
        "make_interval(0, 0, 0, 0, 0, 0, 7200)"
    )
    assert optimize_sql(T) == f"OPTIMIZE {T}"
