"""Apply beside ingest: the due tables' apply round on a thread of its own.

Where it sits: changelog -> plan -> **apply** (beside the next batch's ingest). A micro-batch
(:mod:`anycdc.spark.ingest`) makes its events durable in the changelog, decides which tables
are due, and hands them to this worker instead of applying them itself; its ``foreachBatch``
returns and Spark starts the next micro-batch while the worker's round runs. An apply's time
goes mostly to the driver (plans, Delta's commit of each table), an ingest's to the
executors (the decode tasks), so side by side they share the machine instead of taking
turns; in Spark's FAIR scheduler the round's jobs run in a pool of their own
(:data:`APPLY_POOL`), so a long apply job does not queue the decode tasks behind it.

One round at a time: a hand-over that finds the worker busy is not kept (the tables stay
pending, and the next batch decides again with what is pending then), so an apply never
stands in a queue behind an older one. A round covers ingest batches whose changelog rows
are committed (the batch that hands it over, and those before): exactly once holds as for an
apply between batches (:meth:`anycdc.spark.pipeline.Pipeline.flush`): each table's write
carries the batch it is applied through, and a restart applies what the ledger does not
show applied.

>>> seen = []
>>> worker = ApplyBeside(lambda due, through: seen.append((due, through)))
>>> worker.offer(["t"], 3)
True
>>> worker.close()
>>> seen
[(['t'], 3)]
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Final, Generic, TypeVar

from anycdc.errors import one_line

log = logging.getLogger("anycdc.pipeline")

APPLY_POOL: Final = "anycdc-apply"
"""The FAIR scheduler pool of the worker's Spark jobs (``spark.scheduler.pool``)."""

T = TypeVar("T")


class ApplyBeside(Generic[T]):
    """Runs ``apply(due, through)`` on one daemon thread, one hand-over at a time."""

    def __init__(self, apply: Callable[[Sequence[T], int], object]) -> None:
        self._apply = apply
        self._wanted: tuple[Sequence[T], int] | None = None
        self._busy = False
        self._closed = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self.failures = 0
        """Rounds that raised (logged; their tables stay pending and are offered again)."""

    def offer(self, due: Sequence[T], through: int) -> bool:
        """Apply ``due`` through ingest batch ``through`` on the worker, unless it is busy
        (False: the tables stay pending for a later decision)."""
        with self._changed:
            if self._busy or self._closed:
                return False
            self._busy = True
            self._wanted = (list(due), through)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="anycdc-apply-beside", daemon=True
                )
                self._thread.start()
            self._changed.notify_all()
        return True

    @property
    def busy(self) -> bool:
        """A round is running (or handed over and about to)."""
        with self._changed:
            return self._busy

    def wait(self) -> None:
        """Until no round runs (the one in progress has ended)."""
        with self._changed:
            self._changed.wait_for(lambda: not self._busy)

    def close(self) -> None:
        """Let the round in progress end, then stop the thread (no round starts after)."""
        with self._changed:
            self._changed.wait_for(lambda: not self._busy)
            self._closed = True
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join()

    def _serve(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._wanted is not None or self._closed)
                if self._wanted is None:
                    return  # closed
                due, through = self._wanted
                self._wanted = None
            try:
                self._apply(due, through)
            except Exception as exc:  # Spark and Delta raise several types: retried later
                self.failures += 1
                log.warning(
                    "apply beside ingest failed (its tables stay pending, applied later): %s",
                    one_line(exc),
                )
            finally:
                with self._changed:
                    self._busy = False
                    self._changed.notify_all()
