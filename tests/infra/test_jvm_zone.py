"""anycdc's Spark JVMs run in UTC whatever the machine's zone: Delta costs more outside it.

Delta re-reads a table's whole state after each commit, to verify the file list it keeps in
the checksum, whenever the driver JVM's default zone (or ``user.timezone``, or the session
zone) is not UTC (``Snapshot.allFilesInCrcVerificationForceEnabled``): one more Spark job per
MERGE. Each case starts a fresh Python process with ``TZ=Asia/Shanghai`` (a JVM's zone is
fixed when it starts), opens anycdc's session there and runs a few small MERGEs with the probe
(:mod:`anycdc.bench.merge_probe`). The control opts out the way a user can (its own
``-Duser.timezone``, and Delta's default of file lists in checksums, which anycdc's sessions
turn off: ``session.FILES_IN_CHECKSUM``) and must pay the extra job, so the first case fails if anycdc's sessions
stop running in UTC. In local mode the tasks run in the driver JVM; the executors of a real
cluster get the same option (``tests/cluster/test_standalone.py`` checks their command lines).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from anycdc.spark.session import DRIVER_JAVA_OPTIONS, FILES_IN_CHECKSUM, base_conf

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
SHANGHAI = "Asia/Shanghai"

# runs in a fresh interpreter: prints one JSON line of what the JVM and Delta say
SCRIPT = r"""
import json, sys, time
from pathlib import Path
from anycdc.bench import merge_probe
from anycdc.spark.session import get_spark

conf, work = json.loads(sys.argv[1]), Path(sys.argv[2])
spark = get_spark("anycdc-zone-test", master="local[1]", conf=conf, for_tests=True)
jvm = spark.sparkContext._jvm
snapshot = getattr(getattr(jvm.org.apache.spark.sql.delta, "Snapshot$"), "MODULE$")  # Scala object
# a task (not the driver's own code): what the JVM that runs tasks says
task_zone = spark.range(2).selectExpr(
    "reflect('java.lang.System', 'getProperty', if(id >= 0, 'user.timezone', ''))"
).first()[0]
samples = merge_probe.run(spark, work, tables=1, rounds=2, rows=200, table_rows=1000)
print(json.dumps({
    "python_zone": time.tzname[0],
    "jvm_zone": str(jvm.java.util.TimeZone.getDefault().getID()),
    "user_timezone": str(jvm.java.lang.System.getProperty("user.timezone")),
    "task_zone": task_zone,
    "session_zone": spark.conf.get("spark.sql.session.timeZone"),
    "delta_verifies": bool(snapshot.allFilesInCrcVerificationForceEnabled(spark._jsparkSession)),
    "jobs": [s.jobs for s in samples],
}))
spark.stop()
"""


def _session_in_shanghai(tmp_path: Path, conf: dict[str, str]) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env.update({"TZ": SHANGHAI, "PYTHONPATH": str(ROOT / "src")})
    tmp_path.mkdir(parents=True)
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(conf), str(tmp_path / "tables")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["python_zone"] == "CST", report  # TZ reached the process: the JVM saw it too
    return report


def test_anycdc_sessions_run_their_jvm_in_utc_and_delta_does_not_verify(
    spark: Any, tmp_path: Path
) -> None:
    # the suite's own session ran with the same settings
    assert spark.sparkContext._jvm.java.util.TimeZone.getDefault().getID() == "UTC"

    ours = _session_in_shanghai(tmp_path / "ours", {})
    assert ours["jvm_zone"] == "UTC", ours
    assert ours["user_timezone"] == "UTC", ours
    assert ours["task_zone"] == "UTC", ours
    assert ours["session_zone"] == "UTC", ours
    assert ours["delta_verifies"] is False, ours

    # control: the user's own zone option wins, and then the MERGEs pay one more job each
    # (over the test session's JVM options, which a user's option would otherwise replace:
    # a JVM compiling with C2 takes twice as long here, for nothing the test asserts)
    test_options = base_conf(for_tests=True)[DRIVER_JAVA_OPTIONS]
    theirs = _session_in_shanghai(
        tmp_path / "theirs",
        {
            DRIVER_JAVA_OPTIONS: f"{test_options} -Duser.timezone={SHANGHAI}",
            FILES_IN_CHECKSUM: "true",  # Delta's default: the list it verifies
        },
    )
    assert theirs["jvm_zone"] == SHANGHAI, theirs
    assert theirs["delta_verifies"] is True, theirs
    assert len(ours["jobs"]) == len(theirs["jobs"]) == 2
    assert [j + 1 for j in ours["jobs"]] == theirs["jobs"], (ours, theirs)
