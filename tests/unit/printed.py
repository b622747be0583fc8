"""``anycdc run --config FILE [flags] --print-config``: the configuration a run would use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from anycdc.cli import main as cli


def printed_config(
    capsys: pytest.CaptureFixture[str], path: Path, text: str, *flags: str
) -> tuple[dict[str, Any], str]:
    """Write ``text`` as the config file ``path``, print the run's configuration with
    ``flags``; returns it and everything the command printed."""
    path.write_text(text)
    code = cli(["run", "--config", str(path), "--print-config", *flags])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out), out.out + out.err
