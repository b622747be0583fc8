"""A user without the checkout: the built wheel, installed elsewhere, finds its Spark jars.

The wheel is built from a copy of the project's files (``pip wheel --no-deps``) and installed
into a fresh virtualenv outside the checkout. Installing pyspark again would download 430 MB
per run, so that virtualenv sees the project virtualenv's packages through a ``.pth`` line
(pyspark, pandas, msgspec ... but not the editable anycdc: a ``.pth`` file inside a directory
added that way is not read), while ``anycdc`` itself is the wheel's. The commands then run
from a temporary folder with no ``ANYCDC_JARS_DIR``, no ``PYTHONPATH`` and an empty user
cache, as a ``pip install 'anycdc[spark]'`` user runs them:

1. ``anycdc decode`` (pure Python) decodes a message;
2. ``anycdc run`` applies a simulated database to Delta: with no jars folder, Spark resolves
   the pinned Maven coordinates itself into its Ivy cache (``spark.jars.ivy`` points it at a
   fresh one, so the resolution is seen to happen);
3. ``anycdc dev jars fetch`` fills the user cache, and a second ``anycdc run`` (into a new
   target) takes its jars from there: its own fresh Ivy cache stays unused.

Both targets must hold the simulator's ground truth. Marked slow: two pipeline runs and a
resolution, each in a JVM of its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from anycdc.formats import get_format
from anycdc.simulate import Workload
from anycdc.spark import jars
from anycdc.verify import compare_rows
from tests.pipeline.helpers import write_messages

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
FORMAT = "canal-json"


def _run(args: list[str], env: dict[str, str], cwd: Path, timeout: float = 900) -> str:
    result = subprocess.run(
        args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, f"{args}\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    return result.stdout


def _wheel(tmp_path: Path) -> Path:
    """``pip wheel --no-deps`` of a copy of the project (the checkout gets no build/ folder)."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    dist = tmp_path / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check",
         "-q", "-w", str(dist), str(source)],
        dict(os.environ), tmp_path,
    )  # fmt: skip
    (wheel,) = dist.glob("anycdc-*.whl")
    return wheel


def _venv_with_wheel(tmp_path: Path, wheel: Path) -> Path:
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], dict(os.environ), tmp_path)
    python = venv / "bin" / "python"
    site = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        dict(os.environ), tmp_path,
    ).strip()  # fmt: skip
    # the project venv's packages (pyspark ...), after the new venv's own: the wheel wins
    Path(site, "project_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q",
         "--disable-pip-version-check", str(wheel)],
        dict(os.environ), tmp_path,
    )  # fmt: skip
    return venv


def _user_env(tmp_path: Path) -> dict[str, str]:
    """The environment of someone who installed the wheel: nothing of the checkout."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANYCDC_", "PYSPARK_", "SPARK_", "PYTHON"))
    }
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # an empty user cache
    return env


def _truth_rows(spark: Any, target: Path, workload: Workload) -> list[str]:
    failures = []
    for spec in workload.tables:
        frame = spark.read.format("delta").load(str(target / spec.database / spec.name))
        actual = [row.asDict() for row in frame.collect()]
        expected = list(workload.truth[spec.qualified].values())
        diff = compare_rows(spec.qualified, spec.key, expected, actual)
        if not diff.ok:
            failures.append(f"{spec.qualified}: missing {diff.missing[:3]} extra {diff.extra[:3]}")
    return failures


def test_the_installed_wheel_decodes_and_runs_to_delta_without_the_checkout(
    spark: Any, tmp_path: Path
) -> None:
    venv = _venv_with_wheel(tmp_path, _wheel(tmp_path))
    env = _user_env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    anycdc = str(venv / "bin" / "anycdc")
    where = _run(
        [str(venv / "bin" / "python"), "-c", "import anycdc; print(anycdc.__file__)"], env, work
    )
    assert where.startswith(str(venv)), where  # the wheel, not the checkout

    workload = Workload(seed=7, rows=5, events=40, database="shop")
    fmt = get_format(FORMAT)
    messages = [m for event in workload.events(FORMAT) for m in fmt.encode(event)]
    source = write_messages(work / "in", f"{FORMAT}.jsonl", messages)

    decoded = _run([anycdc, "decode", "--format", FORMAT, str(source)], env, work)
    assert len(decoded.splitlines()) >= len(workload.tables), decoded[:500]

    run = [
        anycdc, "run", "--source-dir", "in", "--master", "local[2]", "--no-progress",
        "--spark-conf", "spark.driver.memory=1g", "--spark-conf", "spark.ui.enabled=false",
    ]  # fmt: skip

    # 1. no jars folder anywhere: Spark resolves the Maven coordinates into its Ivy cache
    ivy = tmp_path / "ivy"
    _run([*run, "--target", "lake", "--spark-conf", f"spark.jars.ivy={ivy}"], env, work)
    resolved = sorted(p.name for p in (ivy / "jars").glob("*.jar"))
    assert any(name.startswith(f"io.delta_{jars.DELTA_ARTIFACT}-") for name in resolved), resolved
    assert not any("hadoop-client" in name for name in resolved), resolved  # Spark ships it
    assert _truth_rows(spark, work / "lake", workload) == []

    # 2. the offline folder: fetch fills the user cache, and the next run uses it, not Ivy
    _run([anycdc, "dev", "jars", "fetch"], env, work)
    cache = Path(env["XDG_CACHE_HOME"]) / "anycdc" / "spark-jars"
    (folder,) = cache.iterdir()
    fetched = sorted(p.name for p in folder.glob("*.jar"))
    assert len(fetched) == len(resolved)
    assert jars.missing_artifacts(fetched) == []
    # the very jars `make setup` keeps from jvm/pom.xml: one set of pins, two ways to get it
    assert fetched == sorted(Path(p).name for p in jars.spark_jars())
    _run([anycdc, "dev", "jars", "check"], env, work)
    unused_ivy = tmp_path / "ivy-unused"
    _run([*run, "--target", "lake2", "--spark-conf", f"spark.jars.ivy={unused_ivy}"], env, work)
    assert not (unused_ivy / "jars").exists()
    assert _truth_rows(spark, work / "lake2", workload) == []
