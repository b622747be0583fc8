"""Entry script for ``spark-submit``: runs the ``anycdc`` command line inside a submitted driver.

spark-submit runs a *file*, not a console script, so this module is that file::

    spark-submit --master spark://HOST:7077 \\
        --jars "$(python -m anycdc.spark.jars comma)" \\
        --conf spark.pyspark.python=/path/to/venv/bin/python \\
        --conf spark.pyspark.driver.python=/path/to/venv/bin/python \\
        --conf spark.driver.extraJavaOptions=-Duser.timezone=UTC \\
        src/anycdc/spark/submit.py run --source-dir captures/ --target lake/

Everything after the script is ``anycdc``'s own command line (``run``, ``replay``, ...); the
process exits with its exit code. Master, jars and ``--conf`` settings are spark-submit's:
:func:`anycdc.spark.session.get_spark` sees the JVM spark-submit started and attaches to it
without overriding them (it only adds the Delta extension / catalog when they are absent, and
``-Duser.timezone=UTC`` to the executors' Java options: the driver's must come with the
command, as above, since its JVM already runs). Do not pass ``--master`` to ``anycdc run``
here: it is ignored with a warning.

Python code on the executors: the decoders run in Python workers on every executor, so
``anycdc`` must be importable there. On one machine (tests, a laptop "cluster") pointing
``spark.pyspark.python`` at a virtualenv that has anycdc installed is enough
(``tests/cluster/test_standalone.py`` does exactly that). On a real cluster either

* install anycdc (the wheel, ``pip wheel --no-deps . -w dist``) into the same Python on every
  node and point ``spark.pyspark.python`` at that interpreter; or
* ship the package with the job: ``spark-submit --py-files anycdc.zip ...``, where
  ``anycdc.zip`` is ``(cd src && zip -qr ../anycdc.zip anycdc)`` or the pure-Python wheel
  copied to a ``.zip`` name (pyspark only puts ``.zip`` / ``.egg`` / ``.jar`` py-files on the
  executors' ``sys.path``, not ``.whl``). Its dependencies (msgspec is compiled, so it cannot
  be zip-imported; fastavro, pyyaml, tzdata, pyarrow) must then be installed on the nodes, or
  the whole environment shipped with ``--archives env.tar.gz#env`` (venv-pack / conda-pack)
  and ``--conf spark.pyspark.python=./env/bin/python``.

The target and checkpoint folders must be on storage every node sees (HDFS, S3, a shared
mount): the executors write the Delta files, the driver commits them.
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
