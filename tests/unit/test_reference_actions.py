"""The SQL text of the per-table reference actions (tests/pipeline/reference_actions.py),
which the differential test of a round's actions compares with: no Spark."""

from __future__ import annotations

from tests.pipeline.reference_actions import renamed_image, types_map_sql


def test_the_types_map_is_a_literal_map_or_an_empty_typed_one() -> None:
    assert types_map_sql([("id", "INT"), ("o'dd", "DATE")]) == (
        "map('id', 'INT', 'o\\'dd', 'DATE')"
    )
    assert types_map_sql([]) == "CAST(map() AS MAP<STRING, STRING>)"


def test_a_rename_applies_to_images_from_before_its_position_in_order() -> None:
    one = renamed_image("after", [("a", "b", "7")])
    assert one == (
        "CASE WHEN position < '7' AND map_contains_key(after, 'a') THEN "
        "map_concat(map_filter(after, (k, v) -> k <> 'a'), map('b', element_at(after, 'a'))) "
        "ELSE after END"
    )
    twice = renamed_image("after", [("a", "b", "7"), ("b", "c", "9")])
    assert twice.startswith(
        "CASE WHEN position < '9' AND map_contains_key(CASE WHEN position < '7'"
    )
    assert renamed_image("before", []) == "before"
