"""``anycdc replay-dead-letters``: re-run bad messages after a fix or an option change."""

from __future__ import annotations

import argparse

from anycdc.cli.base import Command, fail, no_run_under
from anycdc.cli.run import add_arguments as add_run_arguments
from anycdc.cli.run import config_from_args
from anycdc.errors import AnyCdcError, RunFailed


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(args)
    except (AnyCdcError, OSError) as exc:
        return fail(str(exc))
    missing = no_run_under(str(config.target))
    if missing:  # a wrong folder replays nothing: said, not "0 dead letters replayed"
        return fail(missing)
    from anycdc.spark.pipeline import replay_dead_letters
    from anycdc.spark.session import get_spark

    spark = get_spark("anycdc replay-dead-letters", master=config.master, conf=config.spark_conf)
    try:
        replayed, left = replay_dead_letters(spark, config)
    except RunFailed as exc:
        return fail(str(exc), code=1)
    print(f"{replayed} dead letters replayed and applied, {left} still failing")
    return 0


COMMAND = Command(
    name="replay-dead-letters",
    help="re-run the dead-letter table's messages through the pipeline",
    description="Decode every message in <target>/_anycdc/dead_letter again with the current\n"
    "format options, apply those that now decode, and remove them from the dead-letter\n"
    "table; the others stay. Takes the same flags as `run` (target, format, options,\n"
    "primary keys).\n\n"
    "Example (a DTS task created before 2022-03-20):\n"
    "  anycdc replay-dead-letters --target lake/ --format dts-canal-json -o legacy=true",
    add_arguments=add_run_arguments,
    run=run,
)
