"""Every ``--help`` teaches: an example, and each option's default where it has one."""

from __future__ import annotations

import argparse

import pytest

from anycdc.cli import build_parser


def _commands() -> dict[str, argparse.ArgumentParser]:
    """Each subcommand's parser (and each ``dev`` tool's), by its command line."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(prefix: str, parser: argparse.ArgumentParser) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    found[f"{prefix} {name}".strip()] = child
                    walk(f"{prefix} {name}", child)

    walk("", build_parser())
    return found


COMMANDS = _commands()


def test_the_walk_finds_every_command() -> None:
    assert {"decode", "convert", "run", "dead-letters", "dev kafka", "dev jars"} <= set(COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_has_an_example(command: str) -> None:
    parser = COMMANDS[command]
    if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
        return  # a group of tools (dev): each tool's help has its own
    assert "Example" in parser.format_help(), f"anycdc {command} --help shows no example"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_shows_each_default(command: str) -> None:
    parser = COMMANDS[command]
    formatter = parser._get_formatter()
    missing = []
    for action in parser._actions:
        default = action.default
        if action.help in (None, argparse.SUPPRESS) or not action.option_strings:
            continue
        if default in (None, False, True, argparse.SUPPRESS) or default in ([], ""):
            continue
        shown = formatter._get_help_string(action) or ""
        if "default" not in shown.lower():
            missing.append(action.option_strings[0])
    assert missing == [], f"anycdc {command} --help does not show the default of {missing}"
