"""``anycdc simulate``: a source database's change stream in any format, with its ground truth."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

from anycdc.cli.base import (
    EXIT_FAILED,
    Command,
    ProgressLine,
    add_option_argument,
    add_progress_arguments,
    fail,
    parse_format_options,
    progress_wanted,
)
from anycdc.errors import AnyCdcError
from anycdc.formats import format_class, format_ids
from anycdc.scratch import fresh_scratch
from anycdc.simulate import PROFILES

if TYPE_CHECKING:
    from anycdc.simulate import Workload

MESSAGES_DIR: Final = "messages"
MESSAGE_FILES: Final = ("p[0-9][0-9][0-9].jsonl", "p[0-9][0-9][0-9]-*.avro")
"""The names simulate writes in ``DIR/messages`` (an older run's folder holds only these)."""
TRUTH_DIR: Final = "truth"
PRIMARY_KEY_OPTION: Final = "primary_key"
SCHEMA_DIR_OPTION: Final = "schema_dir"
COUNT_MINIMUMS: Final = {"tables": 1, "rows": 0, "events": 0, "partitions": 1}
"""The smallest value of each count flag (a stream needs a table and a partition)."""
PROBABILITIES: Final = ("duplicates", "reorder", "malformed")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", "-f", required=True, choices=format_ids(), metavar="ID")
    add_option_argument(parser)
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        default="rich",
        help="rich (default): every type, composite keys, a table without a key, DDL, "
        "TRUNCATE, transactions, heartbeats; shop: the demo's three plain tables; names: "
        "the shop under odd names; linked: customers, orders, order_lines changed only in "
        "transactions that keep their foreign keys",
    )
    parser.add_argument("--tables", type=int, default=3, help="tables (default 3)")
    parser.add_argument("--rows", type=int, default=20, help="snapshot rows per table")
    parser.add_argument("--events", type=int, default=200, help="incremental row changes")
    parser.add_argument(
        "--keyless-duplicates",
        action="store_true",
        help="let the table without a key hold identical rows (a multiset)",
    )
    parser.add_argument("--seed", type=int, default=0, help="same seed, same stream")
    parser.add_argument("--database", default="shop", help="source database name")
    faults = parser.add_argument_group("faults")
    faults.add_argument(
        "--partitions", type=int, default=1, help="Kafka partitions, keyed by primary key"
    )
    faults.add_argument(
        "--duplicates", type=float, default=0.0, metavar="P", help="re-deliver earlier messages"
    )
    faults.add_argument(
        "--reorder", type=float, default=0.0, metavar="P", help="swap nearby messages"
    )
    faults.add_argument(
        "--malformed", type=float, default=0.0, metavar="P", help="corrupt messages"
    )
    out = parser.add_argument_group("output (a folder, or a Kafka topic)")
    out.add_argument("--out", metavar="DIR", help="write DIR/messages/ and DIR/truth/")
    out.add_argument("--kafka-bootstrap", metavar="HOST:PORT")
    out.add_argument("--topic")
    out.add_argument(
        "--truth", metavar="DIR", help="ground truth folder (default DIR/truth or ./truth)"
    )
    add_progress_arguments(out)


def run(args: argparse.Namespace) -> int:
    from anycdc.simulate import Workload, build_stream, format_profile, write_truth

    problem = _argument_problem(args)
    if problem:
        return fail(problem)
    try:
        profile = format_profile(args.format)
        options = parse_format_options(args.option)
    except (AnyCdcError, ValueError) as exc:
        return fail(str(exc))
    truth = args.truth or (str(Path(args.out) / TRUTH_DIR) if args.out else TRUTH_DIR)
    workload = Workload(
        args.seed, args.rows, args.events, args.database, args.tables,
        profile=args.profile, keyless_duplicates=args.keyless_duplicates,
    )  # fmt: skip
    unknown_key = _unknown_key_columns(workload, options.get(PRIMARY_KEY_OPTION))
    if unknown_key:
        return fail(unknown_key)
    # the folders first: a path that cannot be written fails now, not after the encoding
    folders = [("--out ", Path(args.out), Path(args.out) / MESSAGES_DIR)] if args.out else []
    folders.append(("--truth ", Path(truth), Path(truth)))
    if SCHEMA_DIR_OPTION in options:  # where an Avro encoder writes its schemas
        schemas = Path(options[SCHEMA_DIR_OPTION])
        folders.append((f"--option {SCHEMA_DIR_OPTION}=", schemas, schemas))
    for flag, given, folder in folders:
        made = _make_folder(flag, given, folder)
        if made:
            return fail(made)
    if args.out:  # an earlier run's files would join this stream: the folder is replaced
        try:
            fresh_scratch(Path(args.out) / MESSAGES_DIR, "--out", MESSAGE_FILES, marked=False)
        except AnyCdcError as exc:
            return fail(str(exc))
    progress = ProgressLine("simulate", progress_wanted(args))
    progress.phase(f"simulating {args.events} changes of {args.tables} table(s) as {args.format}")
    try:
        stream = build_stream(
            workload, args.format, partitions=args.partitions, duplicates=args.duplicates,
            reorder=args.reorder, malformed=args.malformed, options=options,
        )  # fmt: skip
    except AnyCdcError as exc:
        return fail(str(exc))
    progress.phase(f"{sum(len(p) for p in stream.partitions)} messages encoded; writing them")
    if args.out:
        try:
            _write_files(
                Path(args.out) / MESSAGES_DIR, stream.partitions, format_class(args.format).binary
            )
        except OSError as exc:
            return fail(
                f"--out {args.out}: cannot write {exc.filename}: {exc.strerror}", EXIT_FAILED
            )
    else:
        from anycdc.devtools.kafka import by_partition, produce

        produce(args.kafka_bootstrap, args.topic, by_partition(stream.partitions))
    try:
        write_truth(stream, truth, args.format)
    except OSError as exc:
        return fail(f"--truth {truth}: cannot write {exc.filename}: {exc.strerror}", EXIT_FAILED)
    total = sum(len(p) for p in stream.partitions)
    progress.phase("written")
    if not args.quiet:
        print(
            f"{total} messages ({stream.duplicates} duplicates, {stream.reordered} swaps, "
            f"{stream.expected_dead_letters} malformed) in {len(stream.partitions)} "
            f"partition(s); ground truth in {truth}",
            file=sys.stderr,
        )
    for note in profile.notes:
        print(f"{args.format}: {note}", file=sys.stderr)
    if not profile.key_names:
        # without key names in the messages the pipeline needs them from the user
        keys = " ".join(
            f"--primary-key {t.qualified}={','.join(t.key)}" for t in stream.tables if t.key
        )
        print(f"{args.format} messages name no key columns: run with {keys}", file=sys.stderr)
    return 0


def _argument_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the flags, before any work: the output, counts, probabilities."""
    if bool(args.out) == bool(args.kafka_bootstrap):
        return "give exactly one of --out DIR or --kafka-bootstrap HOST:PORT --topic T"
    if args.kafka_bootstrap and not args.topic:
        return "--kafka-bootstrap needs --topic"
    for name, minimum in COUNT_MINIMUMS.items():
        value = getattr(args, name)
        if value < minimum:
            return f"--{name} must be at least {minimum}, got {value}"
    for name in PROBABILITIES:
        value = getattr(args, name)
        if not 0.0 <= value <= 1.0:  # also refuses nan
            return f"--{name} is a probability: between 0 and 1, got {value:g}"
    return None


def _make_folder(flag: str, given: Path, folder: Path) -> str | None:
    """Create ``folder`` (``given``, the flag's value, or a folder inside it), or say why
    it cannot be."""
    for path in {given, folder}:
        if path.exists() and not path.is_dir():
            return f"{flag}{given}: {path} is a file, not a folder"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"{flag}{given}: cannot create the folder {folder}: {exc.strerror or exc}"
    return None


def _unknown_key_columns(workload: Workload, primary_key: str | None) -> str | None:
    """An ``-o primary_key`` naming a column no simulated table has: a typo, found now."""
    if primary_key is None:
        return None
    columns = {name for table in workload.source_tables for name in table.columns}
    wanted = [name.strip() for name in primary_key.split(",")]
    unknown = [name for name in wanted if name not in columns]
    if not unknown:
        return None
    return (
        f"--option primary_key={primary_key}: no simulated table has a column "
        f"{', '.join(map(repr, unknown))} (columns: {', '.join(sorted(columns))})"
    )


def _write_files(
    folder: Path, partitions: list[list[tuple[bytes | None, bytes]]], binary: bool
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for index, part in enumerate(partitions):
        if binary:
            for n, (_, message) in enumerate(part):
                (folder / f"p{index:03d}-{n:09d}.avro").write_bytes(message)
        else:
            lines = b"".join(message.replace(b"\n", b" ") + b"\n" for _, message in part)
            (folder / f"p{index:03d}.jsonl").write_bytes(lines)


COMMAND = Command(
    name="simulate",
    help="write a simulated change stream in any format, with its ground truth",
    description="Simulate a source database and write its change stream as FORMAT messages,\n"
    "keyed by primary key over --partitions, with optional faults; the expected final\n"
    "tables (as the pipeline stores them for FORMAT) go to the truth folder for\n"
    "`anycdc verify`.\n\n"
    "Profile rich (default): all_types (every type the formats carry, NULLs, hot keys),\n"
    "order_lines (composite key; ADD COLUMN and INT->BIGINT / DECIMAL / VARCHAR widening\n"
    "mid-stream), audit_log (no primary key; ADD COLUMN, TRUNCATE); snapshot, inserts,\n"
    "updates, deletes, key changes, transactions with markers, heartbeats. Each format\n"
    "gets what it can carry (e.g. no markers in DRS, text values in oms-json);\n"
    "drs-mongo-json gets a MongoDB collection. Profile shop: the demo's shop tables.\n"
    "Profile linked: customers, orders and order_lines (order_id -> orders.id), after the\n"
    "snapshot only multi-table transactions (BEGIN/COMMIT markers, one tx on every row):\n"
    "an order placed with 1-3 lines, an order and one of its lines amended, an order\n"
    "cancelled (its lines deleted first), a customer updated; no line is without its\n"
    "order after any COMMIT (formats without markers get the rows only).\n"
    "The same --seed gives the same source history in every format.\n\n"
    "Examples:\n"
    "  anycdc simulate --format canal-json --events 1000 --out sim/\n"
    "  anycdc simulate --format oms-json --profile shop --seed 7 --out sim-shop/\n"
    "  anycdc simulate --format debezium-json --kafka-bootstrap 127.0.0.1:19092 --topic t \\\n"
    "      --partitions 3 --duplicates 0.05 --reorder 0.05 --malformed 0.01 --truth sim/truth",
    add_arguments=add_arguments,
    run=run,
)
