"""Entry script for ``spark-submit``: runs the ``anycdc`` command line inside a submitted driver.

spark-submit runs a *file*, not a console script, so this module is that file::

    spark-submit --master spark://HOST:7077 \\
        --jars "$(python -m anycdc.spark.jars comma)" \\
        --conf spark.pyspark.python=/path/to/venv/bin/python \\
        --conf spark.pyspark.driver.python=/path/to/venv/bin/python \\
        src/anycdc/spark/submit.py run --source-dir captures/ --target lake/

Everything after the script is ``anycdc``'s own command line (``run``, ``replay``, ...); the
process exits with its exit code. Master, jars and ``--conf`` settings are spark-submit's:
:func:`anycdc.spark.session.get_spark` sees the JVM spark-submit started and attaches to it
without overriding them (it only adds the Delta extension / catalog when they are absent). Do
not pass ``--master`` to ``anycdc run`` here: it is ignored with a warning.

Python code on the executors: the decoders run in Python workers on every executor, so
``anycdc`` must be importable there. On one machine (tests, a laptop "cluster") pointing
``spark.pyspark.python`` at a virtualenv that has anycdc installed is enough. On a real cluster
either install the wheel on every node (and point ``spark.pyspark.python`` at that interpreter)
or ship it with the job: ``pip wheel --no-deps . -w dist`` then
``spark-submit --py-files dist/anycdc-0.1.0-py3-none-any.whl ...`` (its pure-Python
dependencies msgspec / fastavro / pyyaml / tzdata must then be on the nodes as well, e.g. in a
packed environment passed with ``--archives``). The target and checkpoint folders must be on
storage every node sees (HDFS, S3, a shared mount).
"""

from __future__ import annotations

import os
import sys

# ``spark-submit path/to/submit.py`` runs this file as a script, which puts its folder
# (anycdc/spark/) first on sys.path, where ``types.py`` would shadow the standard library's
# ``types``. Drop that entry before importing anything else; anycdc comes from the installed
# package (or --py-files), never from this folder.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]


def main(argv: list[str] | None = None) -> int:
    """Run ``anycdc <argv>`` and stop the Spark session it used; return the exit code."""
    from anycdc.cli import main as cli_main

    try:
        return cli_main(sys.argv[1:] if argv is None else argv)
    finally:
        _stop_spark()


def _stop_spark() -> None:
    """Stop the SparkContext (if one was started) so the application ends cleanly."""
    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if context is not None:
        context.stop()


if __name__ == "__main__":
    raise SystemExit(main())
