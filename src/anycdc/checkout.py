"""Where the anycdc checkout is, when anycdc runs from one (an editable install, the tests).

The jars ``make setup`` fetches (:mod:`anycdc.spark.jars`) and the local broker's and
registry's files (:mod:`anycdc.devtools.paths`) live in the checkout's ``.build/``; an
installed wheel has no checkout, and then those look elsewhere.

>>> root = project_root()
>>> root is None or (root / "pyproject.toml").is_file()
True
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

ROOT_ENV: Final = "ANYCDC_PROJECT_ROOT"
"""Names the checkout when it is not above this module or the working directory."""


def project_root() -> Path | None:
    """The anycdc checkout this module runs from (editable install), else one above the cwd."""
    env = os.environ.get(ROOT_ENV)
    if env:
        return Path(env)
    # src/anycdc/checkout.py -> the checkout is three folders up
    candidates = [Path(__file__).resolve().parents[2], *Path.cwd().resolve().parents]
    candidates.insert(1, Path.cwd().resolve())
    for base in candidates:
        if (base / "pyproject.toml").is_file() and (base / "jvm" / "pom.xml").is_file():
            return base
    return None


__all__ = ["ROOT_ENV", "project_root"]
