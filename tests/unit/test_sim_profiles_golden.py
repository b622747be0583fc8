"""The simulator's per-format profiles and streams, pinned.

``tests/unit/data/sim_profiles.golden.json`` was written by the simulator as it was before
its profiles were derived from the formats' typed capabilities (issue #18): each format's
profile (as declared and as a Workload uses it) and a hash of the events it generates for
the ``shop`` and ``rich`` profiles. The derivation must change none of them. Regenerate
(only for an intended change of the simulated streams) with
``python -m tests.unit.test_sim_profiles_golden``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from anycdc.event import event_to_json
from anycdc.simulate import FORMAT_PROFILES, Workload, format_profile

GOLDEN = Path(__file__).parent / "data" / "sim_profiles.golden.json"


def _stream_hash(format_id: str, profile: str) -> str:
    w = Workload(seed=1, rows=5, events=60, profile=profile)
    lines = "\n".join(event_to_json(e) for e in w.events(format_id))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def snapshot(format_id: str) -> dict[str, Any]:
    """What the simulator makes of ``format_id``: its profiles and its streams' hashes."""
    return {
        "profile": dataclasses.asdict(format_profile(format_id)),
        "workload_profile": dataclasses.asdict(Workload(seed=1).format_profile(format_id)),
        "avoid_gaps_off": dataclasses.asdict(
            Workload(seed=1, avoid_gaps=False).format_profile(format_id)
        ),
        "shop": _stream_hash(format_id, "shop"),
        "rich": _stream_hash(format_id, "rich"),
    }


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))  # tuples as lists, as the golden file has them


def test_golden_covers_every_simulated_format() -> None:
    assert sorted(json.loads(GOLDEN.read_text("utf-8"))) == sorted(FORMAT_PROFILES)


@pytest.mark.parametrize("format_id", sorted(FORMAT_PROFILES))
def test_the_simulator_makes_what_it_made(format_id: str) -> None:
    golden = json.loads(GOLDEN.read_text("utf-8"))
    assert _json(snapshot(format_id)) == golden[format_id]


if __name__ == "__main__":
    data = {fid: snapshot(fid) for fid in sorted(FORMAT_PROFILES)}
    GOLDEN.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", "utf-8")
