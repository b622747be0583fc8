"""``anycdc decode``: messages in, canonical JSON Lines (or lines for people) out.

Input: files, folders or stdin (:mod:`anycdc.source.files`: keys beside the files, a key
file, kcat ``-J`` dumps, ``kafka-console-consumer`` key/value lines, gzip), or a topic read
straight away (:mod:`anycdc.source.kafka_topic`). Output is written as each message is
decoded, so a live pipe shows events as they come; ``--pretty`` prints each event as a
person reads it, ``--json-safe`` writes numbers jq would round as strings.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, Final, TextIO

from anycdc.cli.base import (
    PROGRESS_EVERY_S,
    Command,
    NamedFormatMiss,
    ProgressLine,
    add_option_argument,
    add_progress_arguments,
    fail,
    parse_key_values,
    progress_wanted,
)
from anycdc.decoding import AUTO, MessageDecoder
from anycdc.errors import AnyCdcError, DecodeError
from anycdc.event import ChangeEvent, dumps, event_to_dict, event_to_json
from anycdc.formats import format_ids
from anycdc.pairing import SplitUpdatePairer
from anycdc.source import InputError, InputShape, RawMessage, iter_file_messages, json_lines_hint

MAX_SAFE_INTEGER: Final = 2**53 - 1
"""The largest integer a JSON reader that uses doubles (jq, JavaScript) keeps exact."""
VALUE_LIMIT: Final = 120
"""``--pretty`` cuts a value longer than this (characters) and marks the cut."""
CUT_MARK: Final = "…"
NULL_TEXT: Final = "null"
INDENT: Final = "    "
_PLAIN_TEXT_EXCLUDED: Final = frozenset(" \t\n\r\"'")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files",
        nargs="*",
        default=["-"],
        metavar="FILE",
        help="files or folders (.jsonl/.ndjson/.txt lines, .json/.avro one message, "
        "any of them .gz); - = stdin (default)",
    )
    parser.add_argument(
        "--format",
        "-f",
        default=AUTO,
        choices=[AUTO, *format_ids()],
        metavar="ID",
        help="format id, or auto (default) to detect each message",
    )
    add_option_argument(parser)
    keys = parser.add_argument_group("message keys and Kafka dumps")
    keys.add_argument(
        "--key-file",
        metavar="FILE",
        help="one key per line, the n-th line the key of the n-th message (null = no key); "
        "default: none, except NAME.key.json/.key.avro beside NAME.*",
    )
    keys.add_argument(
        "--input-shape",
        choices=[s.value for s in InputShape],
        default=InputShape.AUTO.value,
        help="how lines hold messages: lines (one value per line), kcat-json (kcat -J), "
        "key-tab (KEY<TAB>VALUE, kafka-console-consumer --property print.key=true; split "
        "at the first tab); default: auto = kcat-json when the first line is a kcat "
        "object, else lines, and a .json file is one message (named, the shape reads "
        "its lines too)",
    )
    kafka = parser.add_argument_group("reading a Kafka topic (confluent-kafka)")
    kafka.add_argument("--kafka-bootstrap", metavar="HOST:PORT", help="broker to read from")
    kafka.add_argument("--topic", metavar="TOPIC", help="topic to read (with --kafka-bootstrap)")
    kafka.add_argument(
        "--from-beginning",
        action="store_true",
        help="start at each partition's first message (default: new messages only)",
    )
    kafka.add_argument(
        "--until-end",
        action="store_true",
        help="stop once every partition has been read to its end (kcat -e)",
    )
    kafka.add_argument(
        "--kafka-timeout",
        type=float,
        metavar="SECONDS",
        help="how long the broker has to answer (default: 10)",
    )
    kafka.add_argument(
        "--kafka-property",
        "-X",
        action="append",
        default=[],
        metavar="K=V",
        help="librdkafka property, repeatable (e.g. security.protocol=SASL_SSL)",
    )
    parser.add_argument(
        "--max-messages",
        type=int,
        metavar="N",
        help="stop after N messages, of files or of a topic (default: no limit)",
    )
    out = parser.add_argument_group("output")
    out.add_argument(
        "--pretty",
        action="store_true",
        help="print each event for people (values as text, times as UTC dates) "
        "instead of JSON Lines",
    )
    out.add_argument(
        "--json-safe",
        action="store_true",
        help=f"write integers beyond ±{MAX_SAFE_INTEGER} and decimals as JSON strings "
        "(for jq and JavaScript, which round them), and zoned times as ISO 8601 with their "
        "offset, the zone ids in the event's `zones` field",
    )
    out.add_argument(
        "--no-pair",
        action="store_true",
        help="do not join split update halves (UPDATE_BEFOR/AFTER)",
    )
    out.add_argument("--strict", action="store_true", help="exit 1 if any message fails to decode")
    add_progress_arguments(out)


def run(args: argparse.Namespace) -> int:
    try:
        decoder = MessageDecoder(args.format, parse_key_values(args.option))
        messages = _messages(args)
        write = _writer(args, sys.stdout)
    except AnyCdcError as exc:
        return fail(str(exc))
    pairer = None if args.no_pair else SplitUpdatePairer()
    tally = Tally(progress_wanted(args))
    miss = NamedFormatMiss(args.format, "--format")
    live = args.kafka_bootstrap is not None or "-" in args.files
    try:
        for message in messages:
            tally.message()
            try:
                _, events = decoder.decode(message.value, message.key)
            except DecodeError as exc:
                tally.error(exc.format_id)
                print(f"{message.coordinates}: {exc}", file=sys.stderr)
                miss.failed(message.value)
                hint = json_lines_hint(message)
                if hint:
                    print(hint, file=sys.stderr)
                continue
            tally.events += write([p for e in events for p in pairer.push(e)] if pairer else events)
            if live:
                sys.stdout.flush()
        if pairer:
            tally.events += write(pairer.flush())
    except AnyCdcError as exc:
        sys.stdout.flush()
        return fail(str(exc))
    sys.stdout.flush()
    if tally.messages == 0:
        print(f"anycdc: no messages read from {_described(args)}", file=sys.stderr)
    hint = miss.hint(decoded=tally.messages - tally.bad)
    if hint:
        print(f"anycdc: {hint}", file=sys.stderr)
    if not args.quiet:
        print(tally.summary(), file=sys.stderr)
    return 1 if args.strict and tally.bad else 0


def _messages(args: argparse.Namespace) -> Iterator[RawMessage]:
    """The input the arguments name: a topic, or files (refused: a mix of both)."""
    kafka_only = {
        "--topic": args.topic,
        "--from-beginning": args.from_beginning or None,
        "--until-end": args.until_end or None,
        "--kafka-timeout": args.kafka_timeout,
        "--kafka-property": args.kafka_property or None,
    }
    if args.max_messages is not None and args.max_messages < 1:
        raise InputError(f"--max-messages must be at least 1, got {args.max_messages}")
    if args.kafka_bootstrap is None:
        given = [flag for flag, value in kafka_only.items() if value is not None]
        if given:
            raise InputError(f"{', '.join(given)} need --kafka-bootstrap HOST:PORT")
        messages = iter_file_messages(
            args.files, shape=InputShape(args.input_shape), key_file=args.key_file
        )
        return itertools.islice(messages, args.max_messages)
    if not args.topic:
        raise InputError("--kafka-bootstrap needs --topic TOPIC")
    if args.files != ["-"] or args.key_file:
        raise InputError("read either a topic (--kafka-bootstrap) or files, not both")
    from anycdc.source.kafka_topic import CONNECT_TIMEOUT_S, TopicRead, iter_topic_messages

    return iter_topic_messages(
        TopicRead(
            bootstrap=args.kafka_bootstrap,
            topic=args.topic,
            from_beginning=args.from_beginning,
            max_messages=args.max_messages,
            until_end=args.until_end,
            timeout_s=CONNECT_TIMEOUT_S if args.kafka_timeout is None else args.kafka_timeout,
            properties=parse_key_values(args.kafka_property, "--kafka-property"),
        )
    )


def _described(args: argparse.Namespace) -> str:
    if args.kafka_bootstrap is not None:
        return f"topic {args.topic!r} on {args.kafka_bootstrap}"
    return ", ".join("stdin" if f == "-" else f for f in args.files)


class Tally:
    """Counts, the summary line and (when wanted) a progress line every few seconds."""

    def __init__(self, progress: bool, every_s: float = PROGRESS_EVERY_S) -> None:
        self.messages = 0
        self.events = 0
        self.errors: Counter[str] = Counter()
        self._line = ProgressLine("decode", progress, every_s)

    @property
    def bad(self) -> int:
        return sum(self.errors.values())

    def message(self) -> None:
        self.messages += 1
        self._line.step(self.messages, self.summary)

    def error(self, format_id: str) -> None:
        self.errors[format_id] += 1

    def summary(self) -> str:
        return f"{self.messages} messages, {self.events} events, {self.bad} errors"


# --------------------------------------------------------------------------- output


def _writer(args: argparse.Namespace, out: TextIO) -> Callable[[list[ChangeEvent]], int]:
    """``write(events) -> how many``: JSON Lines, jq-safe JSON Lines, or lines for people."""
    if args.pretty:
        if args.json_safe:
            raise InputError("--json-safe is for JSON Lines; --pretty prints text")
        render: Callable[[ChangeEvent], str] = pretty_event
    elif args.json_safe:
        render = json_safe_event
    else:
        render = event_to_json

    def write(events: list[ChangeEvent]) -> int:
        for event in events:
            out.write(render(event) + "\n")
        return len(events)

    return write


ZONED_TEXT: Final = re.compile(r"(?P<instant>.+[+-]\d\d:\d\d(?::\d\d)?)\[(?P<zone>[^\]]+)\]")
"""A zoned timestamp's canonical text: the instant with its offset, then ``[zone id]``."""
ZONES_FIELD: Final = "zones"
"""``--json-safe``: image column (``after.dt``) -> the zone id its timestamp was in."""


def json_safe_event(event: ChangeEvent) -> str:
    """Canonical JSON with every number a double cannot hold exactly written as a string,
    and zoned timestamps as ISO 8601 with their offset (what jq and
    ``datetime.fromisoformat`` read), the zone id in the event's ``zones`` field.

    >>> import datetime as dt, json
    >>> from zoneinfo import ZoneInfo
    >>> from anycdc.event import Op
    >>> e = ChangeEvent(op=Op.INSERT, format="x", table="t", after={"id": 18446744073709551615, "n": 7,
    ...     "at": dt.datetime(2020, 11, 25, 0, 1, 2, tzinfo=ZoneInfo("Asia/Shanghai"))})
    >>> out = json.loads(json_safe_event(e))
    >>> out["after"], out["zones"]
    ({'id': '18446744073709551615', 'n': 7, 'at': '2020-11-25T00:01:02+08:00'}, {'after.at': 'Asia/Shanghai'})
    """
    facts = _json_safe(event_to_dict(event))
    zones: dict[str, str] = {}
    for image in ("before", "after"):
        values = facts.get(image)
        if not isinstance(values, dict):
            continue
        for name, value in values.items():
            zoned = ZONED_TEXT.fullmatch(value) if isinstance(value, str) else None
            if zoned:
                values[name] = zoned["instant"]
                zones[f"{image}.{name}"] = zoned["zone"]
    if zones:
        facts[ZONES_FIELD] = zones
    return dumps(facts)


def _json_safe(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return str(value) if abs(value) > MAX_SAFE_INTEGER else value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def pretty_event(event: ChangeEvent) -> str:
    """An event as lines for people: a header, then the images (or the DDL), indented.

    >>> from anycdc.event import Op
    >>> print(pretty_event(ChangeEvent(op=Op.UPDATE, format="canal-json", database="shop",
    ...     table="orders", key=("id",), before={"id": 1, "paid": False},
    ...     after={"id": 1, "paid": True, "note": "two words", "raw": b"\\x00"}, ts_ms=0)))
    update shop.orders key=id at 1970-01-01 00:00:00.000 UTC (canal-json)
        before: id=1 paid=false
        after:  id=1 paid=true note="two words" raw=AA==
    """
    head = [event.op.value, event.qualified_table or "-"]
    if event.key:
        head.append("key=" + ",".join(event.key))
    if event.position is not None:
        head.append("position=" + ".".join(map(str, event.position.parts)))
    if event.ts_ms is not None:
        head.append("at " + _utc_text(event.ts_ms))
    if event.tx:
        head.append(f"tx={event.tx}")
    if event.partial:
        head.append("partial=" + ",".join(event.partial))
    lines = [" ".join(head) + f" ({event.format})"]
    if event.ddl:
        lines.append(f"{INDENT}ddl: {event.ddl}")
    if event.before is not None:
        lines.append(f"{INDENT}before: {_image_text(event.before)}")
    if event.after is not None:
        lines.append(f"{INDENT}after:  {_image_text(event.after)}")
    return "\n".join(lines)


def _utc_text(ts_ms: int) -> str:
    try:
        moment = dt.datetime.fromtimestamp(ts_ms / 1000, dt.UTC)
    except (OverflowError, OSError, ValueError):
        return f"ts_ms={ts_ms}"
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d} UTC"


def _image_text(image: Mapping[str, Any]) -> str:
    from anycdc.changelog import value_text

    return " ".join(f"{name}={_shown(value_text(value))}" for name, value in image.items())


def _shown(text: str | None) -> str:
    """A value's canonical text, quoted where a reader could misread it, cut when long."""
    if text is None:
        return NULL_TEXT
    if len(text) > VALUE_LIMIT:
        text = text[:VALUE_LIMIT] + CUT_MARK
    if not text or text == NULL_TEXT or _PLAIN_TEXT_EXCLUDED.intersection(text):
        return dumps(text)
    return text


COMMAND = Command(
    name="decode",
    help="decode messages into canonical JSON Lines",
    description="Decode CDC messages into canonical change events, one JSON object per line on\n"
    "stdout (nothing else goes to stdout), written as each message is decoded. Input:\n"
    "JSON Lines (a line `null` is a Kafka tombstone), .json files of one message, or\n"
    ".avro files of one binary message; .gz files and gzip on stdin are unpacked; a\n"
    "folder is read file by file in name order. Kafka keys: NAME.key.json/.key.avro\n"
    "beside NAME.*, --key-file, kcat -J dumps (detected) or console-consumer KEY<TAB>VALUE\n"
    "lines (--input-shape key-tab); or read a topic itself with --kafka-bootstrap.\n"
    "Bad messages are reported on stderr as `FILE:LINE: format: $.path: reason`\n"
    "(`topic[partition]@offset` when known) and counted; the rest goes on (use --strict\n"
    "to fail). A row change that names no table is such an error, as in the pipeline.\n\n"
    "Examples:\n"
    "  anycdc decode dump.jsonl > events.jsonl\n"
    "  anycdc decode --format dts-canal-json -o legacy=true old_task.jsonl\n"
    "  kcat -C -b localhost:9092 -t orders -J -e | anycdc decode --pretty\n"
    "  kafka-console-consumer --bootstrap-server localhost:9092 --topic orders \\\n"
    "      --property print.key=true | anycdc decode --input-shape key-tab --pretty\n"
    "  anycdc decode --kafka-bootstrap localhost:9092 --topic orders --from-beginning \\\n"
    "      --max-messages 10 --pretty\n"
    "  anycdc decode --json-safe dump.jsonl.gz | jq .after.id\n"
    "  anycdc decode values.jsonl --key-file keys.txt",
    add_arguments=add_arguments,
    run=run,
)
