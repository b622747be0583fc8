"""Where the checkout, the fetched jars and the local data live."""

from __future__ import annotations

import os
from pathlib import Path

from anycdc.checkout import project_root


def root() -> Path:
    """The anycdc checkout (``$ANYCDC_PROJECT_ROOT``, the editable install's, or the cwd)."""
    found = project_root()
    return found if found is not None else Path.cwd()


def kafka_libs_dir() -> Path:
    """Kafka broker jars fetched by ``make setup`` (``$ANYCDC_KAFKA_LIBS`` overrides)."""
    env = os.environ.get("ANYCDC_KAFKA_LIBS")
    return Path(env) if env else root() / ".build" / "kafka-libs"


def schema_registry_dir() -> Path:
    """The schema registry application fetched by ``make setup``
    (``$ANYCDC_SCHEMA_REGISTRY_DIR`` overrides)."""
    env = os.environ.get("ANYCDC_SCHEMA_REGISTRY_DIR")
    return Path(env) if env else root() / ".build" / "schema-registry"


def var_dir() -> Path:
    """Local, git-ignored runtime data (``$ANYCDC_VAR_DIR`` overrides)."""
    env = os.environ.get("ANYCDC_VAR_DIR")
    return Path(env) if env else root() / "var"


def kafka_home() -> Path:
    """The dev broker's home: config, pid file, logs, data (``$ANYCDC_KAFKA_DIR`` overrides)."""
    env = os.environ.get("ANYCDC_KAFKA_DIR")
    return Path(env) if env else var_dir() / "kafka"


def registry_home() -> Path:
    """The dev schema registry's home: pid file, logs (``$ANYCDC_REGISTRY_DIR`` overrides)."""
    env = os.environ.get("ANYCDC_REGISTRY_DIR")
    return Path(env) if env else var_dir() / "schema-registry"
