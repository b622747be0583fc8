"""Shared pytest configuration."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

pytest_plugins = ["tests.fixtures_infra"]

settings.register_profile(
    "default", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist hands its workers COLUMNS from the controller's terminal (80 when there is
    # none, as in CI), which a worker's tables would be fitted to; without it a worker sees
    # what one process does: its own terminal, or none (anycdc.console.FALLBACK_SIZE)
    os.environ.pop("COLUMNS", None)
