"""``make bench-decode``: per-format decode throughput vs. the bare JSON parse, in one run.

For each format: N realistic messages (an ``orders`` row of ~10 mixed-type
columns, encoded by the format's own encoder), then, on one core, the rate
of (a) the bare parse of the same bytes with orjson and msgspec (fastavro for
Avro), (b) anycdc's decode + typing and (c) the pipeline's decode stage (decode
+ the changelog row a Spark worker hands to the JVM), measured side by side
(chunk by chunk, best of 3 per chunk: see :func:`rates`). Then a streamed memory check: RSS
while decoding ``--memory-events`` messages one at a time must stay flat.

Run: ``python -m anycdc.bench.decode [--events 20000] [--memory-events 10000000]
[--formats canal-json,oms-json] [--format auto] [--profile canal-json]`` (``--profile``:
cProfile of the format's decode over the same messages instead of the tables;
``--format auto``: the decode column detects every message's format first, as a
pipeline with ``format: auto`` does).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import resource
import sys
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

from anycdc.errors import EncodeError
from anycdc.event import ChangeEvent, Column, Op, Position
from anycdc.formats import format_class, format_ids, get_format
from anycdc.spark.decode import ChangelogRows
from anycdc.values import LogicalType

RICH_COLUMNS = {
    "id": Column(LogicalType("int64"), "bigint"),
    "customer_id": Column(LogicalType("int32"), "int"),
    "sku": Column(LogicalType("string"), "varchar(32)"),
    "qty": Column(LogicalType("int16"), "smallint"),
    "price": Column(LogicalType("decimal", 12, 2), "decimal(12,2)"),
    "total": Column(LogicalType("decimal", 14, 2), "decimal(14,2)"),
    "status": Column(LogicalType("string"), "varchar(16)"),
    "created_at": Column(LogicalType("timestamp"), "datetime"),
    "paid": Column(LogicalType("boolean"), "tinyint(1)"),
    "note": Column(LogicalType("string"), "text"),
}
SKIP = {"drs-avro", "canonical-json"}


def order_event(format_id: str, n: int) -> ChangeEvent:
    price = Decimal(n % 10_000).scaleb(-2) + Decimal("0.99")
    row = {
        "id": 1_000_000 + n,
        "customer_id": n % 5000,
        "sku": f"SKU-{n % 977:05d}",
        "qty": n % 7 + 1,
        "price": price,
        "total": price * (n % 7 + 1),
        "status": ("new", "paid", "shipped")[n % 3],
        "created_at": dt.datetime(2024, 1, 1) + dt.timedelta(seconds=n),
        "paid": n % 2 == 0,
        "note": None if n % 4 else "gift wrap, please — 包装",
    }
    update = n % 3 == 1
    return ChangeEvent(
        op=Op.UPDATE if update else Op.INSERT,
        format=format_id,
        database="shop",
        table="orders",
        key=("id",),
        before={**row, "status": "new"} if update else None,
        after=row,
        columns=RICH_COLUMNS,
        ts_ms=1_700_000_000_000 + n,
        position=Position((n + 1,)),
    )


def messages(format_id: str, count: int) -> list[bytes]:
    fmt = get_format(format_id)
    out: list[bytes] = []
    for n in range(count):
        try:
            out.extend(fmt.encode(order_event(format_id, n)))
        except EncodeError:
            continue
    return out


def rates(
    funcs: dict[str, Callable[[bytes], Any]],
    data: list[bytes],
    repeat: int = 3,
    chunk: int = 200,
    streams: dict[str, Callable[[list[bytes]], Any]] | None = None,
) -> dict[str, float]:
    """Messages per second of each function over ``data``, measured side by side.

    The messages are taken in chunks; each chunk is run ``repeat`` times by every
    function in turn and its best time kept: on a machine shared with other work a
    chunk is short enough to run undisturbed at least once, while one long pass
    per function would let the slower one (the decoder) absorb more interruptions
    and make the ratios unfair. ``funcs`` take one message at a time, ``streams`` a
    chunk at a time (as a worker is fed a partition).
    """
    per_chunk: dict[str, Callable[[list[bytes]], Any]] = {
        **{name: _each(func) for name, func in funcs.items()},
        **(streams or {}),
    }
    totals = dict.fromkeys(per_chunk, 0.0)
    for start in range(0, len(data), chunk):
        part = data[start : start + chunk]
        best = dict.fromkeys(per_chunk, float("inf"))
        for _ in range(repeat):
            for name, run in per_chunk.items():
                begin = time.perf_counter()
                run(part)
                best[name] = min(best[name], time.perf_counter() - begin)
        for name in per_chunk:
            totals[name] += best[name]
    return {name: len(data) / total if total else 0.0 for name, total in totals.items()}


def _each(func: Callable[[bytes], Any]) -> Callable[[list[bytes]], None]:
    def run(part: list[bytes]) -> None:
        for item in part:
            func(item)

    return run


def stage_decoder(format_id: str) -> Callable[[list[bytes]], None]:
    """What a pipeline worker does with a stream of messages: decode, then render the
    changelog rows (value texts, column structs) that Spark appends and merges from. The
    messages go in as one stream, as a worker's partition does (the stage takes runs of
    them through each step: :data:`anycdc.spark.decode.MESSAGE_RUN`)."""
    stage = ChangelogRows(format_id, {})

    def run(part: list[bytes]) -> None:
        records = (("bench", 0, offset, None, message, None) for offset, message in enumerate(part))
        for _ in stage.values(records):
            pass

    return run


def bare_parsers(format_id: str) -> dict[str, Callable[[bytes], Any]]:
    if format_class(format_id).binary:
        import io

        import fastavro

        fmt = get_format(format_id)
        schema_of = getattr(fmt, "avro_schema_of", None)
        if schema_of is not None:  # Confluent-framed: the schema named by the message's id
            from anycdc.formats.schema_source import FRAME_SIZE

            return {
                "fastavro": lambda b: fastavro.schemaless_reader(
                    io.BytesIO(b[FRAME_SIZE:]), schema_of(b)
                )
            }
        schema = getattr(fmt, "avro_schema", None)
        if schema is None:
            return {}
        return {"fastavro": lambda b: fastavro.schemaless_reader(io.BytesIO(b), schema)}
    import msgspec
    import orjson

    decoder = msgspec.json.Decoder()
    return {"orjson": orjson.loads, "msgspec": decoder.decode}


def auto_decoder() -> Callable[[bytes], Any]:
    """What ``format: auto`` does per message: detect, then decode (:class:`MessageDecoder`)."""
    from anycdc.decoding import AUTO, MessageDecoder

    return MessageDecoder(AUTO).decode


def bench_formats(count: int, only: list[str] | None = None, auto: bool = False) -> list[list[str]]:
    rows = []
    for format_id in only or format_ids():
        if format_id in SKIP or not format_class(format_id).can_encode:
            continue
        data = messages(format_id, count)
        if not data:
            rows.append([format_id, "0", "-", "-", "-", "no encodable messages"])
            continue
        fmt = get_format(format_id)
        events = sum(len(fmt.decode(m)) for m in data)
        gc.collect()
        decode: Callable[[bytes], Any] = auto_decoder() if auto else fmt.decode
        measured = rates(
            {"decode": decode, **bare_parsers(format_id)},
            data,
            streams={"stage": stage_decoder(format_id)},
        )
        decode_rate = measured.pop("decode") * events / len(data)
        stage_rate = measured.pop("stage") * events / len(data)
        bare = measured
        fastest = max(bare.values()) if bare else 0.0
        rows.append(
            [
                format_id,
                f"{len(data):,}",
                " / ".join(f"{n} {r:,.0f}" for n, r in bare.items()),
                f"{decode_rate:,.0f}",
                f"{decode_rate / fastest:.0%}" if fastest else "-",
                f"{stage_rate:,.0f}",
                f"{sum(map(len, data)) / len(data):.0f} B/msg",
            ]
        )
        print(
            f"  {format_id}: {decode_rate:,.0f} events/s, "
            f"{fmt.fast_fallbacks:,} fast-path fallbacks",
            file=sys.stderr,
        )
    return rows


def profile(format_id: str, count: int, top: int = 25) -> str:
    """cProfile statistics of decoding the benchmark's messages of a format (after a warm-up
    pass that fills the format's caches), by internal time."""
    import cProfile
    import io
    import pstats

    data = messages(format_id, count)
    fmt = get_format(format_id)
    for message in data:
        fmt.decode(message)
    profiler = cProfile.Profile()
    profiler.enable()
    for message in data:
        fmt.decode(message)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def stream(format_id: str, total: int) -> Iterator[bytes]:
    sample = messages(format_id, 1000)
    for n in range(total):
        yield sample[n % len(sample)]


def memory_check(format_id: str, total: int) -> list[list[str]]:
    fmt = get_format(format_id)
    checkpoints = {int(total * f) for f in (0.1, 0.25, 0.5, 0.75, 1.0)}
    rows = []
    start = time.perf_counter()
    for n, message in enumerate(stream(format_id, total), start=1):
        fmt.decode(message)
        if n in checkpoints:
            rows.append(
                [f"{n:,}", f"{rss_mb():.1f} MiB", f"{n / (time.perf_counter() - start):,.0f}/s"]
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=20_000, help="messages per format")
    parser.add_argument("--memory-events", type=int, default=10_000_000, help="0 to skip")
    parser.add_argument("--memory-format", default="canal-json")
    parser.add_argument("--formats", help="comma-separated format ids (default: all)")
    parser.add_argument(
        "--format",
        choices=("each", "auto"),
        default="each",
        help="decode column: each format's own decoder, or auto-detection then decode",
    )
    parser.add_argument("--profile", metavar="FORMAT", help="print a cProfile of FORMAT instead")
    args = parser.parse_args(argv)
    from anycdc.console import print_table

    if args.profile:
        print(profile(args.profile, args.events))
        return 0
    only = [f.strip() for f in args.formats.split(",") if f.strip()] if args.formats else None
    auto = args.format == "auto"
    rows = bench_formats(args.events, only, auto)
    print_table(
        f"Decode throughput, one core, {args.events:,} messages per format "
        "(side by side, best of 3 per 200-message chunk)",
        [
            "format",
            "messages",
            "bare parse (msg/s)",
            "anycdc auto-detect + decode (events/s)" if auto else "anycdc decode (events/s)",
            "vs fastest bare",
            "pipeline stage (events/s)",
            "size",
        ],
        rows,
    )
    if args.memory_events:
        print_table(
            f"Streamed decode memory, {args.memory_format}",
            ["events", "RSS", "rate"],
            memory_check(args.memory_format, args.memory_events),
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
