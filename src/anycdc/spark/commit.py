"""Write a table's new rows and commit them through Delta's own transaction: the batched
apply engine's write (``apply_engine: batched``).

A Delta MERGE costs ~11 Spark jobs whatever it writes: the table's state is rebuilt
("Compute snapshot", 3 jobs), the files that hold the batch's keys are searched (5), the
rows rewritten (3). Per table and apply this module does the same work with one write job
and a commit that runs no job:

- **the table's state** (:class:`LogState`: its version, its live files, the versions of
  its idempotent writers) is read once per run, by one state reconstruction, and then
  followed commit by commit: the run's own commits give their actions, anyone else's are
  read from the log's JSON (``DeltaLog.getChanges``, no Spark job);
- **the write**: :meth:`DeltaTables.commit` starts delta-spark's
  ``OptimisticTransaction`` at the version the state is of, writes the caller's frame
  with ``txn.writeFiles`` (Delta's writer: its file statistics, column mapping, invariants)
  and commits the new files, the files they replace (``RemoveFile``) and the apply's
  ``SetTransaction`` (app id, version) in one commit. The commit, its checksum and its
  checkpoints are Delta's own code;
- **exactly once**: a commit whose (app id, version) the table already has is skipped, the
  rule Delta applies to a MERGE with ``txnAppId``/``txnVersion``, with the same ids, so a
  replay is skipped whichever engine wrote first;
- **another writer** (OPTIMIZE, a user's UPDATE, ``replay-dead-letters``): a transaction
  that rewrites files reads the whole table (``readWholeTable``), so Delta's conflict
  check refuses it when a commit came in between; :meth:`DeltaTables.commit` then reads
  the state again and retries once.

Nothing here writes a log file by hand: files, statistics, commits, checksums and
checkpoints are delta-spark's.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from anycdc.faults import crash_point
from anycdc.spark.maintenance import AUTO_COMPACT

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger("anycdc.commit")

DELTA: Final = "org.apache.spark.sql.delta"
REWRITE_PREDICATE: Final = "anycdc apply: rows of the replaced files rewritten with the changes"
CONFLICT_RETRIES: Final = 1
"""Commits retried from a fresh state after another writer's commit came in between."""
CHANGE_DATA_FEED: Final = "delta.enableChangeDataFeed"
AUTO_COMPACT_HOOK: Final = "Auto Compact"
"""The name of Delta's auto compaction post-commit hook (``PostCommitHook.name``)."""
AUTO_COMPACT_MIN_FILES: Final = "spark.databricks.delta.autoCompact.minNumFiles"
AUTO_COMPACT_SMALL_FILE: Final = "spark.databricks.delta.autoCompact.minFileSize"
SYSTEM_SMALL_FILE_BYTES: Final = 16 * 2**20
"""The size below which auto compaction folds a ``_anycdc`` table's files (Delta's default:
half its 128 MB target). Those tables are logs written once and read by range; the big
files a long micro-batch leaves (20-50 MB of changelog after an apply round of a sustained
run) were rewritten by the compaction that followed, 250-450 MB in 20-50 s stalls of a
300-second, 10,000 events/s run: only the small files of short batches are worth it."""


@dataclass
class LogState:
    """What the run knows of one table's Delta log at :attr:`version`.

    >>> LogState(3, {}, {"q:apply": 7}).applied("q:apply", 7)
    True
    """

    version: int
    files: dict[str, Any] = field(default_factory=dict)
    """Each live file's path (as the log names it) -> its ``AddFile`` (a JVM object)."""
    txns: dict[str, int] = field(default_factory=dict)
    """App id -> the last version it committed (``SetTransaction``)."""

    def applied(self, app_id: str, version: int) -> bool:
        """Whether the table already has the write ``(app_id, version)``."""
        return self.txns.get(app_id, -1) >= version

    @property
    def size_bytes(self) -> int:
        """The live files' bytes."""
        return sum(int(add.size()) for add in self.files.values())


class ConcurrentCommit(Exception):
    """Another writer committed to the table between the state read and the commit."""


@dataclass(frozen=True)
class Commit:
    """One commit of a table's log (:meth:`DeltaTables.commits`)."""

    version: int
    txn: int | None
    """The version the writer asked about wrote in it (an apply's: the batch it covers)."""
    at_ms: int | None
    """When it was committed (its commit info's time)."""


class DeltaTables:
    """delta-spark's ``DeltaLog`` / ``OptimisticTransaction`` over py4j, for the tables of
    one session (see the module docstring)."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        jvm = spark.sparkContext._jvm
        assert jvm is not None  # a live session has its JVM
        self.jvm: Any = jvm
        # the JVM classes of every commit, looked up once: py4j resolves a dotted name with
        # a round trip per segment (~1.2-1.6 ms a class), ~20 of them per table otherwise
        delta = jvm.org.apache.spark.sql.delta
        self._none = jvm.scala.Option.empty()
        self._some_of: Any = jvm.scala.Some
        self._long_of: Any = jvm.java.lang.Long.valueOf
        self._array_list: Any = jvm.java.util.ArrayList
        self._hash_map: Any = jvm.java.util.HashMap
        self._as_scala: Any = jvm.scala.jdk.javaapi.CollectionConverters.asScala
        self._to_scala_map: Any = jvm.org.apache.spark.api.python.PythonUtils.toScalaMap
        self._delta_log: Any = delta.DeltaLog
        self._metadata: Any = delta.actions.Metadata
        self._format: Any = delta.actions.Format
        self._set_transaction: Any = delta.actions.SetTransaction
        self._write: Any = getattr(delta, "DeltaOperations$Write")
        modes = jvm.org.apache.spark.sql.SaveMode
        self._modes: dict[str, Any] = {
            "create": modes.ErrorIfExists, "rewrite": modes.Overwrite, "append": modes.Append
        }  # fmt: skip

    def _some(self, value: Any) -> Any:
        return self._some_of(value)

    def delta_log(self, path: str) -> Any:
        return self._delta_log.forTable(self.spark._jsparkSession, path)

    def snapshot(self, path: str) -> Any:
        """The table's latest snapshot (a listing of its log; no Spark job)."""
        return self.delta_log(path).update(False, self._none, self._none)

    @staticmethod
    def transactions(snapshot: Any) -> dict[str, int]:
        """The versions of the table's idempotent writers at ``snapshot`` (app id -> version):
        from the checksum Delta wrote with that version, where it lists them (no Spark job),
        else from the table's state (``snapshot.transactions``: 3 jobs to rebuild it)."""
        known = _checksum_transactions(snapshot)
        if known is not None:
            return known
        return {str(k): int(v) for k, v in _scala_map_items(snapshot.transactions())}

    def commits(self, path: str, start: int, end: int, app_id: str) -> list[Commit]:
        """The table's commits ``start`` to ``end`` from its log's JSON (no Spark job): each
        one's version, the version ``app_id`` wrote in it (None: none) and its time. Raises
        ``LookupError`` where the log no longer holds one of them."""
        try:
            changes = self.delta_log(path).getChanges(start, self._none, True)
        except Exception as exc:  # cleaned up by log retention, or unreadable
            raise LookupError(f"{path}: its log no longer holds version {start} ({exc})") from None
        found = []
        expected = start
        while changes.hasNext():
            commit = changes.next()
            number = int(commit._1())
            if number > end:
                break
            if number != expected:
                raise LookupError(f"{path}: its log no longer holds version {expected}")
            txn = at_ms = None
            for action in _iterate(commit._2()):
                kind = _kind(action)
                if kind == "SetTransaction" and str(action.appId()) == app_id:
                    txn = int(action.version())
                elif kind == "CommitInfo":
                    at_ms = int(action.timestamp().getTime())
            found.append(Commit(number, txn, at_ms))
            expected = number + 1
        return found

    def append_once(self, path: str, frame: DataFrame, app_id: str, version: int) -> bool:
        """Append ``frame`` to the table at ``path`` once per ``(app_id, version)``, as
        Delta's writer does with ``txnAppId``/``txnVersion``, without the state
        reconstruction (3 Spark jobs, ~0.3-0.5 s) that the writer runs on every append to
        learn the app's version and the table's file count: both are read from the
        checksum Delta wrote with the newest version (``_delta_log/<version>.crc``).
        Returns False, having written nothing, where that checksum is missing or does not
        list the table's idempotent writers (Delta leaves them out past
        ``spark.databricks.delta.maxSetTransactionsInCrc``), or where ``frame``'s columns
        are not the table's (a schema change): the caller then writes with Delta's writer.
        True: appended, or skipped as a replay of a write the table has."""
        snapshot = self.snapshot(path)
        if int(snapshot.version()) < 0:
            return False
        known = _checksum_transactions(snapshot)
        if known is None or not _same_columns(frame, snapshot):
            return False
        if known.get(app_id, -1) >= version:
            return True  # a replay: the table has this write
        txn = self.delta_log(path).startTransaction(self._none, self._some(snapshot))
        files = int(snapshot.checksumOpt().get().numFiles())
        self._write_and_commit(txn, frame, [], app_id, version, kept=files, moment="appended")
        return True

    def txn_version(self, path: str, app_id: str) -> int:
        """The last version Delta's idempotent writes of ``app_id`` committed to the table
        at ``path`` (``txnAppId``/``txnVersion``); -1 when none did or there is no table."""
        snapshot = self.snapshot(path)
        if int(snapshot.version()) < 0:
            return -1
        return self.transactions(snapshot).get(app_id, -1)

    @staticmethod
    def properties(snapshot: Any) -> dict[str, str]:
        """The table's properties at ``snapshot`` (its metadata's configuration; no job)."""
        return {str(k): str(v) for k, v in _scala_map_items(snapshot.metadata().configuration())}

    @classmethod
    def change_feed(cls, snapshot: Any) -> bool:
        """Whether the table at ``snapshot`` records its change data feed: a rewrite must
        then write the feed's update and delete rows, which only the MERGE does (a rewrite's
        ``remove`` + ``add`` would read as every row deleted and inserted again)."""
        flag = cls.properties(snapshot).get(CHANGE_DATA_FEED, "")
        return flag.strip().lower() == "true"

    def state(self, path: str, known: LogState | None) -> tuple[Any, LogState]:
        """The latest snapshot and the state at its version: ``known`` brought up to date
        from the log's commits since, or (none known, or the log no longer has them) read
        whole (one state reconstruction)."""
        snapshot = self.snapshot(path)
        version = int(snapshot.version())
        if known is not None and known.version == version:
            return snapshot, known
        if known is not None and known.version < version:
            try:
                return snapshot, self._follow(path, known, version)
            except Exception as exc:  # commits cleaned up by log retention, a bad commit, ...
                log.info("%s: reading the table's state whole (%s)", path, exc)
        return snapshot, self._read_whole(snapshot)

    def _read_whole(self, snapshot: Any) -> LogState:
        files = {str(add.path()): add for add in _iterate(snapshot.allFiles().collectAsList())}
        return LogState(int(snapshot.version()), files, self.transactions(snapshot))

    def _follow(self, path: str, known: LogState, version: int) -> LogState:
        """``known`` with the actions of the commits after it, through ``version``."""
        files = dict(known.files)
        txns = dict(known.txns)
        changes = self.delta_log(path).getChanges(known.version + 1, self._none, True)
        last = known.version
        while changes.hasNext():
            commit = changes.next()
            number = int(commit._1())
            if number > version:
                break
            if number != last + 1:
                raise ValueError(f"the log skips from version {last} to {number}")
            for action in _iterate(commit._2()):
                _take_action(action, files, txns)
            last = number
        if last != version:
            raise ValueError(f"the log ends at version {last}, not {version}")
        return LogState(version, files, txns)

    def files_frame(self, snapshot: Any, state: LogState, paths: list[str]) -> Any:
        """A JVM DataFrame of the rows of the live files ``paths`` (Delta's own reader:
        column mapping, deletion vectors, widened types)."""
        chosen = self._array_list()
        for path in paths:
            chosen.add(state.files[path])
        seq = self._seq(chosen)
        return self.delta_log_of(snapshot).createDataFrame(snapshot, seq, False, self._none)

    @staticmethod
    def delta_log_of(snapshot: Any) -> Any:
        return snapshot.deltaLog()

    def commit(
        self,
        path: str,
        known: LogState | None,
        build: Callable[[Any, LogState], tuple[DataFrame | None, list[str]]],
        app_id: str,
        version: int,
        snapshot: Any = None,
    ) -> LogState:
        """One transaction on the table at ``path``: ``build(snapshot, state)`` returns the
        frame of the new rows (None: no rows) and the paths of the live files they replace;
        they are written and committed with ``SetTransaction(app_id, version)``. Returns
        the state after the commit (the same state when the table already had the write).
        ``snapshot``: the one ``known`` was brought up to (by :meth:`state` just before),
        so the first attempt does not list the log again; a commit made since is caught
        by Delta's conflict check like any other."""
        for attempt in range(CONFLICT_RETRIES + 1):
            if attempt == 0 and known is not None and snapshot is not None:
                state = known
            else:
                snapshot, state = self.state(path, known)
            if state.applied(app_id, version):
                return state  # written by an earlier attempt of this apply (a replay)
            try:
                return self._commit_once(path, snapshot, state, build, app_id, version)
            except ConcurrentCommit as exc:
                if attempt == CONFLICT_RETRIES:
                    raise
                log.info("%s: another writer committed meanwhile (%s); applying again", path, exc)
                known = None
        raise AssertionError("unreachable")

    def _commit_once(
        self,
        path: str,
        snapshot: Any,
        state: LogState,
        build: Callable[[Any, LogState], tuple[DataFrame | None, list[str]]],
        app_id: str,
        version: int,
    ) -> LogState:
        frame, replaced = build(snapshot, state)
        txn = self.delta_log(path).startTransaction(self._none, self._some(snapshot))
        removed = [state.files[name] for name in replaced]
        if removed:
            # the rows of these files were read: a concurrent change to the table conflicts
            txn.readWholeTable()
        kept = len(set(state.files) - set(replaced))
        committed, added = self._write_and_commit(txn, frame, removed, app_id, version, kept=kept)
        files = {k: v for k, v in state.files.items() if k not in set(replaced)}
        files.update(added)
        return LogState(committed, files, {**state.txns, app_id: version})

    def create(
        self,
        path: str,
        frame: DataFrame,
        properties: dict[str, str],
        app_id: str,
        version: int,
    ) -> LogState:
        """Create the table at ``path`` with ``frame``'s columns (all nullable), its
        ``properties`` and its rows in one commit (version 0) with ``SetTransaction(app_id,
        version)``: Delta's own metadata for a new table (protocol, column features)."""
        from uuid import uuid4

        from pyspark.sql.types import StructField, StructType

        snapshot = self.snapshot(path)
        if int(snapshot.version()) >= 0:
            raise ConcurrentCommit(f"{path}: the table was created meanwhile")
        schema = StructType(
            [StructField(f.name, f.dataType, True, f.metadata) for f in frame.schema]
        ).json()
        settings = self._hash_map()
        for key, value in properties.items():
            settings.put(key, value)
        to_map = self._to_scala_map
        metadata = self._metadata(
            str(uuid4()), None, None,
            self._format("parquet", to_map(self._hash_map())),
            schema, self._seq(self._array_list()), to_map(settings),
            self._some(self._long_of(int(time.time() * 1000))),
        )  # fmt: skip
        txn = self.delta_log(path).startTransaction(self._none, self._some(snapshot))
        txn.updateMetadataForNewTable(metadata)
        committed, added = self._write_and_commit(
            txn, frame, [], app_id, version, create=True, kept=0
        )
        return LogState(committed, added, {app_id: version})

    def _seq(self, items: Any) -> Any:
        return self._as_scala(items).toSeq()

    def _write_and_commit(
        self,
        txn: Any,
        frame: DataFrame | None,
        removed: list[Any],
        app_id: str,
        version: int,
        create: bool = False,
        kept: int = 0,
        moment: str = "written",
    ) -> tuple[int, dict[str, Any]]:
        """Write ``frame`` in ``txn`` (Delta's writer) and commit its files, the ``removed``
        ones' ``RemoveFile`` and ``SetTransaction(app_id, version)``; returns the version
        committed and the files added (path -> ``AddFile``). ``kept``: the table's live
        files the commit leaves in place (0 for a create or a rewrite of every file);
        ``moment``: the crash point between the write and the commit (the fault suite's)."""
        actions = self._array_list()
        added: dict[str, Any] = {}
        if frame is not None:
            for action in _iterate(txn.writeFiles(frame._jdf)):
                actions.add(action)
                if _is_add(action):
                    added[str(action.path())] = action
            if kept + len(added) < _min_compacted_files(frame.sparkSession):
                _skip_auto_compaction(txn)
        crash_point(moment)  # the fault suite's moment: files written, not committed
        now = int(time.time() * 1000)
        for add in removed:
            actions.add(add.removeWithTimestamp(self._long_of(now), True))
        actions.add(
            self._set_transaction(app_id, self._long_of(version), self._some(self._long_of(now)))
        )
        operation = self._write(
            self._modes["create" if create else "rewrite" if removed else "append"],
            self._none,
            self._some(REWRITE_PREDICATE) if removed else self._none,
            self._none, self._none, self._none, self._none, self._none, self._none,
        )  # fmt: skip
        try:
            return int(txn.commit(self._seq(actions), operation)), added
        except Exception as exc:
            if _is_conflict(exc):
                raise ConcurrentCommit(_first_line(exc)) from None
            raise


def _min_compacted_files(spark: SparkSession) -> int:
    """The file count from which Delta's auto compaction folds a table's small files
    (:data:`AUTO_COMPACT_MIN_FILES`, Delta's default 50), as the writing session has it."""
    try:
        return int(spark.conf.get(AUTO_COMPACT_MIN_FILES, "50") or 50)
    except ValueError:
        return 50


@contextmanager
def compaction_when_due(
    spark: SparkSession, path: str, tables: DeltaTables | None = None
) -> Iterator[None]:
    """A DataFrame writer's commit to ``path`` (``spark``'s) with Delta's auto compaction
    held off while the table has fewer live files than compaction needs (or does not exist
    yet): :func:`_skip_auto_compaction`'s rule for a commit that has no hook list to take
    the hook off, so the session's setting is off for the ``with`` block instead. Every
    ``_anycdc`` table's append takes it. ``tables``: the session's, when the caller keeps one.

    Delta compacts a table after its first commit in a JVM whatever its file count: every
    run's first append to the changelog rewrote the batch it had just written (~6 s for a
    200,000-event batch), and the first to each small ``_anycdc`` table planned a
    compaction that found nothing to do (~0.6 s warm, ~2.5 s the first time in a JVM). A
    table written both with and without the hold-off would meet that first compaction at
    its first write without it: all of its writes take it. Once the table has as many
    files as compaction needs, Delta decides as it does for every commit. The count is the
    checksum of the newest version the JVM knows of the table (``unsafeVolatileSnapshot``:
    no Spark job, and no listing of the log beyond the one a first look makes; a stale
    count only moves a compaction by a commit).

    Blocks on several threads of one session (an apply's dead letters beside its tables'
    commits) are counted: the setting is off while any is open, and put back when the last
    one closes. A table's own commit in that window keeps its hook only with many files
    (:func:`_skip_auto_compaction`), and then compacts at its next commit instead."""
    snapshot = (tables or DeltaTables(spark)).delta_log(path).unsafeVolatileSnapshot()
    files = int(snapshot.numOfFiles()) if int(snapshot.version()) >= 0 else 0
    if files >= _min_compacted_files(spark):
        yield
        return
    with _setting_held(spark, AUTO_COMPACT, "false"):
        yield


_HOLDS_LOCK: Final = threading.Lock()
_HELD: dict[tuple[int, str], tuple[int, str | None]] = {}
"""Per session (its JVM object's hash) and setting: the :func:`_setting_held` blocks open,
and the session's value before the first of them."""


@contextmanager
def _setting_held(
    spark: SparkSession, key: str, value: str, *, session_wins: bool = False
) -> Iterator[None]:
    """``spark``'s SQL setting ``key`` at ``value`` while any block holding it is open, and
    put back as it was when the last one closes. Delta reads its auto compaction settings
    from the session when a commit's hook runs, so a per-commit value has to be the
    session's; blocks on several threads of one session (an apply's dead letters beside its
    tables' commits) are counted. ``session_wins``: a value the session had before the
    first block (a user's ``--conf``) is kept, not held.

    >>> from unittest.mock import MagicMock
    >>> spark = MagicMock()
    >>> spark.conf.get.return_value = None
    >>> with _setting_held(spark, "k", "v"):
    ...     spark.conf.set.call_args.args
    ('k', 'v')
    >>> spark.conf.unset.call_args.args
    ('k',)
    """
    held = (int(spark._jsparkSession.hashCode()), key)
    ours = True
    with _HOLDS_LOCK:
        holds, before = _HELD.get(held, (0, None))
        if not holds:
            before = spark.conf.get(key, None)
            ours = not (session_wins and before is not None)
            if ours:
                spark.conf.set(key, value)
        if ours:
            _HELD[held] = (holds + 1, before)
    try:
        yield
    finally:
        if ours:
            with _HOLDS_LOCK:
                holds, before = _HELD.pop(held)
                if holds > 1:
                    _HELD[held] = (holds - 1, before)
                elif before is None:
                    spark.conf.unset(key)
                else:
                    spark.conf.set(key, before)


_SESSION_TABLES: dict[int, DeltaTables] = {}
"""Per session (its JVM object's hash): the :class:`DeltaTables` its appends share."""


def session_tables(spark: SparkSession) -> DeltaTables:
    """The session's :class:`DeltaTables` (made once: it looks up ~20 JVM classes)."""
    key = int(spark._jsparkSession.hashCode())
    with _HOLDS_LOCK:
        tables = _SESSION_TABLES.get(key)
        if tables is None or tables.spark is not spark:
            tables = _SESSION_TABLES[key] = DeltaTables(spark)
    return tables


def append_once(
    frame: DataFrame,
    path: str,
    app_id: str,
    version: int,
    merge_schema: bool = True,
    tables: DeltaTables | None = None,
    created_with: Mapping[str, str] | None = None,
) -> None:
    """Append ``frame`` to the Delta table at ``path`` once per ``(app_id, version)``: a
    replayed pair writes nothing. Every idempotent append to a ``_anycdc`` table (the
    changelog, the batch records, the ledger, the tombstones, the dead letters) is this.

    Where the checksum of the table's newest version has the app's version,
    :meth:`DeltaTables.append_once` writes and commits with no state rebuilt. Otherwise
    (a new table, a schema change, a log without checksums, another writer's commit in
    between) Delta's writer with ``txnAppId``/``txnVersion``, the reference, which rebuilds
    the table's state first (3 Spark jobs, ~0.3-0.5 s an append); ``merge_schema``: it adds
    the frame's new columns (a table written by an earlier anycdc). Its auto compaction
    waits until the table has the files for it (:func:`compaction_when_due`).
    ``created_with``: the table's properties, if this append creates it."""
    spark = frame.sparkSession
    tables = tables or session_tables(spark)
    with small_files_compacted(spark):
        try:
            if tables.append_once(path, frame, app_id, version):
                return
        except ConcurrentCommit:  # another writer's commit came first: Delta's writer decides
            pass
        # one writer at a time per table in this process: two of an apply's threads
        # dead-lettering into a dead_letter table not created yet would both create it, and
        # Delta refuses the second (ProtocolChangedException), which stopped the stream
        with _writer_lock(path):
            append_by_writer(frame, path, app_id, version, merge_schema, tables, created_with)


@contextmanager
def small_files_compacted(spark: SparkSession) -> Iterator[None]:
    """Auto compaction after a commit in the ``with`` block folds only files below
    :data:`SYSTEM_SMALL_FILE_BYTES` (every ``_anycdc`` append: :func:`append_once`), unless
    the session has a ``minFileSize`` of its own (a user's ``--conf``, kept)."""
    with _setting_held(
        spark, AUTO_COMPACT_SMALL_FILE, str(SYSTEM_SMALL_FILE_BYTES), session_wins=True
    ):
        yield


_WRITER_LOCKS_GUARD: Final = threading.Lock()
_WRITER_LOCKS: dict[str, threading.Lock] = {}


def _writer_lock(path: str) -> threading.Lock:
    """The lock of :func:`append_once`'s writer appends to ``path`` (one per table)."""
    with _WRITER_LOCKS_GUARD:
        return _WRITER_LOCKS.setdefault(path.rstrip("/"), threading.Lock())


def append_by_writer(
    frame: DataFrame,
    path: str,
    app_id: str | None,
    version: int | None,
    merge_schema: bool = True,
    tables: DeltaTables | None = None,
    created_with: Mapping[str, str] | None = None,
) -> None:
    """Delta's writer's append (the reference of :func:`append_once`; ``app_id`` None: not
    idempotent), its auto compaction held off while the table has few files.
    ``created_with``: table properties (``delta.*``) that Delta sets if the append creates
    the table, and ignores otherwise."""
    writer = frame.write.format("delta").mode("append").options(**(created_with or {}))
    if app_id is not None and version is not None:
        writer = writer.option("txnAppId", app_id).option("txnVersion", str(int(version)))
    if merge_schema:
        writer = writer.option("mergeSchema", "true")
    with compaction_when_due(frame.sparkSession, path, tables):
        writer.save(path)


def _skip_auto_compaction(txn: Any) -> None:
    """Take Delta's auto compaction off ``txn``'s post-commit hooks (``writeFiles`` put it
    there). Called for a commit that leaves the table fewer files than compaction needs
    (:func:`_min_compacted_files`): a create, a rewrite (coalesced to one file), an append
    to a table of few files. Delta would still run it once per table and JVM (a table not
    yet compacted in the JVM qualifies whatever its file count), rebuilding the new
    version's state to find next to nothing to fold: 4 Spark jobs and ~1 s per table and
    run. A commit that leaves the table many files keeps it. A Delta whose transaction has
    no such buffer keeps its hooks (slower, not wrong)."""
    try:
        hooks = txn.postCommitHooks()
        for index in reversed(range(int(hooks.size()))):
            if str(hooks.apply(index).name()) == AUTO_COMPACT_HOOK:
                hooks.remove(index)
    except Exception as exc:  # py4j: a Delta version without the buffer or the name
        log.debug("auto compaction left on: %s", _first_line(exc))


def _checksum_transactions(snapshot: Any) -> dict[str, int] | None:
    """The idempotent writers' versions (app id -> version) the checksum of ``snapshot``'s
    version lists; None where it has no checksum or leaves them out."""
    checksum = snapshot.checksumOpt()
    if checksum.isEmpty():
        return None
    known = checksum.get().setTransactions()
    if known.isEmpty():
        return None
    return {str(t.appId()): int(t.version()) for t in _iterate(known.get())}


def _same_columns(frame: DataFrame, snapshot: Any) -> bool:
    """Whether ``frame`` has the columns of the table at ``snapshot``, in its order, with
    its types (nullability aside): what an append needs no schema change for."""
    from pyspark.sql.types import StructType

    table = StructType.fromJson(json.loads(str(snapshot.schema().json())))
    return [(f.name, f.dataType) for f in frame.schema] == [(f.name, f.dataType) for f in table]


def _iterate(collection: Any) -> Iterator[Any]:
    """The items of a JVM collection (a Scala ``Seq`` or a ``java.util.List``)."""
    iterator = collection.iterator()
    while iterator.hasNext():
        yield iterator.next()


def _scala_map_items(mapping: Any) -> Iterator[tuple[Any, Any]]:
    iterator = mapping.iterator()
    while iterator.hasNext():
        pair = iterator.next()
        yield pair._1(), pair._2()


def _kind(action: Any) -> str:
    return str(action.getClass().getSimpleName())


def _is_add(action: Any) -> bool:
    return _kind(action) == "AddFile"


def _take_action(action: Any, files: dict[str, Any], txns: dict[str, int]) -> None:
    """Fold one logged action into a state's files and transactions."""
    kind = _kind(action)
    if kind == "AddFile":
        files[str(action.path())] = action
    elif kind == "RemoveFile":
        files.pop(str(action.path()), None)
    elif kind == "SetTransaction":
        txns[str(action.appId())] = int(action.version())


def _is_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` is Delta's refusal of a commit that another one beat (a
    ``ConcurrentModificationException``: raw from py4j, or as delta-spark's Python package
    converts it once ``delta`` is imported)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    java = getattr(exc, "java_exception", None)
    while java is not None:
        names.add(str(java.getClass().getSimpleName()))
        java = java.getCause()
    text = str(exc)
    return (
        any(name.startswith("Concurrent") or name.endswith("ChangedException") for name in names)
        or "DeltaConcurrentModificationException" in names
        or "ConcurrentModificationException" in text
        or "[DELTA_CONCURRENT_" in text
        or "[DELTA_METADATA_CHANGED]" in text
        or "[DELTA_PROTOCOL_CHANGED]" in text
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


__all__ = ["ConcurrentCommit", "DeltaTables", "LogState", "append_by_writer", "append_once"]
