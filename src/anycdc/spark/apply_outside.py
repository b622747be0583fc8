"""The applies outside a micro-batch: between batches, beside the next batch's ingest, and the last.

Where it sits: changelog -> plan -> **apply**, on the run's own session rather than inside a
``foreachBatch``. A micro-batch applies the tables due after its ingest itself, unless the run
applies beside ingest; every other apply comes through here:

* **between batches** (an interval trigger whose source has gone quiet runs no micro-batch,
  so the tables that fall due meanwhile are applied by :meth:`OutsideApplies.idle`);
* **beside ingest** (``apply_beside_ingest``): the due tables go to the worker
  (:mod:`anycdc.spark.apply_beside`), which applies them while Spark runs the next batch;
* **the final apply** (:meth:`OutsideApplies.pending` with ``ending``): every table still
  pending when the stream ends.

Each covers ingest batches whose changelog rows are committed (through :attr:`ingested_through`)
and writes the system tables with an idempotent-write id of its own (``<query>:flush``, a fresh
version): a table's write carries the batch it is applied through, so a restart applies what
the ledger does not show applied, once. One of them runs at a time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from anycdc.config import PipelineConfig
from anycdc.schedule import Schedule, TableIdent
from anycdc.spark.apply_beside import APPLY_POOL, ApplyBeside
from anycdc.spark.apply_round import ApplyRound, apply_settings
from anycdc.spark.batch_metrics import BatchMetrics
from anycdc.spark.ledger import WriteId
from anycdc.spark.session import activate_in_thread
from anycdc.spark.system_tables import SystemTables

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

log = logging.getLogger("anycdc.pipeline")

FLUSH_APP: Final = ":flush"
"""The suffix of the idempotent-write app id of an apply outside a micro-batch."""


class OutsideApplies:
    """The run's applies outside its micro-batches (see the module), one at a time.

    ``batch_lock`` is the lock a micro-batch holds: an apply between batches or the final one
    takes it too (they must not overlap a batch), an apply beside ingest does not (overlapping
    the next batch is its point). ``report`` hands each apply's metrics to the run.
    """

    def __init__(
        self,
        spark: SparkSession,
        config: PipelineConfig,
        system: SystemTables,
        apply_round: ApplyRound,
        schedule: Callable[[], Schedule],
        batch_lock: threading.Lock,
        report: Callable[[BatchMetrics], None],
        beside: bool,
    ) -> None:
        self.spark = spark
        self.config = config
        self._system = system
        self._round = apply_round
        self._schedule = schedule
        self._batch_lock = batch_lock
        self._report = report
        self._lock = threading.Lock()  # one apply outside a micro-batch at a time
        self._worker: ApplyBeside[TableIdent] | None = (
            ApplyBeside(self._beside_round) if beside else None
        )
        self.ingested_through: int | None = None
        """The last ingest batch whose changelog rows are committed (an apply covers it)."""

    @property
    def beside(self) -> bool:
        """The due tables are applied beside the next batch's ingest, by the worker."""
        return self._worker is not None

    def hand_over(self, due: Sequence[TableIdent], through: int) -> bool:
        """Give ``due`` (through ingest batch ``through``) to the worker; False if it is busy
        (the tables stay pending for the next decision)."""
        assert self._worker is not None
        return self._worker.offer(due, through)

    def settle(self) -> None:
        """Wait for the apply beside ingest in progress, if any, and start no other (after
        the query has stopped: the run does it before its final apply)."""
        if self._worker is not None:
            self._worker.close()

    def pending(self, ending: bool, wait: bool = True) -> BatchMetrics | None:
        """Apply the due tables (every pending one when ``ending``) through the last batch
        ingested, between batches. None when nothing is due or (``wait=False``) a batch or
        another apply is running."""
        if not self._batch_lock.acquire(blocking=wait):
            return None
        try:
            if not self._lock.acquire(blocking=wait):
                return None
            try:
                schedule = self._schedule()
                with schedule.lock:
                    due = schedule.due(int(time.time() * 1000), ending=ending)
                    if not due:
                        return None
                    through = max(max(schedule.pending[ident].batches) for ident in due)
                metrics = self._apply(due, through, ending)
            finally:
                self._lock.release()
        finally:
            self._batch_lock.release()
        self._report(metrics)
        return metrics

    def idle(self, query: StreamingQuery, stop: threading.Event) -> None:
        """On an interval trigger, apply the tables that fall due while no batch comes (a
        source gone quiet runs no micro-batch: its pending tables would wait for one)."""
        targets = list(self.config.freshness_policy.targets)
        tick = min(30.0, max(1.0, min(t for t in targets if t > 0) / 4 if any(targets) else 30.0))
        while not stop.wait(tick):
            if not query.isActive:
                return
            try:
                if self._worker is not None:  # the worker applies, and no batch waits for it
                    self._offer_due()
                else:
                    self.pending(ending=False, wait=False)
            except Exception as exc:  # py4j and Spark raise several types; the next tick retries
                log.warning("apply between batches failed, retried later: %s", exc)

    def _offer_due(self) -> None:
        """Hand the tables due now to the worker, through the last batch whose ingest
        ended (a batch in progress may have entered its tables before its changelog rows
        are committed: those wait for its own decision)."""
        assert self._worker is not None
        through = self.ingested_through
        if through is None or self._worker.busy:
            return
        schedule = self._schedule()
        with schedule.lock:
            due = [
                ident
                for ident in schedule.due(int(time.time() * 1000))
                if (schedule.pending[ident].oldest_batch or 0) <= through
            ]
        if due:
            self._worker.offer(due, through)

    def _beside_round(self, due: Sequence[TableIdent], through: int) -> None:
        """The worker's round: ``due`` through ingest batch ``through``, while the next
        micro-batch ingests (a table an apply between batches has applied meanwhile drops
        out)."""
        activate_in_thread(self.spark)  # the worker thread's JVM thread: see there
        self.spark.sparkContext.setLocalProperty("spark.scheduler.pool", APPLY_POOL)
        with self._lock:
            schedule = self._schedule()
            with schedule.lock:
                still = [ident for ident in due if ident in schedule.pending]
            if not still:
                return
            metrics = self._apply(still, through, ending=False, beside=True)
        self._report(metrics)

    def _apply(
        self, due: list[TableIdent], through: int, ending: bool, beside: bool = False
    ) -> BatchMetrics:
        """Apply ``due`` through ingest batch ``through`` on the run's own session, with an
        idempotent-write id of its own for the system tables (a batch's own is
        ``(query, batch)``); the caller holds the apply lock."""
        started = time.monotonic()
        metrics = BatchMetrics(through, flush=True, ending=ending, beside=beside)
        app = WriteId(self.config.query_name + FLUSH_APP, int(time.time() * 1000))
        with apply_settings(self.spark, self.config):
            self._round.apply(self.spark, due, through, None, None, app, metrics, ending=ending)
        schedule = self._schedule()
        metrics.deferred = len(schedule.pending)
        self._system.record_batch(self.spark, metrics, app)
        metrics.seconds = time.monotonic() - started
        if beside:
            schedule.apply_s = metrics.phases.get("apply", 0.0) / len(due)
        return metrics
