"""The apply round: bring the tables that are due up to date, exactly once.

Where it sits: source -> decode -> changelog -> plan -> **apply -> commit**. After a
micro-batch's ingest (:mod:`anycdc.spark.ingest`), or between batches and at the end of a
run (the stream runner, :mod:`anycdc.spark.pipeline`), the round takes the due tables'
pending changelog rows in one frame (the current batch from memory, older batches from the
changelog), plans them (:mod:`anycdc.spark.plan`), runs each table's schema step, properties
and TRUNCATE (idempotent by themselves: :class:`~anycdc.spark.table_state.DueTable`), folds
every table's actions in one shuffle, then writes each table (``max_concurrent_tables`` at a
time: a MERGE, an append, or the batched engine's commit, :mod:`anycdc.spark.commit`) with
Delta's idempotent-write settings ``txnAppId`` = ``<query>:apply`` and ``txnVersion`` = the
last ingest batch the apply covers; then the deleted keys (tombstones) and one row per table
in ``_anycdc/applied`` (the ledger a restart reads). A table that fails has its events of
the apply dead-lettered (:mod:`anycdc.spark.system_tables`); the others go on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final

from anycdc.config import PipelineConfig
from anycdc.errors import one_line
from anycdc.faults import crash_point
from anycdc.metrics import SCHEMA_CHANGE
from anycdc.schedule import Schedule, TableIdent, qualified_name
from anycdc.spark.actions import action_stats, deleted_keys, round_actions
from anycdc.spark.apply import (
    IncompatibleSchema,
    TableApplier,
    TablePlan,
    TableResult,
    TableSummary,
    build_plans,
    fold_actions,
    with_batch,
)
from anycdc.spark.batch_metrics import BatchMetrics
from anycdc.spark.commit import DeltaTables
from anycdc.spark.ledger import INGEST_BATCH, Applied, Ledger, WriteId, only_pending
from anycdc.spark.maintenance import AUTO_COMPACT, Upkeep
from anycdc.spark.plan import summarize
from anycdc.spark.scd2 import Scd2Applier
from anycdc.spark.session import activate_in_thread
from anycdc.spark.system_tables import SystemTables, dead_letter_rows, with_messages
from anycdc.spark.table_schema import TableSchema
from anycdc.spark.table_state import DueTable, TableState
from anycdc.spark.tombstones import Tombstones, table_tag

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession

log = logging.getLogger("anycdc.pipeline")

TXN_APP_ID: Final = "spark.databricks.delta.write.txnAppId"
TXN_VERSION: Final = "spark.databricks.delta.write.txnVersion"
APPLIERS: Final[dict[str, type[TableApplier | Scd2Applier]]] = {
    "scd1": TableApplier,
    "scd2": Scd2Applier,
}
"""The applier of each ``mode`` (a table's: :meth:`ApplyRound.applier_kind`)."""
APPLY_APP: Final = ":apply"
"""The app id suffix of the tables' MERGEs: their version is the ingest batch applied through."""


MATERIALIZE_SOURCE: Final = "spark.databricks.delta.merge.materializeSource"


@contextmanager
def apply_settings(spark: SparkSession, config: PipelineConfig) -> Iterator[None]:
    """What every apply needs of its session, set for the ``with`` block and put back after
    it (an apply outside a micro-batch runs on the caller's own session)."""
    settings = {
        # partial images are overlaid with map_concat: the newer value of a column wins
        "spark.sql.mapKeyDedupPolicy": "LAST_WIN",
        # Delta copies a MERGE source it cannot prove deterministic before merging; ours is
        # (a pure function of the batch's offsets, folded in a total order) and already
        # cached: the copy is a job and a local checkpoint per table per apply for nothing
        MATERIALIZE_SOURCE: "none",
        AUTO_COMPACT: "true" if config.auto_compact else "false",
    }
    before: dict[str, str | None] = {name: spark.conf.get(name, None) for name in settings}
    for name, value in settings.items():
        spark.conf.set(name, value)
    try:
        yield
    finally:
        for name, old in before.items():
            if old is None:
                spark.conf.unset(name)
            else:
                spark.conf.set(name, old)


class ApplyRound:
    """Applies the due tables of a run (see the module docstring); what the run knows of
    each table between its applies is :attr:`known`."""

    def __init__(
        self,
        spark: SparkSession,
        config: PipelineConfig,
        system: SystemTables,
        schedule: Callable[[], Schedule],
        keep_ledger: bool,
    ) -> None:
        self.spark = spark
        self.config = config
        self.system = system
        self.schedule = schedule
        """The run's schedule (read from the ledger on first use)."""
        self.keep_ledger = keep_ledger
        self.known: dict[str, TableState] = {}
        """Per table path: what this run knows of it (schema, properties, size)."""
        self._registered: set[str] = set()  # tables this run has put in the catalog
        self._keyless: set[str] = set()  # tables this run has said have no key
        self._tables: DeltaTables | None = None  # the batched engine's transactions

    def applier_kind(self, plan: TablePlan) -> type[TableApplier | Scd2Applier]:
        """How the table is written: its current row per key (scd1) or every version
        (scd2), by its ``mode`` (its ``tables:`` entry's, else the run's)."""
        return APPLIERS[self.config.table_settings(plan.ident).mode]

    def apply(
        self,
        spark: SparkSession,
        due: list[TableIdent],
        through: int,
        current: DataFrame | None,
        summary: list[TableSummary] | None,
        app: WriteId,
        metrics: BatchMetrics,
        ending: bool = False,
    ) -> None:
        """Bring the ``due`` tables up to date through ingest batch ``through``: their
        pending rows (``current``: this batch's, in memory; older ones, and this batch's
        when ``current`` is None, from the changelog), one plan and schema step per table
        (``summary``: this batch's, when its rows are all that is due), one fold, a MERGE
        each, then the tombstones and the ledger (written with ``app``, the idempotent-write
        id of this batch or flush); ``ending``: the run's final apply."""
        from pyspark.sql import functions as F

        schedule = self.schedule()
        ledger = Ledger(spark, self.config)
        with schedule.lock:  # what is pending, read while the next batch may be entering its own
            now_ms = int(time.time() * 1000)
            reasons = {ident: schedule.reason(ident, now_ms, ending) for ident in due}
            older = [i for i in due if (schedule.pending[i].oldest_batch or 0) < through]
            metrics.own_rows_applied = len(older) < len(due)
            # what ingest summarized of each batch: the plan without a second look at the rows
            # (for older batches, and for an apply between batches, which has no summary of
            # its own: a run's final apply of its only batch among them)
            kept = kept_summaries(schedule, due, through) if older or summary is None else None
            if current is None or older:
                frames = [ledger.pending_rows(due, schedule).filter(F.col(INGEST_BATCH) <= through)]
                if current is not None:
                    frames = [frames[0].filter(F.col(INGEST_BATCH) < through)]
                    frames.append(only_pending(current, due, schedule, spark))
                pending = frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])
                if kept is None and summary is None:  # read twice: by the plan job, the fold
                    pending = pending.persist()
            elif summary is None:
                pending = only_pending(current, due, schedule, spark)
            else:
                pending = current
        try:
            with metrics.timed("plan"):
                if kept is not None:
                    tables = kept
                else:
                    tables = summary if summary is not None else summarize(pending)
                wanted_tables = [t for t in tables if t.ident in set(due)]
                plans = {
                    ident: plan
                    for ident, plan in build_plans(wanted_tables, self.config).items()
                    if self.config.wants_table(plan.qualified)
                }
            with metrics.timed("schema"):
                prepared, failed = self._prepare(spark, plans, through)
            failures = []
            with metrics.timed("log"):
                for plan, reason in failed:
                    failures.append(self.system.dead_letter_table(pending, plan, reason, app))
            with metrics.timed("apply"):
                results = self._merge_all(pending, prepared, through, app)
            results += failures
            metrics.tables += results
        finally:
            if pending is not current and kept is None:
                pending.unpersist()
        by_table = {r.table: r for r in results}
        policy = self.config.freshness_policy
        applied = []
        for ident in due:
            name = qualified_name(ident)
            result = by_table.get(name)
            applied.append(
                Applied(
                    ident,
                    self.config.table_path(*ident),
                    through,
                    events=result.events if result else 0,
                    max_position=result.max_position if result else None,
                    max_ts_ms=result.max_ts_ms if result else None,
                    reason=reasons.get(ident),
                    freshness_s=policy.target_s(name),
                )
            )
        with schedule.lock:
            schedule.applied(due, through)
            # nothing pending at all, this batch's included: every table is applied through it
            watermark = through if not schedule.pending else None
        crash_point("before-ledger")
        if self.keep_ledger:
            with metrics.timed("log"):
                ledger.record(applied, watermark, app)

    def _prepare(
        self, spark: SparkSession, plans: dict[TableIdent, TablePlan], through: int
    ) -> tuple[list[DueTable], list[tuple[TablePlan, str]]]:
        """Each due table's schema step (create, evolve), properties and TRUNCATE: all
        idempotent by themselves, so outside the idempotent-write window. What the run
        knows of a table (:class:`~anycdc.spark.table_state.TableState`) spares it a look
        at the table per apply."""
        prepared = []
        failed: list[tuple[TablePlan, str]] = []
        properties: list[tuple[str, dict[str, str]]] = []
        for plan in plans.values():
            try:
                item = self._prepare_one(spark, plan, through, properties)
            except IncompatibleSchema as exc:
                failed.append((plan, self._failed(plan, f"{SCHEMA_CHANGE}: {exc}")))
                continue
            except Exception as exc:  # whatever Spark or Delta raise: this table only
                failed.append((plan, self._failed(plan, one_line(exc))))
                continue
            if item is not None:
                prepared.append(item)
        # upkeep is idempotent: outside the idempotent-write window, like the schema changes
        vacuumed = set(Upkeep(spark, self.config).vacuum_due(properties))
        for item in prepared:
            if item.schema.table_ref() in vacuumed:
                item.state.vacuumed(self.spark, item.path)  # its stamp changed: read it again
        return prepared, failed

    def _failed(self, plan: TablePlan, reason: str) -> str:
        """Log one line for a table that failed and forget what the run knew of it (its
        next apply looks at it afresh); returns ``reason``."""
        log.warning(
            "%s: %s (its events of this apply are dead-lettered; the other tables go on)",
            plan.qualified,
            reason,
        )
        self.known.pop(self.config.table_path(plan.database, plan.schema, plan.table), None)
        return reason

    def _prepare_one(
        self,
        spark: SparkSession,
        plan: TablePlan,
        through: int,
        properties: list[tuple[str, dict[str, str]]],
    ) -> DueTable | None:
        """One table's schema step, properties and TRUNCATE (see :meth:`_prepare`); None
        for DDL of a table that has no row yet. Its properties are added to ``properties``
        (for the VACUUMs that are due)."""
        applier = self.applier_kind(plan)(spark, self.config, plan)
        known = self.known.get(applier.path)
        if not plan.has_rows and known is None and not applier.schema.exists():
            return None  # DDL for a table we have no row of yet: its first rows carry the schema
        item = DueTable.schema_step(applier, known, through)
        if not plan.key and applier.path not in self._keyless:
            # said once a run: a keyless table is matched by value, which a user most
            # likely does not want and can fix with one flag
            self._keyless.add(applier.path)  # one thread per table: no race on a path
            log.warning(
                "%s: no primary key from any source: rows are matched by full-row identity; "
                "set --primary-key %s=<columns>",
                plan.qualified,
                plan.qualified,
            )
        if not item.awaits_first_write:  # else once its first write has created it
            self._register(item.schema)
        self.known[applier.path] = item.state
        item.align(self.spark, through, properties)
        return item

    def _register(self, table: TableSchema) -> None:
        """Put the table in the Spark catalog (``table_name``), once per run and table."""
        if self.config.table_name and table.path not in self._registered:
            name = table.register()
            self._registered.add(table.path)  # one thread per table: no race on a path
            log.info("%s: in the catalog as %s", table.plan.qualified, name)

    @contextmanager
    def _txn(self, spark: SparkSession, write: WriteId) -> Iterator[None]:
        """Delta's idempotent-write settings on the session (MERGE honours only those)."""
        spark.conf.set(TXN_APP_ID, write.app_id)
        spark.conf.set(TXN_VERSION, str(int(write.version)))
        try:
            yield
        finally:
            spark.conf.unset(TXN_APP_ID)
            spark.conf.unset(TXN_VERSION)

    def _merge_all(
        self,
        wanted: DataFrame,
        prepared: list[DueTable],
        through: int,
        app: WriteId,
    ) -> list[TableResult]:
        """Fold every prepared table's actions in one shuffle, MERGE each table with the
        version ``through`` (``<query>:apply``), then record the deleted keys (``app``)."""
        from pyspark.sql import functions as F

        if not prepared:
            return []
        # every table's actions in one cached frame: counted, folded and read by each
        # table's write without recomputing the filters and casts per use
        actions = with_batch(self._all_actions(wanted, prepared), through)
        actions = actions.localCheckpoint(eager=True)
        folded = None
        try:
            stats = action_stats(actions)
            current = [table_tag(i) for i, item in enumerate(prepared) if not item.keeps_history]
            if current:  # the tables of one row per key (scd1); history tables keep every version
                store = Tombstones(wanted.sparkSession, self.config)
                tables = store.table_ids([item.path for item in prepared])
                # one shuffle folds every table's keys and one read of the tombstones
                # guards them all; each MERGE then reads its slice
                ok = actions.filter(F.col("_bad").isNull())
                if len(current) < len(prepared):  # some are history tables: not theirs
                    ok = ok.filter(F.col("_t").isin(current))
                ok = ok.drop("_bad")
                folded = store.guard(fold_actions(ok, by=("_t", "_key")), tables)
                folded = with_batch(folded, through).localCheckpoint(eager=True)

            session = wanted.sparkSession  # the batch's, with the apply's settings on it

            def apply_one(index: int) -> TableResult:
                item = prepared[index]
                started = time.monotonic()
                activate_in_thread(session)  # a worker thread's JVM thread: see there
                try:
                    result = self._apply_table(
                        item, actions, folded, index, stats.get(index), through, wanted
                    )
                except Exception as exc:  # whatever Spark or Delta raise: this table only
                    plan = item.plan
                    reason = self._failed(plan, one_line(exc))
                    return self.system.dead_letter_table(wanted, plan, reason, app)
                result.seconds = time.monotonic() - started
                return result

            workers = min(self.config.max_concurrent_tables, len(prepared))
            with self._txn(
                wanted.sparkSession, WriteId(self.config.query_name + APPLY_APP, through)
            ):
                if workers == 1:
                    results = [apply_one(i) for i in range(len(prepared))]
                else:
                    with ThreadPoolExecutor(workers, thread_name_prefix="anycdc-merge") as pool:
                        results = list(pool.map(apply_one, range(len(prepared))))
            if folded is not None and any(r.deletes and not r.error for r in results):
                # after every MERGE: a tombstone never stands for a delete not yet applied
                # (nor for one of a table that failed: its replay must still apply it)
                ok_tags = [table_tag(i) for i, r in enumerate(results) if not r.error]
                applied = folded.filter(F.col("_t").isin(ok_tags))
                store.record(deleted_keys(applied, tables, through), app)
            return results
        except BaseException:
            for item in prepared:
                if item.awaits_first_write:  # not written: what the run knows of it is not so
                    self.known.pop(item.path, None)
            raise
        finally:
            if folded is not None:
                folded.unpersist()
            actions.unpersist()

    def _all_actions(self, wanted: DataFrame, prepared: list[DueTable]) -> DataFrame:
        """Every table's row actions in one plan (:func:`~anycdc.spark.actions.round_actions`),
        tagged ``_t`` (:func:`table_tag` of its index in ``prepared``), each with ``_bad``
        (why it cannot be cast to its column, or null) and ``_kv`` (its key bound's number)."""
        specs = [item.action_spec(table_tag(i)) for i, item in enumerate(prepared)]
        actions = round_actions(self.spark, wanted, specs)
        # each table's slice is a few partitions of the cached batch: a task per slice
        # would be thousands of tiny tasks
        width = int(self.spark.conf.get("spark.sql.shuffle.partitions") or 4)
        return actions.coalesce(max(1, width))

    def _apply_table(
        self,
        item: DueTable,
        actions: DataFrame,
        folded: DataFrame | None,
        index: int,
        stats: Row | None,
        through: int,
        wanted: DataFrame,
    ) -> TableResult:
        """Write one table's folded actions (``wanted``: the round's pending rows, where a
        dead letter's message is read back from)."""
        from pyspark.sql import functions as F

        applier, types = item.applier, item.types
        plan = item.plan
        mine = F.col("_t") == F.lit(table_tag(index))
        n = int(stats["n"] or 0) if stats else 0
        deletes = int(stats["deletes"] or 0) if stats else 0
        dead = int(stats["bad"] or 0) if stats else 0
        # the MERGE first: when it fails, every event of the table is dead-lettered instead
        appended = False
        created_now = item.awaits_first_write
        if n and folded is not None and isinstance(applier, TableApplier):  # not keeps_history
            created = item.created_in_this_apply
            append = item.appendable(self.spark, stats) if stats and not created else False
            mine_folded = folded.filter(mine).drop("_t")
            if not self._commit_batched(item, mine_folded, through, created or append):
                applier.merge(mine_folded, types, through, guarded=True, append=append)
            appended = created or append
            if stats and item.bound_column:
                item.raise_bound(self.spark, stats, created)
        elif n:
            good = actions.filter(mine & F.col("_bad").isNull()).drop("_t", "_bad")
            applier.apply(good, types, through, has_deletes=bool(deletes))
        item.create_if_unwritten()  # no row written: it exists all the same
        if created_now:
            self._register(item.schema)
        if dead:
            bad = with_messages(actions.filter(mine & F.col("_bad").isNotNull()), wanted)
            # several writers append to dead_letter in one apply: each needs its own app id
            self.system.append(
                dead_letter_rows(bad, plan.qualified, F.col("_bad")),
                "dead_letter",
                WriteId(f"{self.config.query_name}:dead:{item.path}", through),
            )
        return TableResult(
            table=plan.qualified,
            path=item.path,
            events=n,
            deletes=deletes,
            upserts=n - deletes,
            dead_letters=dead,
            max_position=stats["pos"] if stats else None,
            max_ts_ms=stats["ts"] if stats else None,
            min_ts_ms=stats["ts_min"] if stats else None,
            appended=appended,
        )

    def _commit_batched(
        self, item: DueTable, folded: DataFrame, through: int, append: bool
    ) -> bool:
        """Write the table's folded actions with the batched engine
        (:meth:`TableApplier.commit_batched`; a table this write creates:
        :meth:`TableApplier.create_batched`); False where the MERGE writes them instead:
        ``apply_engine: merge``, a table over ``rewrite_max_mb`` (then rewritten whole it
        would cost more than the MERGE), a rewrite of a table with the change data feed on
        (the MERGE writes its update and delete rows; an append needs none)."""
        applier = item.applier
        assert isinstance(applier, TableApplier)  # an SCD1 table's: history is never folded
        if self.config.apply_engine != "batched":
            return False
        known = item.state
        tables = self._delta_tables()
        app_id = self.config.query_name + APPLY_APP
        if item.awaits_first_write:
            known.log = applier.create_batched(folded, item.types, through, tables, app_id)
            return True
        snapshot, state = tables.state(applier.path, known.log)
        known.log = state
        if not append and (
            state.size_bytes > self.config.rewrite_max_mb * 2**20 or tables.change_feed(snapshot)
        ):
            return False
        known.log = applier.commit_batched(
            folded, item.types, through, tables, state, app_id, append=append, snapshot=snapshot
        )
        return True

    def _delta_tables(self) -> DeltaTables:
        if self._tables is None:
            self._tables = DeltaTables(self.spark)
        return self._tables


def kept_summaries(
    schedule: Schedule, due: list[TableIdent], through: int
) -> list[TableSummary] | None:
    """The due tables' summaries combined from those ingest kept of each pending batch
    (:meth:`~anycdc.schedule.Schedule.summaries`), or None when a table's are not all
    there (a restart found its rows pending) or do not count its pending rows: then the
    plan job reads the rows (:func:`~anycdc.spark.plan.summarize`).

    >>> from anycdc.schedule import FreshnessPolicy
    >>> schedule = Schedule(FreshnessPolicy(default_s=60.0))
    >>> t = ("shop", None, "orders")
    >>> for batch, rows in ((1, 2), (2, 3)):
    ...     schedule.ingested(t, batch, rows, 0, summary=TableSummary(*t, rows=rows))
    >>> [s.rows for s in kept_summaries(schedule, [t], through=2)]
    [5]
    >>> schedule.ingested(("shop", None, "audit"), 2, 1, 0)  # none kept for it
    >>> kept_summaries(schedule, [t, ("shop", None, "audit")], through=2) is None
    True
    """
    combined = []
    for ident in due:
        parts = schedule.summaries(ident, through)
        if not parts or not all(isinstance(p, TableSummary) for p in parts):
            return None
        summaries = [p for p in parts if isinstance(p, TableSummary)]
        pending = schedule.pending[ident]
        if sum(s.rows for s in summaries) != sum(
            rows for batch, rows in pending.batches.items() if batch <= through
        ):
            return None  # not what the schedule counts: trust only the rows
        combined.append(TableSummary.combine(summaries))
    return combined
