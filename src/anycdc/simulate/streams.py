"""Streams with faults (duplicates, reordering within bounds, corruption) and the
ground-truth files a pipeline's output is checked against."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anycdc.event import dumps
from anycdc.simulate.profiles import FORMAT_PROFILES, FormatProfile
from anycdc.simulate.tables import TableSpec
from anycdc.simulate.workload import Workload


# --------------------------------------------------------------------------- streams with faults
@dataclass
class Stream:
    """Encoded messages (per Kafka partition) and what a correct pipeline must end with."""

    partitions: list[list[tuple[bytes | None, bytes]]]
    truth: dict[str, dict[tuple[Any, ...], dict[str, Any]]]
    tables: list[TableSpec]
    expected_dead_letters: int
    duplicates: int
    reordered: int
    profile: str = "shop"
    seed: int = 0


def build_stream(
    workload: Workload,
    format_id: str,
    *,
    partitions: int = 1,
    duplicates: float = 0.0,
    reorder: float = 0.0,
    malformed: float = 0.0,
    options: dict[str, str] | None = None,
) -> Stream:
    """Encode a workload as a vendor would write it, keyed by primary key over
    ``partitions``, then inject faults: re-deliveries of earlier messages
    (``duplicates``), swaps of nearby messages (``reorder``), corrupt messages
    (``malformed``: each one must end in the dead-letter table)."""
    from anycdc.formats import get_format

    fmt = get_format(format_id, options)
    # the faults have their own random stream: the same seed gives the same source history
    rng = random.Random(f"faults:{workload.seed}")
    parts: list[list[tuple[bytes | None, bytes]]] = [[] for _ in range(max(1, partitions))]
    corrupt: set[int] = set()  # ids of the injected corrupt messages (alive in ``parts``)
    dupes = swaps = bad = 0
    for event in workload.events(format_id):
        key = fmt.encode_key(event)
        index = partition_of(key, len(parts))
        for message in fmt.encode(event):
            parts[index].append((key, message))
            if duplicates and rng.random() < duplicates:
                earlier = rng.choice(parts[index])
                parts[index].append(earlier)
                dupes += 1
                if id(earlier[1]) in corrupt:
                    bad += 1  # a corrupt message delivered again is one more dead letter
            if malformed and rng.random() < malformed:
                poison = _corrupt(message, rng)
                corrupt.add(id(poison))
                parts[index].append((key, poison))
                bad += 1
    for part in parts:
        for i in range(len(part) - 1):
            if reorder and rng.random() < reorder:
                j = min(len(part) - 1, i + rng.randint(1, 3))
                part[i], part[j] = part[j], part[i]
                swaps += 1
    return Stream(
        parts, workload.truth, workload.tables, bad, dupes, swaps, workload.profile, workload.seed
    )


def partition_of(key: bytes | None, count: int) -> int:
    """The partition a keyed message goes to (CRC-32 of the key, as the vendors key by PK)."""
    if count == 1 or key is None:
        return 0
    import zlib

    return zlib.crc32(key) % count


def _corrupt(message: bytes, rng: random.Random) -> bytes:
    """A message no decoder accepts: cut short, or not JSON/Avro at all."""
    kind = rng.randrange(3)
    if kind == 0:
        return message[: max(1, len(message) // 3)].rstrip(b"}") + b'"'
    if kind == 1:
        return b"\x00\xff\xfe garbage " + bytes([rng.randrange(256) for _ in range(8)])
    return b'{"hello": "not a change message"}'


# --------------------------------------------------------------------------- ground truth files
TRUTH_MANIFEST = "manifest.json"


def write_truth(stream: Stream, folder: str | Path, format_id: str) -> Path:
    """Write the expected final tables: ``manifest.json`` + one JSON Lines file per table.

    The manifest lists every table (database, name, key — ``[]`` for a table without
    a primary key, whose rows are then a multiset —, column logical types as the
    pipeline stores them for ``format_id``) and the expected dead-letter count; each
    ``<database>.<table>.jsonl`` holds the table's rows in canonical JSON value form.
    """
    import json

    from anycdc.event import value_to_json

    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    profile = FORMAT_PROFILES.get(format_id, FormatProfile())
    manifest = {
        "format": format_id,
        "profile": stream.profile,
        "seed": stream.seed,
        "expected_dead_letters": stream.expected_dead_letters,
        "notes": list(profile.notes),
        "tables": [
            {
                "database": t.database,
                "table": t.name,
                "key": list(t.key),
                "multiset": t.keyless,
                "columns": {n: str(c.type) for n, c in t.columns.items()},
                "rows": truth_file(t),
            }
            for t in stream.tables
        ],
    }
    (root / TRUTH_MANIFEST).write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    for table in stream.tables:
        rows = stream.truth[table.qualified].values()
        text = "".join(dumps(value_to_json(row)) + "\n" for row in rows)
        (root / truth_file(table)).write_text(text, encoding="utf-8")
    return root


def truth_file(table: TableSpec) -> str:
    """The truth file of ``table``: ``<database>.<table>.jsonl``, a name a folder can hold
    (:func:`anycdc.naming.path_segment`: no ``/``, no leading dot, hashed when too long).

    >>> truth_file(TableSpec("shop", "a/b", {}, ()))
    'shop.a_b.jsonl'
    """
    from anycdc.naming import path_segment

    return path_segment(f"{table.qualified}.jsonl")
