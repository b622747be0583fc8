"""``anycdc detect FILE...``: which formats a dump of messages holds."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from anycdc.cli.base import EXIT_FAILED, Command, fail
from anycdc.console import print_table
from anycdc.formats import detect
from anycdc.source import iter_file_messages, list_source_files


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="files or folders of messages")
    parser.add_argument(
        "--show-unknown", action="store_true", help="print the coordinates of unrecognised messages"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per file, then one for the total (file: null), instead of a table",
    )


def run(args: argparse.Namespace) -> int:
    problem = _input_problem(args.files)
    if problem:
        return fail(problem)
    per_file: list[tuple[str | None, Counter[str]]] = []
    unknown_at: list[str] = []
    for path in list_source_files(args.files):
        try:
            per_file.append((str(path), _count(path, unknown_at)))
        except OSError as exc:  # unreadable, not gzip though named .gz, a read error
            return fail(f"{path}: cannot read: {exc.strerror or exc}", EXIT_FAILED)
    if len(per_file) > 1:
        per_file.append((None, sum((counts for _, counts in per_file), Counter())))
    if args.json:
        for name, counts in per_file:
            print(json.dumps(_facts(name, counts)))
    else:
        rows = [
            [
                "(total)" if name is None else name,
                sum(counts.values()),
                ", ".join(f"{fid} {n}" for fid, n in counts.most_common()),
                counts.get("unknown", 0),
            ]
            for name, counts in per_file
        ]
        print_table("Detected formats", ["file", "messages", "formats", "unknown"], rows)
    if args.show_unknown:
        for where in unknown_at:
            print(f"unknown: {where}")
    return 0


def _facts(name: str | None, counts: Counter[str]) -> dict[str, object]:
    """One file's counts (``name`` None: the total of every file) as JSON-ready facts.

    >>> _facts("a.jsonl", Counter({"canal-json": 2, "unknown": 1}))
    {'file': 'a.jsonl', 'messages': 3, 'formats': {'canal-json': 2, 'unknown': 1}, 'unknown': 1}
    """
    return {
        "file": name,
        "messages": sum(counts.values()),
        "formats": dict(counts.most_common()),
        "unknown": counts.get("unknown", 0),
    }


def _count(path: Path, unknown_at: list[str]) -> Counter[str]:
    """The messages of one file by detected format; where the unknown ones are."""
    counts: Counter[str] = Counter()
    for message in iter_file_messages([path]):
        if message.value is None:
            counts["(tombstone)"] += 1
            continue
        found = detect(message.value).format
        counts[found] += 1
        if found == "unknown":
            unknown_at.append(message.coordinates)
    return counts


def _input_problem(files: list[str]) -> str | None:
    """A FILE that does not exist, or a folder without a message file: said before any
    file is read (the others would be counted in vain)."""
    for name in files:
        path = Path(name)
        if not path.exists():
            return f"{name}: no such file or folder"
        if path.is_dir() and not list_source_files([path]):
            return f"{name}: no message file in the folder (.jsonl, .ndjson, .txt, .json, .avro)"
    return None


COMMAND = Command(
    name="detect",
    help="count the messages of each format in files",
    description="Detect the format of every message (one per line in .jsonl/.txt files, one per\n"
    ".json or .avro file) from its shape alone, and count them per file. A message\n"
    "that no format recognises with confidence is counted as 'unknown', never guessed.\n\n"
    "Examples:\n  anycdc detect dump.jsonl captures/\n"
    "  anycdc detect --json captures/ | jq -c 'select(.unknown > 0)'\n"
    "  anycdc detect --show-unknown dump.jsonl",
    add_arguments=add_arguments,
    run=run,
)
