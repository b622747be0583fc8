"""Typed format options (issue #28): declared once with a type and a default, parsed once
by the base when a format is built; a bad value names the format, the option and why."""

from __future__ import annotations

import ast
import datetime as dt
from pathlib import Path

import pytest

from anycdc.errors import OptionError
from anycdc.formats import format_class, format_ids, get_format
from anycdc.formats.options import (
    KIND_BOOL,
    PRIMARY_KEY,
    TIMEZONE,
    build_options,
    choice,
    flag,
    names,
    optional_text,
    text,
    typed,
)

FORMATS = Path(__file__).resolve().parents[3] / "src" / "anycdc" / "formats"

LEGACY = flag("legacy", "rows swapped")
MODE = choice("mode", "how", ("a", "b"), "a")
NAME = text("name", "a name", "anycdc")
PREFIX = optional_text("prefix", "a prefix")
KEYS = names("keys", "key names")
COUNT = typed("count", "a count", int, kind="int", default="3")
SPECS = (LEGACY, MODE, NAME, PREFIX, KEYS, COUNT)


def test_defaults_are_typed_values() -> None:
    options = build_options("x", SPECS, None)
    assert options.value(LEGACY) is False
    assert options.value(MODE) == "a"
    assert options.value(NAME) == "anycdc"
    assert options.value(PREFIX) is None
    assert options.value(KEYS) is None
    assert options.value(COUNT) == 3


def test_given_values_are_parsed_once() -> None:
    given = {"legacy": "YES", "mode": "b", "name": "srv", "prefix": "BI_", "keys": " id, t ,"}
    options = build_options("x", SPECS, {**given, "count": "7"})
    assert options.value(LEGACY) is True
    assert options.value(MODE) == "b"
    assert options.value(NAME) == "srv"
    assert options.value(PREFIX) == "BI_"
    assert options.value(KEYS) == ("id", "t")
    assert options.value(COUNT) == 7
    assert options.get("legacy") == "YES"  # the text as given: a clone is built from it


def test_empty_text_falls_back_to_the_default() -> None:
    options = build_options("x", SPECS, {"mode": "", "name": "", "prefix": ""})
    assert (options.value(MODE), options.value(NAME), options.value(PREFIX)) == (
        "a",
        "anycdc",
        None,
    )


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"legacy": "perhaps"}, "x: option legacy: expected boolean, got 'perhaps'"),
        ({"mode": "c"}, "x: option mode: expected one of a, b, got 'c'"),
        ({"count": "many"}, "x: option count: invalid literal for int()"),
        ({"other": "1"}, "x: unknown option(s) other; valid options: count, keys, legacy, mode"),
    ],
)
def test_a_bad_value_names_the_format_the_option_and_why(
    given: dict[str, str], message: str
) -> None:
    with pytest.raises(OptionError) as info:
        build_options("x", SPECS, given)
    assert str(info.value).startswith(message)


def test_an_undeclared_option_reads_as_its_default() -> None:
    # a family member without its parent's option (drs-json has no ``binary``)
    assert build_options("x", (), None).value(MODE) == "a"
    assert get_format("drs-json").option(MODE) == "a"


def test_common_options_are_typed() -> None:
    fmt = get_format("canal-json", {"primary_key": "id,tenant", "timezone": "Asia/Shanghai"})
    assert fmt.option(PRIMARY_KEY) == ("id", "tenant") == fmt.options.primary_key
    zone = fmt.option(TIMEZONE)
    assert isinstance(zone, dt.tzinfo) and zone is fmt.options.timezone
    with pytest.raises(OptionError, match=r"^canal-json: option timezone: "):
        get_format("canal-json", {"timezone": "Mars/Olympus"})


@pytest.mark.parametrize(
    ("format_id", "given", "message"),
    [
        ("canal-json", {"binary": "octal"}, "option binary: expected one of auto, latin1"),
        ("dts-canal-json", {"legacy": "perhaps"}, "option legacy: expected boolean"),
        ("shareplex-json", {"full_key_image": "2"}, "option full_key_image: expected boolean"),
        ("dataworks-json", {"version": "2"}, "option version: expected one of 0.0.1, 1.0.0"),
        ("dataworks-json", {"split_update": "x"}, "option split_update: expected boolean"),
        ("ogg-json", {"op_keys": "I,U"}, "option op_keys: expected 4 distinct values"),
        ("ogg-json", {"compressed_updates": "x"}, "option compressed_updates: expected boolean"),
        ("debezium-json", {"schema": "x"}, "option schema: expected boolean"),
        ("debezium-avro", {"registry_timeout": "-1"}, "option registry_timeout: expected seconds"),
    ],
)
def test_each_format_refuses_its_bad_values(
    format_id: str, given: dict[str, str], message: str
) -> None:
    with pytest.raises(OptionError) as info:
        get_format(format_id, given)
    assert str(info.value).startswith(f"{format_id}: {message}")


def test_every_declared_default_parses() -> None:
    for fid in format_ids():
        for spec in format_class(fid).option_specs():
            if spec.name != "schema" or fid != "drs-avro":  # required: no default
                spec.value(None)
            assert spec.kind, f"{fid}: option {spec.name} has no type"


def test_the_cli_shows_type_and_default(capsys: pytest.CaptureFixture[str]) -> None:
    from anycdc.cli.formats import run

    class Args:
        options = True

    assert run(Args()) == 0  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert "type" in out and KIND_BOOL in out and "auto|latin1|base64|hex" in out


def test_the_base_knows_no_single_formats_option() -> None:
    """base.py and options.py name only the common options (issue #28)."""
    vendor_names = {spec.name for fid in format_ids() for spec in format_class(fid).extra_options}
    for module in ("base.py", "options.py"):
        strings = {
            node.value
            for node in ast.walk(ast.parse((FORMATS / module).read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
        # "schema" and "binary" are words of other vocabularies too (a TypeInfo, a logical type)
        assert not strings & vendor_names - {"schema", "binary"}, module
