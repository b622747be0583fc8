"""``anycdc simulate``: a source database's change stream in any format, with its ground truth."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from anycdc.cli.base import Command, add_option_argument, fail, parse_key_values
from anycdc.errors import AnyCdcError
from anycdc.formats import format_class, format_ids
from anycdc.simulate import PROFILES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", "-f", required=True, choices=format_ids(), metavar="ID")
    add_option_argument(parser)
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        default="rich",
        help="rich (default): every type, composite keys, a table without a key, DDL, "
        "TRUNCATE, transactions, heartbeats; shop: the demo's three plain tables",
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


def run(args: argparse.Namespace) -> int:
    from anycdc.simulate import Workload, build_stream, format_profile, write_truth

    if bool(args.out) == bool(args.kafka_bootstrap):
        return fail("give exactly one of --out DIR or --kafka-bootstrap HOST:PORT --topic T")
    if args.kafka_bootstrap and not args.topic:
        return fail("--kafka-bootstrap needs --topic")
    try:
        profile = format_profile(args.format)
    except ValueError as exc:
        return fail(str(exc))
    workload = Workload(
        args.seed, args.rows, args.events, args.database, args.tables,
        profile=args.profile, keyless_duplicates=args.keyless_duplicates,
    )  # fmt: skip
    try:
        stream = build_stream(
            workload, args.format, partitions=args.partitions, duplicates=args.duplicates,
            reorder=args.reorder, malformed=args.malformed, options=parse_key_values(args.option),
        )  # fmt: skip
    except AnyCdcError as exc:
        return fail(str(exc))
    if args.out:
        _write_files(
            Path(args.out) / "messages", stream.partitions, format_class(args.format).binary
        )
    else:
        from anycdc.devtools.kafka import by_partition, produce

        produce(args.kafka_bootstrap, args.topic, by_partition(stream.partitions))
    truth = args.truth or (str(Path(args.out) / "truth") if args.out else "truth")
    write_truth(stream, truth, args.format)
    total = sum(len(p) for p in stream.partitions)
    print(
        f"{total} messages ({stream.duplicates} duplicates, {stream.reordered} swaps, "
        f"{stream.expected_dead_letters} malformed) in {len(stream.partitions)} partition(s); "
        f"ground truth in {truth}",
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
    "The same --seed gives the same source history in every format.\n\n"
    "Examples:\n"
    "  anycdc simulate --format canal-json --events 1000 --out sim/\n"
    "  anycdc simulate --format oms-json --profile shop --seed 7 --out sim-shop/\n"
    "  anycdc simulate --format debezium-json --kafka-bootstrap 127.0.0.1:19092 --topic t \\\n"
    "      --partitions 3 --duplicates 0.05 --reorder 0.05 --malformed 0.01 --truth sim/truth",
    add_arguments=add_arguments,
    run=run,
)
