"""Fresh and consistent reads of a target's tables: as of the newest ingested batch, or
every table as of one cut, pending changes included, without writing anything.

Where it sits: source -> decode -> changelog -> plan -> apply -> commit, and **read**
beside them. A table is applied when it is due, so its Delta table alone is up to
``freshness`` behind, and two tables are each as of their own last apply. Every event is
in the changelog (with its ingest batch) before it is applied, and each table's Delta
commits carry the ingest batch they are applied through (Delta's idempotent-write version
of ``<query>:apply``). A read here is a table's Delta version plus its changelog rows after
that batch, folded by the apply's own steps without a write:

1. **the version**: the newest (:meth:`TargetReads.read`), or, for a cut, the last commit
   of an apply through that cut or before it (a later apply's schema step, TRUNCATE or
   MERGE is not in it);
2. **the pending rows**: the table's changelog rows after what that version and the
   ledger (``_anycdc/applied``: an apply that failed, or wrote nothing) say is applied,
   up to the cut;
3. **the apply's steps, dry**: the plan (:mod:`anycdc.spark.plan`), the schema step
   (:meth:`~anycdc.spark.table_schema.TableSchema.planned`: new, widened, renamed and
   dropped columns, no DDL run), the TRUNCATE (the rows it empties left out), the row
   actions (:func:`~anycdc.spark.actions.round_actions`: key changes, casts, the floor),
   the fold (:func:`~anycdc.spark.apply.fold_actions`: positions, partial images,
   deletes), the tombstones (those of the applies the version holds), and the table after
   them (:meth:`~anycdc.spark.apply.TableApplier.rewritten`: the MERGE's own rules).

A **cut** is the end of an ingest batch: :meth:`TargetReads.read_many` reads every table
as of the same one, so a join never sees a change of one table that the others' source
state did not have yet at that batch's end. Their pending rows are one slice of the
changelog, planned by one job and folded by one plan for all the tables, as an apply
round's. A source transaction open at the cut (its BEGIN marker in the changelog, not its
COMMIT: :meth:`TargetReads.open_transactions`) is left out of every table: its rows are not
folded, and each table is read from its last apply before the first of them
(:meth:`TargetReads.point`), since an apply does not wait for a transaction's end. A cut stays readable while each table's
Delta version it needs is in the table's log and its files are not vacuumed
(:meth:`TargetReads.cuts`).

An SCD2 history table (``mode: scd2``) is read the same way, with its apply's steps
(:class:`~anycdc.spark.scd2.Scd2Applier`): the version, the dry schema step, the pending
rows' versions and end markers (their TRUNCATEs among them: a history table has no floor,
nothing is left out), and the version with the touched keys' rows replaced by their
history recomputed (:meth:`~anycdc.spark.scd2.Scd2Applier.history`, the frame the apply
MERGEs from) with the end markers its applies stored (``_anycdc/scd2_ends``; for a cut,
those of the applies through it). Nothing is written: no MERGE, no end marker, no table.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeVar

from anycdc.config import PipelineConfig
from anycdc.errors import ReadError
from anycdc.event import TX_TABLE_EVENTS, Op
from anycdc.schedule import TableIdent, qualified_name
from anycdc.spark.actions import ActionSpec, round_actions
from anycdc.spark.apply import fold_actions
from anycdc.spark.apply_round import APPLIERS, APPLY_APP, apply_settings
from anycdc.spark.commit import Commit, DeltaTables
from anycdc.spark.ledger import INGEST_BATCH, PENDING_OPS
from anycdc.spark.local_rows import local_frame
from anycdc.spark.merge_sql import (
    NAMES_A_TABLE,
    after_truncate_sql,
    as_text_sql,
    converted_sql,
    delta_ref,
    named_sql,
    null_of_sql,
    q,
    show_properties_sql,
)
from anycdc.spark.plan import IncompatibleSchema, build_plans, summarize
from anycdc.spark.scd2 import ENDS_SCHEMA, Scd2Applier
from anycdc.spark.sql_types import cast_sql
from anycdc.spark.table_schema import spark_ddl_type
from anycdc.spark.table_state import DueTable, TableState
from anycdc.spark.tombstones import Tombstones, table_tag

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

DEFAULT_RETAIN_HOURS: Final = 168.0
"""Delta's own default for how long a removed file is kept (VACUUM's retention)."""
BROADCAST_ROWS: Final = 500_000
"""Up to this many pending rows a read sends its folded actions to every task of the
table's scan (no shuffle of the table: :meth:`TableApplier.rewritten`'s ``broadcast``)."""
TRANSACTION_MARKERS: Final = (Op.BEGIN.value, Op.COMMIT.value)
"""The ``op`` of the changelog rows that mark a source transaction's boundaries."""
WALK_FIRST: Final = 64
"""How many of a table's newest commits a cut's version is first looked for in."""

LOOKUPS_KEPT: Final = 256
"""How many look-up answers (:class:`_Lookups`) a process keeps, the least recent dropped."""

_T = TypeVar("_T")


class _Lookups:
    """A read's look-ups (a target's tables, its open transactions, its ledger) by the
    version of the Delta table each one scans: a version never changes, so a later
    read of the same versions (the next ``read`` of a notebook, a view's, before the next
    ingest batch commits) takes the answer without a Spark job. Keyed by the table's path,
    its id (a table deleted and made again under the path has another) and its version;
    kept for the process, at most :data:`LOOKUPS_KEPT`.

    >>> kept = _Lookups(most=2)
    >>> kept.get(("p", "id", 3, "tables"), lambda: ["a"]), kept.get(("p", "id", 3, "tables"), list)
    (['a'], ['a'])
    >>> kept.get(("p", "id", 4, "tables"), lambda: ["a", "b"])
    ['a', 'b']
    """

    def __init__(self, most: int = LOOKUPS_KEPT) -> None:
        self._most = most
        self._kept: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()  # a read's look-ups run side by side

    def get(self, key: tuple[Any, ...], look_up: Callable[[], _T]) -> _T:
        """The answer kept under ``key``, else ``look_up()``'s, kept."""
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                answer: _T = self._kept[key]
                return answer
        found = look_up()  # outside the lock: the other look-ups go on meanwhile
        with self._lock:
            self._kept[key] = found
            while len(self._kept) > self._most:
                self._kept.popitem(last=False)
        return found


_LOOKUPS: Final = _Lookups()


def _at_once(first: Callable[[], _T], *others: Callable[[], Any]) -> tuple[_T, list[Any]]:
    """``first()`` and each of ``others`` at once (``others`` on threads of their own, as
    :func:`_inheriting`): a read's look-ups are small Spark jobs, each waiting mostly on the
    driver's planning, which they share the cores for side by side.

    >>> _at_once(lambda: 1, lambda: "two", lambda: 3.0)
    (1, ['two', 3.0])
    """
    with ThreadPoolExecutor(max(1, len(others)), thread_name_prefix="anycdc-read") as pool:
        later = [pool.submit(_inheriting(call)) for call in others]
        return first(), [f.result() for f in later]


def _inheriting(function: Callable[..., _T]) -> Callable[..., _T]:
    """``function`` to run on another thread with a copy of this thread's Spark local
    properties (the caller's job group, description and scheduler pool: cancelling the
    group cancels the read's jobs too). A copy per call, not pyspark's one shared object:
    Delta prefixes the description of each of its operations on the thread's own.

    >>> _inheriting(len)("abc")
    3
    """
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if context is None:  # no session: nothing to inherit
        return function
    properties = context._jsc.sc().getLocalProperties().clone()

    def run(*args: Any) -> _T:
        context._jsc.sc().setLocalProperties(properties.clone())
        return function(*args)

    return run


def collection_table(name: str, known: Sequence[TableIdent]) -> TableIdent | None:
    """The one table of ``known`` a transaction's data collection ``name`` names (None:
    none, or more than one): the name ends in the table's, and each dotted part before it
    is the table's database or schema (Debezium: ``inventory.orders`` of MySQL,
    ``public.orders`` of Postgres, ``shop.dbo.orders`` of SQL Server).

    >>> known = [("shop", "dbo", "orders"), ("shop", "dbo", "lines")]
    >>> collection_table("shop.dbo.orders", known), collection_table("dbo.orders", known)
    (('shop', 'dbo', 'orders'), ('shop', 'dbo', 'orders'))
    >>> collection_table("other.orders", known) is None
    True
    """
    found = [ident for ident in known if _names_table(name, ident)]
    return found[0] if len(found) == 1 else None


def _names_table(name: str, ident: TableIdent) -> bool:
    database, schema, table = ident
    if not table or not (name == table or name.endswith("." + table)):
        return False
    prefix = name[: -len(table) - 1] if name != table else ""
    return not prefix or all(part in (database, schema) for part in prefix.split("."))


@dataclass(frozen=True)
class Cut:
    """A point every table of the target can be read at: the end of an ingest batch."""

    batch: int
    """The ingest batch (the cut's id)."""
    rows: int
    """The changelog rows the batch added."""
    ingested_at_ms: int | None
    """When the batch was processed (``_anycdc/batches``)."""
    offsets: dict[str, dict[int, int]] = field(default_factory=dict)
    """Per source (topic or folder) and partition: the last offset read through the cut."""
    advanced: dict[str, dict[int, int]] = field(default_factory=dict)
    """The partitions the batch itself read from, and the last offset it read of each."""
    readable: bool = True
    """Every table's Delta version it needs is still in its log and not vacuumed."""
    why_not: str | None = None


@dataclass(frozen=True)
class ReadPoint:
    """Where a read starts and what it takes (:meth:`TargetReads.point`)."""

    cut: int | None
    """The changelog rows through this ingest batch (None: every one, the newest read)."""
    base: int | None
    """Each table's version: its last apply through this batch (None: its newest)."""
    held: frozenset[str] = frozenset()
    """The source transactions left out (open at the cut)."""


@dataclass(frozen=True)
class _Start:
    """Where a table's read starts: its version (None: no table yet) and the ingest batch
    its pending rows come after."""

    ident: TableIdent
    path: str
    version: int | None
    existing: DataFrame | None
    start: int


@dataclass(frozen=True)
class _Folding:
    """An SCD1 table whose pending rows are folded with the others' (:meth:`_fold_all`)."""

    start: _Start
    applier: Any
    types: dict[str, str]
    table: DataFrame
    spec: ActionSpec
    tag: str
    stamp: int
    through: int | None
    rows: int


class TargetLog:
    """What a target's logs say, without a Spark job where a Delta log answers: its tables,
    its cuts, each table's version at a cut, the ledger, the transactions open at a cut.

    ``config``: the run's configuration, its ``target`` that of the run to read.
    """

    def __init__(self, spark: SparkSession, config: PipelineConfig) -> None:
        from delta.tables import DeltaTable

        self.spark = spark
        self.config = config
        self.changelog_path = f"{config.system_dir}/changelog"
        if not DeltaTable.isDeltaTable(spark, self.changelog_path):
            raise ReadError(
                f"no anycdc run found under {config.target} (missing _anycdc/changelog)"
            )
        self.app_id = config.query_name + APPLY_APP
        self._delta = DeltaTables(spark)
        self._walks: dict[str, list[Commit]] = {}
        self._tables: list[TableIdent] | None = None
        self._tables_lock = threading.Lock()  # a read's look-ups run side by side

    # ------------------------------------------------------------------ what is there
    def changelog(self) -> DataFrame:
        return self.spark.read.format("delta").load(self.changelog_path)

    def _version_key(self, path: str) -> tuple[tuple[Any, ...], int] | None:
        """The look-up key of the table at ``path`` as it is now (path, id, version) and
        that version (a listing of its log, no job); None where there is no table."""
        snapshot = self._delta.snapshot(path)
        version = int(snapshot.version())
        if version < 0:
            return None
        return (path, str(snapshot.metadata().id()), version), version

    def _changelog_now(self) -> tuple[tuple[Any, ...], DataFrame]:
        """The changelog's look-up key (:meth:`_version_key`) and its rows at that version
        (the constructor found the table: it has one)."""
        now = self._version_key(self.changelog_path)
        if now is None:
            raise ReadError(f"no anycdc run found under {self.config.target}")
        key, version = now
        log = self.spark.read.format("delta").option("versionAsOf", version)
        return key, log.load(self.changelog_path)

    def tables(self) -> list[TableIdent]:
        """Every table the changelog has row changes or DDL of, that the run applies (one
        job the first time a version of the changelog is asked about in this process; a
        read takes them as of its start)."""
        with self._tables_lock:
            if self._tables is None:
                self._tables = self._find_tables()
            return list(self._tables)

    def _find_tables(self) -> list[TableIdent]:
        from pyspark.sql import functions as F

        key, log = self._changelog_now()

        def scan() -> list[TableIdent]:
            rows = (
                log.filter(F.expr(NAMES_A_TABLE) & F.col("op").isin(*PENDING_OPS))
                .select("database", "schema", "table")
                .distinct()
                .collect()
            )
            return [(r["database"], r["schema"], r["table"]) for r in rows]

        found = _LOOKUPS.get((*key, "tables"), scan)
        return sorted(
            (i for i in found if self.config.wants_table(qualified_name(i))),
            key=lambda i: [p or "" for p in i],
        )

    def newest_cut(self) -> int | None:
        """The newest ingest batch the changelog holds (None: none yet): the version of the
        run's idempotent appends to it (no Spark job), else its rows' newest batch."""
        from pyspark.sql import functions as F

        snapshot = self._delta.snapshot(self.changelog_path)
        txns = self._delta.transactions(snapshot)
        if self.config.query_name in txns:
            return txns[self.config.query_name]
        row = self.changelog().agg(F.max(INGEST_BATCH).alias("b")).first()
        return None if row is None or row["b"] is None else int(row["b"])

    def cut(self, at: int | None) -> int:
        """The cut ``at`` names (None: the newest), checked: one the changelog holds."""
        newest = self.newest_cut()
        if newest is None:
            raise ReadError(f"nothing ingested yet under {self.config.target}: no cut to read")
        if at is None:
            return newest
        if not 0 <= at <= newest:
            raise ReadError(f"cut {at}: the cuts are 0 to {newest} (anycdc cuts lists them)")
        return at

    def point(self, cut: int | None) -> ReadPoint:
        """Where a read of ``cut`` (None: the newest, every pending row) starts and what it
        leaves out: the source transactions open at the cut (:meth:`open_transactions`),
        and so the tables' versions of the applies before their first row."""
        newest = cut if cut is not None else self.newest_cut()
        if newest is None:
            return ReadPoint(cut, cut)
        held, first = self.open_transactions(newest)
        if first is None:
            return ReadPoint(cut, cut, held)
        return ReadPoint(newest, min(newest, first - 1), held)

    def open_transactions(self, cut: int) -> tuple[frozenset[str], int | None]:
        """The source transactions a read of ``cut`` leaves out, and the first ingest batch
        holding one of their rows (None: no row of theirs through the cut).

        A transaction is held back while the changelog has its BEGIN marker (``op``
        ``begin`` with its ``tx``, in any batch: a marker may come from another topic than
        its rows) and, through the cut, no COMMIT, or a COMMIT read ahead of some of its
        rows: one that says how many rows it had per table (``tx_table_events``, Debezium's
        ``data_collections``) where fewer are in for a table the changelog knows (a table
        no row of which was ever ingested is one the run does not read: not waited for).
        Either is held for up to ``hold_open_transactions`` batches after its BEGIN (a
        COMMIT, or a row, that never comes holds it no longer)."""
        hold = self.config.hold_open_transactions
        if hold <= 0:
            return frozenset(), None
        key, log = self._changelog_now()
        config = self.config
        key = (*key, "open", cut, hold, tuple(config.include), tuple(config.exclude))
        return _LOOKUPS.get(key, lambda: self._open_transactions(cut, hold, log))

    def _open_transactions(
        self, cut: int, hold: int, log: DataFrame
    ) -> tuple[frozenset[str], int | None]:
        """:meth:`open_transactions` from the changelog rows ``log``."""
        from pyspark.sql import functions as F

        batch, op = F.col(INGEST_BATCH), F.col("op")
        markers = log.filter(
            F.col("tx").isNotNull() & batch.isNotNull() & op.isin(*TRANSACTION_MARKERS)
        )
        per_tx = markers.groupBy("tx").agg(
            F.min(F.when(op == Op.BEGIN.value, batch)).alias("began"),
            F.min(F.when(op == Op.COMMIT.value, batch)).alias("ended"),
        )
        held_window = per_tx.filter(
            F.col("began").isNotNull() & (F.col("began") > F.lit(cut - hold))
        )
        began = held_window.collect()
        if not began:  # no transaction began in the window: none is held (one job)
            return frozenset(), None
        held = frozenset(str(r["tx"]) for r in began if r["ended"] is None or int(r["ended"]) > cut)
        held |= self._read_ahead(cut, log, markers, held_window)
        if not held:
            return held, None
        first = (
            log.filter(F.col("tx").isin(*sorted(held)) & (batch <= F.lit(cut)))
            .agg(F.min(batch).alias("first"))
            .first()
        )
        return held, None if first is None or first["first"] is None else int(first["first"])

    def _read_ahead(
        self, cut: int, log: DataFrame, markers: DataFrame, window: DataFrame
    ) -> frozenset[str]:
        """The transactions of ``window`` whose COMMIT through ``cut`` says how many rows
        they had per table (:data:`~anycdc.event.TX_TABLE_EVENTS`) and fewer of them are
        in through ``cut`` for a table the changelog knows (:func:`collection_table`). No
        job beyond a scan of the markers where no COMMIT says so (every format but
        Debezium's, and changelogs written before the column was kept)."""
        from pyspark.sql import functions as F

        if TX_TABLE_EVENTS not in markers.columns:
            return frozenset()
        batch, op = F.col(INGEST_BATCH), F.col("op")
        counted = markers.filter(
            (op == Op.COMMIT.value) & (batch <= F.lit(cut)) & F.col(TX_TABLE_EVENTS).isNotNull()
        ).select("tx", F.explode(TX_TABLE_EVENTS).alias("collection", "expected"))
        names = [r["collection"] for r in counted.select("collection").distinct().collect()]
        if not names:
            return frozenset()
        known = self.tables()
        matched = [(n, *ident) for n in names if (ident := collection_table(n, known))]
        if not matched:
            return frozenset()
        tables = local_frame(
            self.spark, matched, "collection STRING, database STRING, schema STRING, table STRING"
        )
        expected = counted.join(window.select("tx"), "tx").join(F.broadcast(tables), "collection")
        got = (
            log.filter(
                F.col("tx").isNotNull()
                & (batch <= F.lit(cut))
                & op.isin(*PENDING_OPS)
                & ~op.isin(*TRANSACTION_MARKERS)
            )
            .groupBy("tx", "database", "schema", "table")
            .agg(F.count(F.lit(1)).alias("got"))
        )
        same = [
            expected["tx"] == got["tx"],
            expected["database"].eqNullSafe(got["database"]),
            expected["schema"].eqNullSafe(got["schema"]),
            expected["table"].eqNullSafe(got["table"]),
        ]
        short = expected.join(got, same, "left_outer").filter(
            F.coalesce(got["got"], F.lit(0)) < expected["expected"]
        )
        return frozenset(str(r["tx"]) for r in short.select(expected["tx"]).distinct().collect())

    # ------------------------------------------------------------------ versions
    def ledger_through(self, cut: int | None) -> dict[TableIdent, int]:
        """The ingest batch the ledger says each table is applied through, at ``cut`` (one
        read of the ledger for every table a read takes; none where this process read the
        same version of the ledger for the same cut before)."""
        from pyspark.sql import functions as F

        path = f"{self.config.system_dir}/applied"
        now = self._version_key(path)
        if now is None:
            return {}
        query = self.config.query_name

        def look_up() -> dict[TableIdent, int]:
            frame = (
                self.spark.read.format("delta")
                .option("versionAsOf", now[1])
                .load(path)
                .filter((F.col("query") == query) & F.col("source_table").isNotNull())
            )
            if cut is not None:
                frame = frame.filter(F.col("through") <= cut)
            rows = frame.groupBy("database", "schema", "source_table").agg(
                F.max("through").alias("t")
            )
            return {
                (r["database"], r["schema"], r["source_table"]): int(r["t"]) for r in rows.collect()
            }

        return dict(_LOOKUPS.get((*now[0], "ledger", query, cut), look_up))

    def version(self, path: str, cut: int | None) -> tuple[int | None, int]:
        """The version of the table at ``path`` a read at ``cut`` starts from, and the
        ingest batch it is applied through (-1: none); (None, -1) where it has no such
        version (no table yet, or none applied through the cut)."""
        snapshot = self._delta.snapshot(path)
        newest = int(snapshot.version())
        if newest < 0:
            return None, -1
        if cut is None:
            txns = self._delta.transactions(snapshot)
            return newest, txns.get(self.app_id, -1)
        commits = self._walk(path, newest, cut)
        applies = [c for c in commits if c.txn is not None]
        before = [c for c in applies if c.txn is not None and c.txn <= cut]
        if not before:
            return None, -1
        last = before[-1]
        return last.version, int(last.txn or -1)

    def _walk(self, path: str, newest: int, cut: int) -> list[Commit]:
        """The table's commits from the newest back to (at least) the last apply through
        ``cut`` or the first commit, oldest first (from its log's JSON: no Spark job)."""
        known = self._walks.get(path)
        if known and known[-1].version == newest and self._settled(known, cut):
            return known
        start = max(0, newest - WALK_FIRST)
        while True:
            commits = self._commits(path, start, newest)
            if start == 0 or self._settled(commits, cut):
                self._walks[path] = commits
                return commits
            start = max(0, start - 4 * (newest - start + 1))

    def _settled(self, commits: list[Commit], cut: int) -> bool:
        """Whether ``commits`` (a window of the newest) hold the last apply through ``cut``."""
        return any(c.txn is not None and c.txn <= cut for c in commits)

    def _commits(self, path: str, start: int, newest: int) -> list[Commit]:
        """Versions ``start`` to ``newest``: each one's apply batch and commit time."""
        try:
            return self._delta.commits(path, start, newest, self.app_id)
        except LookupError as exc:
            raise ReadError(str(exc)) from None

    def properties(self, path: str, version: int | None) -> dict[str, str]:
        """The table's properties at ``version`` (none before it exists): from its newest
        snapshot where that is the version (no job), else its log read at the version."""
        if version is None:
            return {}
        snapshot = self._delta.snapshot(path)
        if int(snapshot.version()) == version:
            return self._delta.properties(snapshot)
        rows = self.spark.sql(show_properties_sql(delta_ref(f"{path}@v{version}"))).collect()
        return {str(r["key"]): str(r["value"]) for r in rows}

    # ------------------------------------------------------------------ cuts
    def cuts(self, tables: Sequence[TableIdent] | None = None) -> list[Cut]:
        """Every cut the changelog holds, oldest first, with whether it is still readable
        (each table's Delta version for it in its log, and not superseded longer ago than
        the VACUUM retention: ``vacuum_retain_hours``, else Delta's 7 days)."""
        from delta.tables import DeltaTable
        from pyspark.sql import functions as F

        log = self.changelog().filter(F.col(INGEST_BATCH).isNotNull())
        per_partition = (
            log.groupBy(INGEST_BATCH, "source", "partition")
            .agg(F.count(F.lit(1)).alias("rows"), F.max("offset").alias("offset"))
            .collect()
        )
        rows: dict[int, int] = {}
        ends: dict[int, dict[tuple[str, int], int]] = {}
        for r in per_partition:
            batch = int(r[INGEST_BATCH])
            rows[batch] = rows.get(batch, 0) + int(r["rows"])
            ends.setdefault(batch, {})[(str(r["source"]), int(r["partition"]))] = int(r["offset"])
        processed: dict[int, int] = {}
        batches = f"{self.config.system_dir}/batches"
        if DeltaTable.isDeltaTable(self.spark, batches):
            for r in (
                self.spark.read.format("delta").load(batches)
                .filter(F.col("table").isNull())
                .select("batch_id", "processed_at")
                .collect()
            ):  # fmt: skip
                if r["processed_at"] is not None:
                    processed[int(r["batch_id"])] = int(r["processed_at"].timestamp() * 1000)
        idents = self.tables() if tables is None else list(tables)
        retain_ms = (self.config.vacuum_retain_hours or DEFAULT_RETAIN_HOURS) * 3600 * 1000
        now_ms = time.time() * 1000
        found = []
        through: dict[tuple[str, int], int] = {}
        for batch in sorted(rows):
            for key, offset in ends[batch].items():
                through[key] = max(offset, through.get(key, -1))
            why = self._unreadable(idents, batch, retain_ms, now_ms)
            found.append(
                Cut(
                    batch,
                    rows[batch],
                    processed.get(batch),
                    _by_source(through),
                    _by_source(ends[batch]),
                    why is None,
                    why,
                )
            )
        return found

    def _unreadable(
        self, idents: Sequence[TableIdent], cut: int, retain_ms: float, now_ms: float
    ) -> str | None:
        """Why the cut can no longer be read (None: it can)."""
        for ident in idents:
            path = self.config.table_path(*ident)
            try:
                version, _ = self.version(path, cut)
            except ReadError as exc:
                return f"{qualified_name(ident)}: {exc}"
            if version is None:
                continue
            commits = self._walks.get(path, [])
            later = [c for c in commits if c.version == version + 1]
            if later and later[0].at_ms is not None and now_ms - later[0].at_ms > retain_ms:
                return f"{qualified_name(ident)}: version {version} may be vacuumed"
        return None


class TargetReads:
    """Fresh and consistent reads of the tables of one target (see the module docstring).

    ``config``: the run's configuration (its keys, modes and names of tables matter to a
    read as they do to an apply); by default the defaults, with ``target``.
    """

    def __init__(
        self, spark: SparkSession, target: str, config: PipelineConfig | None = None
    ) -> None:
        base = config or PipelineConfig(target=target)
        if config is not None and config.target != PipelineConfig(target=target).target:
            base = config.with_overrides(target=PipelineConfig(target=target).target)
        self.spark = spark
        self.config = base
        self.log = TargetLog(spark, base)

    # ------------------------------------------------------------------ what is there
    def tables(self) -> list[TableIdent]:
        """Every table the changelog has row changes or DDL of, that the run applies."""
        return self.log.tables()

    def newest_cut(self) -> int | None:
        """The newest ingest batch the changelog holds (:meth:`TargetLog.newest_cut`)."""
        return self.log.newest_cut()

    def cut(self, at: int | None) -> int:
        """The cut ``at`` names (None: the newest), checked (:meth:`TargetLog.cut`)."""
        return self.log.cut(at)

    def cuts(self, tables: Sequence[TableIdent] | None = None) -> list[Cut]:
        """Every cut the changelog holds (:meth:`TargetLog.cuts`)."""
        return self.log.cuts(tables)

    def open_transactions(self, cut: int) -> tuple[frozenset[str], int | None]:
        """The source transactions a read of ``cut`` leaves out
        (:meth:`TargetLog.open_transactions`)."""
        return self.log.open_transactions(cut)

    def resolve(self, name: str, known: Sequence[TableIdent] | None = None) -> TableIdent:
        """The table called ``name`` (``db.table``, ``db.schema.table``, or the table's
        own name where only one table has it)."""
        known = self.log.tables() if known is None else known
        exact = [i for i in known if qualified_name(i) == name]
        if not exact:
            exact = [i for i in known if qualified_name(i).lower() == name.lower()]
        if not exact:
            exact = [i for i in known if i[2] == name]
        if len(exact) == 1:
            return exact[0]
        listed = exact or known
        names = ", ".join(qualified_name(i) for i in listed[:8]) or "none"
        if len(listed) > 8:
            names += f", ... {len(listed)} in all"
        if exact:
            raise ReadError(f"{name}: more than one table has that name ({names})")
        raise ReadError(f"{name}: no such table in {self.config.target} (tables: {names})")

    # ------------------------------------------------------------------ reads
    def read(self, name: str | TableIdent, at: int | None = None) -> DataFrame:
        """The table ``name`` as of the newest ingested batch (``at``: as of the cut
        ``at``), its pending changes folded in; the columns of the Delta table."""
        cut = None if at is None else self.log.cut(at)
        ident, (point, ledger) = _at_once(
            lambda: name if isinstance(name, tuple) else self.resolve(name),
            lambda: self.log.point(cut),
            lambda: self.log.ledger_through(cut),
        )
        if point.base != cut:  # held transactions: the tables as of an earlier apply
            ledger = self.log.ledger_through(point.base)
        stamp = point.cut if point.cut is not None else self.log.newest_cut()
        return self._read(ident, point, stamp, ledger)

    def read_many(
        self, names: Iterable[str | TableIdent] | None = None, at: int | None = None
    ) -> dict[str, DataFrame]:
        """Every table of ``names`` (None: all of the target's) as of the same cut: ``at``,
        or the newest. Keyed by each table's qualified name."""
        cut = self.log.cut(at)
        known, (point, ledger) = _at_once(
            self.log.tables, lambda: self.log.point(cut), lambda: self.log.ledger_through(cut)
        )
        wanted = known if names is None else [
            n if isinstance(n, tuple) else self.resolve(n, known) for n in names
        ]  # fmt: skip
        if point.base != cut:  # held transactions: the tables as of an earlier apply
            ledger = self.log.ledger_through(point.base)
        read = self._read_all(wanted, point, cut, ledger)
        return {qualified_name(i): read[i] for i in wanted}

    def _read(
        self,
        ident: TableIdent,
        point: ReadPoint,
        stamp: int | None,
        ledger: dict[TableIdent, int],
    ) -> DataFrame:
        """One table at ``point`` (:meth:`_read_all`)."""
        return self._read_all([ident], point, stamp, ledger)[ident]

    def _read_all(
        self,
        idents: Sequence[TableIdent],
        point: ReadPoint,
        stamp: int | None,
        ledger: dict[TableIdent, int],
    ) -> dict[TableIdent, DataFrame]:
        """The tables ``idents`` at ``point`` (:meth:`TargetLog.point`); ``stamp``: the ingest batch
        their folded rows carry as ``_cdc_batch``; ``ledger``: what the ledger says each
        table is applied through by the point's base (:meth:`TargetLog.ledger_through`).

        Their pending rows are one slice of the changelog (each table's rows after its own
        start), summarized by one job and folded by one plan for every table, as an apply
        round folds its due tables; each table is then its version with its folded rows."""
        from pyspark.sql import functions as F

        starts: list[_Start] = []
        for ident in idents:
            path = self.config.table_path(*ident)
            version, txn = self.log.version(path, point.base)
            existing = None
            if version is not None:
                existing = self.spark.read.format("delta").option("versionAsOf", version).load(path)
            starts.append(_Start(ident, path, version, existing, max(txn, ledger.get(ident, -1))))
        spec = local_frame(
            self.spark,
            [(*s.ident, s.start) for s in starts],
            "_r_database STRING, _r_schema STRING, _r_table STRING, _r_start BIGINT",
        )
        log = self.log.changelog()
        batch = F.col(INGEST_BATCH)
        mine = (
            log["database"].eqNullSafe(spec["_r_database"])
            & log["schema"].eqNullSafe(spec["_r_schema"])
            & (log["table"] == spec["_r_table"])
            & (batch > spec["_r_start"])
        )
        if point.cut is not None:
            mine = mine & (batch <= F.lit(point.cut))
        if point.held:
            mine = mine & ~F.coalesce(F.col("tx").isin(*sorted(point.held)), F.lit(False))
        # the messages stay behind (a dead letter is the apply's, not a read's); the slice is
        # kept while the plan job and the fold both read it
        pending = log.join(F.broadcast(spec), mine, "left_semi").drop("raw", "kafka_key").persist()
        try:
            # the apply's session settings (partial images overlaid by map_concat, the newer
            # value winning) while the fold runs: it is kept (checkpointed) before they go
            with apply_settings(self.spark, self.config):
                return self._fold_all(starts, pending, point.cut, stamp)
        finally:
            pending.unpersist()

    def _fold_all(
        self, starts: list[_Start], pending: DataFrame, cut: int | None, stamp: int | None
    ) -> dict[TableIdent, DataFrame]:
        """Each table's version with its ``pending`` rows folded in (see the module
        docstring, steps 3): the plan, then per table the dry schema step, then the row
        actions, the fold and the tombstones of every SCD1 table in one plan."""
        from pyspark.sql import functions as F

        config = self.config
        summaries = summarize(pending)
        plans = build_plans(summaries, config)
        read: dict[TableIdent, DataFrame] = {}
        folding: list[_Folding] = []
        for item in starts:
            ident, existing = item.ident, item.existing
            qualified = qualified_name(ident)
            plan = plans.get(ident)
            if plan is None or not config.wants_table(plan.qualified):
                if existing is None:
                    raise ReadError(f"{qualified}: no rows of it were applied or are pending")
                read[ident] = existing
                continue
            applier = APPLIERS[config.table_settings(ident).mode](self.spark, config, plan)
            schema = applier.schema
            fields = list(existing.schema.fields) if existing is not None else None
            try:
                types = schema.planned(fields)
            except IncompatibleSchema:
                # the apply dead-letters these events: the table stays as it is
                if existing is None:
                    raise ReadError(
                        f"{qualified}: its pending changes cannot make a table"
                    ) from None
                read[ident] = existing
                continue
            if existing is None and not plan.has_rows:
                raise ReadError(f"{qualified}: no rows of it were applied or are pending")
            at = stamp if stamp is not None else item.start
            through = None if cut is None else item.start
            if isinstance(applier, Scd2Applier):
                read[ident] = self._fold_history(applier, pending, existing, types, through, at)
                continue
            floor = schema.truncate_position(self.log.properties(item.path, item.version))
            table = self._as_planned(existing, schema)
            if plan.truncate_position and (floor is None or plan.truncate_position > floor):
                table = table.where(after_truncate_sql(plan.truncate_position))
                floor = plan.truncate_position
            tag = table_tag(len(folding))
            spec = DueTable(applier, TableState(schema.columns), types, floor=floor).action_spec(
                tag
            )
            rows = sum(s.rows for s in summaries if s.ident == ident)
            folding.append(_Folding(item, applier, types, table, spec, tag, at, through, rows))
        if not folding:
            return read
        actions = round_actions(self.spark, pending, [f.spec for f in folding])
        good = actions.filter(F.col("_bad").isNull()).drop("_bad")
        store = Tombstones(self.spark, config)
        tables = store.table_ids([f.start.path for f in folding], [f.through for f in folding])
        folded = store.guard(fold_actions(good, by=("_t", "_key")), tables)
        # folded once, now (as an apply round does): each table's read meets its actions up
        # to three times (the rows, the keys they match, the inserts), and a query of the
        # read runs later, outside the apply's settings the fold needs
        folded = folded.localCheckpoint(eager=True)

        def rewritten(f: _Folding) -> DataFrame:
            mine = folded.filter(F.col("_t") == F.lit(f.tag)).drop("_t")
            staged = f.applier.staged(mine, f.types, f.stamp, True)
            small = f.rows <= BROADCAST_ROWS
            frame: DataFrame = f.applier.rewritten(f.table, staged, f.types, broadcast=small)
            return frame

        # each table's inserts are found by a small job of its own (a scan of its keys),
        # mostly the driver's planning: a few tables at a time, as an apply round writes
        workers = min(config.max_concurrent_tables, len(folding))
        with ThreadPoolExecutor(workers, thread_name_prefix="anycdc-read") as pool:
            frames = pool.map(_inheriting(rewritten), folding)
            read.update((f.start.ident, frame) for f, frame in zip(folding, frames, strict=True))
        return read

    def _fold_history(
        self,
        applier: Scd2Applier,
        pending: DataFrame,
        existing: DataFrame | None,
        types: dict[str, str],
        through: int | None,
        stamp: int,
    ) -> DataFrame:
        """An SCD2 history table: ``existing`` with the touched keys' rows replaced by their
        history recomputed (:meth:`~anycdc.spark.scd2.Scd2Applier.history`, the apply's own)
        from the ``pending`` rows' versions and end markers (the TRUNCATEs among them) and
        the end markers the applies through ``through`` stored (None: all; later applies
        add to them); ``stamp``: the ``_cdc_batch`` of the versions the read adds."""
        from pyspark.sql import functions as F

        schema = applier.schema
        table = self._as_planned(existing, schema)
        spec = DueTable(applier, TableState(schema.columns), types).action_spec(table_tag(0))
        actions = round_actions(self.spark, pending, [spec])
        good = actions.filter(F.col("_bad").isNull()).drop("_t", "_bad")
        changes = applier.changes(good, types, stamp)
        history = applier.history(table, changes, self._stored_ends(applier, through), types)
        columns = [q(c) for c in history.columns]
        rows = history.rows.select(*columns)
        if history.touched is None:  # a truncate among them: every key's history is there
            return rows
        kept = table.join(history.touched, "_cdc_key", "left_anti").select(*columns)
        return kept.unionByName(rows)

    def _stored_ends(self, applier: Scd2Applier, through: int | None) -> DataFrame:
        """The end markers the table's applies through ``through`` stored (None: all); none
        before the table's first apply."""
        from delta.tables import DeltaTable
        from pyspark.sql import functions as F

        if not DeltaTable.isDeltaTable(self.spark, applier.ends_path):
            return local_frame(self.spark, [], ENDS_SCHEMA)
        ends = self.spark.read.format("delta").load(applier.ends_path)
        return ends if through is None else ends.filter(F.col("batch") <= F.lit(through))

    def _as_planned(self, existing: DataFrame | None, schema: Any) -> DataFrame:
        """The rows of ``existing`` (None: no table yet) in the columns the dry schema step
        left (:meth:`~anycdc.spark.table_schema.TableSchema.planned`): renamed, widened or
        rewritten through their text, new ones NULL, dropped ones gone."""
        if existing is None:
            columns = [named_sql(null_of_sql(kind), name) for name, kind in schema.columns.items()]
            return self.spark.range(0).selectExpr(*columns)
        had = {f.name: spark_ddl_type(f.dataType.simpleString()) for f in existing.schema.fields}
        columns = []
        for name, kind in schema.columns.items():
            origin = schema.carried.get(name, name)
            if origin not in had:
                value = null_of_sql(kind)
            elif name in schema.retyped:
                value = cast_sql(as_text_sql(origin), kind)
            elif had[origin] != spark_ddl_type(kind):
                value = converted_sql(origin, kind)
            else:
                value = q(origin)
            columns.append(named_sql(value, name))
        return existing.selectExpr(*columns)

    # ------------------------------------------------------------------ SQL
    def register_views(
        self,
        tables: Iterable[str | TableIdent] | None = None,
        fresh: bool = True,
        cut: int | None = None,
    ) -> dict[str, str]:
        """Temporary views of the tables (None: all of the target's): as of one cut (``cut``,
        else the newest) when ``fresh`` or ``cut`` is given, else as applied. Each view is
        named after its table (``database_table`` where two tables share a name); returns
        view name -> table."""
        known = self.log.tables()
        wanted = known if tables is None else [
            t if isinstance(t, tuple) else self.resolve(t, known) for t in tables
        ]  # fmt: skip
        if fresh or cut is not None:
            frames = self.read_many(wanted, cut)
        else:
            frames = {
                qualified_name(i): self.spark.read.format("delta").load(self.config.table_path(*i))
                for i in wanted
            }
        counts: dict[str, int] = {}
        for ident in wanted:
            counts[ident[2]] = counts.get(ident[2], 0) + 1
        views = {}
        for ident in wanted:
            name = ident[2] if counts[ident[2]] == 1 else "_".join(p for p in ident if p)
            frames[qualified_name(ident)].createOrReplaceTempView(q(name))
            views[name] = qualified_name(ident)
        return views


def _by_source(offsets: dict[tuple[str, int], int]) -> dict[str, dict[int, int]]:
    """``{(source, partition): offset}`` -> ``{source: {partition: offset}}``, in order.

    >>> _by_source({("t", 1): 9, ("t", 0): 4})
    {'t': {0: 4, 1: 9}}
    """
    nested: dict[str, dict[int, int]] = {}
    for (source, part), offset in sorted(offsets.items()):
        nested.setdefault(source, {})[part] = offset
    return nested


def read(
    spark: SparkSession,
    target: str,
    table: str,
    at: int | None = None,
    config: PipelineConfig | None = None,
) -> DataFrame:
    """The table ``table`` of the target as of the newest ingested batch (``at``: a cut),
    its pending changes folded in (:meth:`TargetReads.read`).

    >>> from anycdc.spark import read
    >>> read.__doc__.split()[:3]
    ['The', 'table', '``table``']
    """
    return TargetReads(spark, target, config).read(table, at)


def read_consistent(
    spark: SparkSession,
    target: str,
    tables: Iterable[str] | None = None,
    at: int | None = None,
    config: PipelineConfig | None = None,
) -> dict[str, DataFrame]:
    """The tables (None: all) as of one cut, the newest by default
    (:meth:`TargetReads.read_many`)."""
    return TargetReads(spark, target, config).read_many(tables, at)


def register_views(
    spark: SparkSession,
    target: str,
    tables: Iterable[str] | None = None,
    fresh: bool = True,
    cut: int | None = None,
    config: PipelineConfig | None = None,
) -> dict[str, str]:
    """Temporary views of the target's tables (:meth:`TargetReads.register_views`)."""
    return TargetReads(spark, target, config).register_views(tables, fresh, cut)


def cuts(spark: SparkSession, target: str, config: PipelineConfig | None = None) -> list[Cut]:
    """The target's cuts (:meth:`TargetReads.cuts`)."""
    return TargetReads(spark, target, config).cuts()


__all__ = ["Cut", "TargetReads", "cuts", "read", "read_consistent", "register_views"]
