"""One set of Spark pins: pyproject.toml, jvm/pom.xml and anycdc.spark.jars say the same."""

from __future__ import annotations

import re
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

from anycdc.spark import jars

ROOT = Path(__file__).resolve().parents[2]
POM = "{http://maven.apache.org/POM/4.0.0}"


def _pins() -> dict[str, str]:
    spark = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pins = dict(re.fullmatch(r"([\w.-]+)==([\w.]+)", p).groups() for p in spark["spark"])  # type: ignore[union-attr]
    return pins


def _pom_properties(path: Path) -> dict[str, str]:
    root = ET.parse(path).getroot()
    properties = root.find(f"{POM}properties")
    assert properties is not None
    return {child.tag.removeprefix(POM): child.text or "" for child in properties}


def test_pyspark_and_delta_pins_are_the_maven_versions() -> None:
    pins = _pins()
    assert pins["pyspark"] == jars.SPARK_VERSION
    assert pins["delta-spark"] == jars.DELTA_VERSION


def test_the_pom_fetches_what_the_session_would_resolve() -> None:
    props = _pom_properties(ROOT / "jvm" / "pom.xml")
    assert props["spark.version"] == jars.SPARK_VERSION
    assert props["delta.version"] == jars.DELTA_VERSION
    assert props["scala.binary"] == jars.SCALA_BINARY
    assert jars.DELTA_ARTIFACT == f"delta-spark_{props['spark.line']}_{props['scala.binary']}"
    assert props["spark.line"] == jars.SPARK_VERSION.rsplit(".", 1)[0]
    assert props["spark.jackson.version"] == jars.SPARK_JACKSON_VERSION


def test_nothing_asked_for_is_also_excluded() -> None:
    asked = {p.rsplit(":", 1)[0] for p in jars.MAVEN_PACKAGES}
    assert not asked & set(jars.MAVEN_EXCLUDES)
    assert all(p.count(":") == 2 for p in jars.MAVEN_PACKAGES)
    assert all(e.count(":") == 1 for e in jars.MAVEN_EXCLUDES)
