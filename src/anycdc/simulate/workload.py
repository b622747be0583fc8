"""The canonical stream: :class:`Workload` plays a source database, once per seed and
independent of the format, and keeps the ground truth."""

from __future__ import annotations

import base64
import datetime as dt
import itertools
import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import partial
from typing import Any, Final

from anycdc.event import ChangeEvent, Column, Op, Position, dumps
from anycdc.simulate.profiles import (
    FORMAT_PROFILES,
    FormatProfile,
    adapt_column,
    format_profile,
    value_converter,
)
from anycdc.simulate.tables import (
    ACTIONS,
    FIRST_NAMES,
    JSON_DOCS,
    PROFILES,
    STATUSES,
    TRICKY_TEXT,
    TableSpec,
    col,
    many_tables,
    rename_columns,
)

# --------------------------------------------------------------------------- the canonical stream
ROW: Final = "row"
DDL: Final = "ddl"
TRUNCATE: Final = "truncate"
TRUNCATE_FALLBACK: Final = "truncate-fallback"  # a delete standing in for a TRUNCATE
MARKER: Final = "marker"
HEARTBEAT: Final = "heartbeat"


@dataclass(frozen=True, slots=True)
class _Step:
    """One canonical event and what it is (formats keep or drop steps by role)."""

    event: ChangeEvent
    role: str


@dataclass(frozen=True, slots=True)
class _Plan:
    """A format's view of one schema: adapted columns, per-column value conversion."""

    columns: dict[str, Column]
    steps: dict[str, Callable[[Any], Any] | None]
    identity: bool


@dataclass
class _TableState:
    """A table's current schema and rows (keyed, or by a private row id when keyless).

    ``idents`` lists the row identities in an order that only changes by swap-removal, so
    picking a row (and a hot one: the first fifth) is O(1) at any table size.
    """

    spec: TableSpec
    rows: dict[Any, dict[str, Any]] = field(default_factory=dict)
    idents: list[Any] = field(default_factory=list)
    where: dict[Any, int] = field(default_factory=dict)

    def put(self, ident: Any, row: dict[str, Any]) -> None:
        if ident not in self.rows:
            self.where[ident] = len(self.idents)
            self.idents.append(ident)
        self.rows[ident] = row

    def pop(self, ident: Any) -> dict[str, Any]:
        index = self.where.pop(ident)
        last = self.idents.pop()
        if index < len(self.idents):
            self.idents[index] = last
            self.where[last] = index
        return self.rows.pop(ident)

    def clear(self) -> None:
        self.rows.clear()
        self.idents.clear()
        self.where.clear()


class Workload:
    """A deterministic source database's change stream and its ground truth.

    Parameters
    ----------
    seed: random seed (same seed, same source history, whatever the format).
    rows: rows per table in the snapshot.
    events: incremental row changes after the snapshot (markers, heartbeats, DDL and
        TRUNCATE come on top).
    database: the source database name.
    tables: how many tables (the profile's shapes, repeated with a number suffix).
    profile: ``shop`` (the demo's three tables) or ``rich`` (see the module docstring).
    keyless_duplicates: let tables without a key hold identical rows (a row twice in the
        source must be twice in the target); off by default: identical rows collapse in
        the pipeline today (:data:`PIPELINE_GAPS`, ``keyless-duplicates``).
    avoid_gaps: leave out what the pipeline cannot apply yet (:data:`PIPELINE_GAPS`), so
        that the truth is what a correct run ends with. False generates them too: for a
        pipeline that has been fixed, and for the reproductions.
    skew: how unevenly the tables change (a Zipf exponent): the table at index i (in
        :attr:`tables` order) takes a share of the row changes proportional to
        ``1 / (i + 1) ** skew``; 0 (default): every table alike. With 200 tables, 1.5 gives
        the first 10 about 80% of the changes (a source database's few hot tables).
    """

    def __init__(
        self,
        seed: int = 0,
        rows: int = 20,
        events: int = 200,
        database: str = "shop",
        tables: int = 3,
        profile: str = "shop",
        keyless_duplicates: bool = False,
        avoid_gaps: bool = True,
        skew: float = 0.0,
    ) -> None:
        if profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r}; choose from {', '.join(PROFILES)}")
        self.seed = seed
        self.rows = rows
        self.event_count = events
        self.database = database
        self.table_count = tables
        self.profile = profile
        self.keyless_duplicates = keyless_duplicates
        self.avoid_gaps = avoid_gaps
        if skew < 0:
            raise ValueError(f"skew must be 0 or more, not {skew}")
        self.skew = skew
        self.format_id = "canonical-json"
        self._reset()

    # ------------------------------------------------------------------ state
    def _reset(self) -> None:
        self.random = random.Random(self.seed)
        documents = FORMAT_PROFILES.get(self.format_id, FormatProfile()).documents
        kind = "mongo" if documents else self.profile
        self._state = {
            t.qualified: _TableState(t) for t in many_tables(self.database, self.table_count, kind)
        }
        self._states = list(self._state.values())
        self._activity = list(
            itertools.accumulate(1 / (i + 1) ** self.skew for i in range(len(self._states)))
        )
        self._position = 0
        self._next_id = 1
        self._tx = 0
        self._clock = dt.datetime(2024, 5, 1, 8, 0, 0)
        self._fingerprints: Counter[tuple[Any, ...]] = Counter()
        self._truth_cache: dict[str, dict[tuple[Any, ...], dict[str, Any]]] | None = None
        self._plans: dict[int, tuple[Mapping[str, Column], _Plan]] = {}
        self._document_columns: dict[tuple[str, ...], dict[str, Column]] = {}
        # profile linked: (order_lines table, order id) -> the keys of that order's lines
        self._lines_of: dict[tuple[str, Any], list[Any]] = {}

    @property
    def tables(self) -> list[TableSpec]:
        """The tables as the current format delivers them, with their schema as it is now
        (after any DDL): adapted column types, columns the format cannot carry left out."""
        return [self._adapted_spec(s.spec) for s in self._state.values()]

    @property
    def source_tables(self) -> list[TableSpec]:
        """The tables as the source has them now (canonical types, format-independent)."""
        return [s.spec for s in self._state.values()]

    @property
    def truth(self) -> dict[str, dict[tuple[Any, ...], dict[str, Any]]]:
        """Final rows per table (``database.table``), as the pipeline stores them for the
        current format: ``{key values: row}``; a keyless table's rows are keyed by a private
        row number (the rows are a multiset)."""
        if self._truth_cache is None:
            self._truth_cache = {q: self._adapted_rows(state) for q, state in self._state.items()}
        return self._truth_cache

    def _adapted_spec(self, spec: TableSpec) -> TableSpec:
        columns = rename_columns(spec.renames, self._plan(spec.columns).columns)
        key = tuple(spec.renames.get(k, k) for k in spec.key)
        return replace(spec, columns=columns, key=key, renames={})

    def _adapted_rows(self, state: _TableState) -> dict[tuple[Any, ...], dict[str, Any]]:
        spec = state.spec
        out = {}
        for ident, row in state.rows.items():
            adapted = dict(self._adapt_image(spec.columns, row) or {})
            key = tuple(adapted[k] for k in spec.key) if spec.key else (ident,)
            out[key] = rename_columns(spec.renames, adapted)
        return out

    def _plan(self, columns: Mapping[str, Column]) -> _Plan:
        """How the current format changes images of ``columns`` (cached per schema)."""
        hit = self._plans.get(id(columns))
        if hit is not None and hit[0] is columns:
            return hit[1]
        adapted: dict[str, Column] = {}
        steps: dict[str, Callable[[Any], Any] | None] = {}
        for name, column in columns.items():
            target = adapt_column(self.format_id, column, self.avoid_gaps)
            if target is not None:
                adapted[name] = target
                steps[name] = value_converter(self.format_id, column)
        identity = adapted == dict(columns) and not any(steps.values())
        plan = _Plan(adapted, steps, identity)
        # keep the columns object alive with its plan: its id stays unique while cached
        self._plans[id(columns)] = (columns, plan)
        return plan

    def _adapt_image(
        self, columns: Mapping[str, Column], image: Mapping[str, Any] | None
    ) -> Mapping[str, Any] | None:
        if image is None:
            return None
        plan = self._plan(columns)
        if plan.identity:
            return image  # images are read-only: the same object serves
        steps = plan.steps
        out = {}
        for name, value in image.items():
            if name in steps:
                convert = steps[name]
                out[name] = value if value is None or convert is None else convert(value)
        return out

    # ------------------------------------------------------------------ the stream
    def events(self, format_id: str) -> Iterator[ChangeEvent]:
        """The whole stream in ``format_id``'s terms: snapshot, then incremental changes.

        Starts the source history afresh (same seed, same history) and updates the truth
        as it goes.
        """
        profile = self.format_profile(format_id)
        self.format_id = format_id
        self._reset()
        for step in self._canonical():
            self._truth_cache = None
            event = self._adapt(step, profile)
            if event is not None:
                yield event

    def format_profile(self, format_id: str) -> FormatProfile:
        """What this workload generates for ``format_id``: its profile, less the gaps avoided."""
        profile = format_profile(format_id)
        if self.avoid_gaps and {"untyped-ddl", "precisionless-decimal"} & set(profile.gaps):
            if profile.types in ("text", "dataworks"):
                profile = replace(profile, ddl=False)
        return profile

    def _adapt(self, step: _Step, profile: FormatProfile) -> ChangeEvent | None:
        """A canonical step as ``profile``'s format writes it, or None when it has no form."""
        event, role = step.event, step.role
        if role == MARKER and not profile.tx_markers:
            return None
        if role == HEARTBEAT and not profile.heartbeats:
            return None
        if role == DDL and not profile.ddl:
            return None
        if role == TRUNCATE and not profile.truncate:
            return None
        if role == TRUNCATE_FALLBACK and profile.truncate:
            return None
        changes: dict[str, Any] = {"format": self.format_id}
        if event.columns is not None:
            canonical = event.columns
            plan = self._plan(canonical)
            if not plan.identity:
                changes["before"] = self._adapt_image(canonical, event.before)
                changes["after"] = self._adapt_image(canonical, event.after)
                changes["columns"] = plan.columns
        if event.op is Op.SNAPSHOT and not profile.snapshots:
            changes["op"] = Op.INSERT
        if profile.documents and event.position is not None:
            # MongoDB orders by clusterTime (seconds, increment)
            changes["position"] = Position(((event.ts_ms or 0) // 1000, event.position.parts[0]))
        elif profile.binlog_position and event.position is not None:
            # DTS Avro's sourcePosition is "offset@file" (+ the record id): no bare sequence
            changes["position"] = Position((1, event.position.parts[0], 0))
        state = self._state.get(f"{event.database}.{event.table}") if event.table else None
        if state is not None and state.spec.renames:
            renames = state.spec.renames
            for image in ("before", "after", "columns"):
                value = changes.get(image, getattr(event, image))
                if value is not None:
                    changes[image] = rename_columns(renames, value)
            if event.key:
                changes["key"] = tuple(renames.get(k, k) for k in event.key)
        return event.with_changes(**changes)

    def _canonical(self) -> Iterator[_Step]:
        """The format-independent source history: snapshot, then the incremental mix."""
        states = list(self._state.values())
        if self.profile == "linked":
            yield from self._linked()
            return
        for state in states:
            for _ in range(self.rows):
                yield self._insert(state, Op.SNAPSHOT)
        schedule = self._schedule()
        done = 0
        while True:
            # transactions and follow-up rows advance several changes at once: run every
            # action whose point has been reached
            for point in sorted(p for p in schedule if p <= done):
                for action in schedule.pop(point):
                    for step in action():
                        done += step.role == ROW
                        yield step
            if done >= self.event_count:
                break
            r = self.random
            if self.profile == "rich" and r.random() < 0.03:
                yield self._heartbeat()
            if self.profile == "rich" and r.random() < 0.12:
                size = r.randint(2, 4)
                tx = self._begin()
                yield tx
                for _ in range(size):
                    yield self._change(tx.event.tx)
                    done += 1
                yield self._commit(tx.event.tx)
            else:
                yield self._change(None)
                done += 1

    def _schedule(self) -> dict[int, list[Callable[[], Iterator[_Step]]]]:
        """Schema changes and TRUNCATEs at fixed points of the incremental stream."""
        plan: dict[int, list[Callable[[], Iterator[_Step]]]] = {}
        if self.profile != "rich" or not self.event_count:
            return plan
        n = self.event_count
        for state in self._state.values():
            shape = state.spec.shape
            if shape == "audit_log":
                plan.setdefault(n // 4, []).append(partial(self._ddl_audit_add, state))
                plan.setdefault(n * 3 // 4, []).append(partial(self._truncate, state))
            elif shape == "order_lines":
                plan.setdefault(n // 3, []).append(partial(self._ddl_lines_add, state))
                plan.setdefault(n * 11 // 20, []).append(partial(self._ddl_lines_widen, state))
        return plan

    # ------------------------------------------------------------------ events
    def _tick(self) -> tuple[Position, int]:
        self._position += 1
        self._clock += dt.timedelta(seconds=1)
        return Position((self._position,)), int(
            self._clock.replace(tzinfo=dt.UTC).timestamp() * 1000
        )

    def _row_event(
        self,
        state: _TableState,
        op: Op,
        before: Mapping[str, Any] | None,
        after: Mapping[str, Any] | None,
        tx: str | None = None,
        **extra: Any,
    ) -> _Step:
        spec = state.spec
        position, ts_ms = self._tick()
        columns = spec.columns
        if spec.shape == "profiles":
            # a document has the fields it has (absent, not null); updates and deletes name
            # the _id only, as MongoDB's change events do
            if before is not None:
                before = {"_id": before["_id"]}
                extra.setdefault("partial", ("before",))
            if after is not None:
                after = {k: v for k, v in after.items() if v is not None}
            columns = {k: spec.columns[k] for k in (after if after is not None else before or {})}
            columns = self._document_columns.setdefault(tuple(columns), columns)
        event = ChangeEvent(
            op=op,
            format="canonical-json",
            database=spec.database,
            table=spec.name,
            key=spec.key or None,
            before=dict(before) if before is not None else None,
            after=dict(after) if after is not None else None,
            columns=columns,  # shared, read-only: one adaptation plan per schema
            ts_ms=ts_ms,
            position=position,
            tx=tx,
            **extra,
        )
        return _Step(event, ROW)

    def _meta_event(self, op: Op, role: str, **fields: Any) -> _Step:
        position, ts_ms = self._tick()
        fields.setdefault("database", self.database)
        event = ChangeEvent(
            op=op, format="canonical-json", ts_ms=ts_ms, position=position, **fields
        )
        return _Step(event, role)

    def _heartbeat(self) -> _Step:
        return self._meta_event(Op.HEARTBEAT, HEARTBEAT)

    def _begin(self) -> _Step:
        self._tx += 1
        return self._meta_event(Op.BEGIN, MARKER, tx=f"tx-{self.seed}-{self._tx}")

    def _commit(self, tx: str | None) -> _Step:
        return self._meta_event(Op.COMMIT, MARKER, tx=tx)

    # ------------------------------------------------------------------ row changes
    def _insert(self, state: _TableState, op: Op = Op.INSERT, tx: str | None = None) -> _Step:
        row = self._new_row(state)
        self._store(state, None, row)
        return self._row_event(state, op, None, row, tx)

    def _change(self, tx: str | None) -> _Step:
        r = self.random
        if self.skew:
            state = r.choices(self._states, cum_weights=self._activity)[0]
        else:
            state = r.choice(self._states)
        shape = state.spec.shape
        roll = r.random()
        if not state.rows or roll < (0.45 if shape == "audit_log" else 0.25):
            return self._insert(state, tx=tx)
        ident = self._pick(state)
        old = state.rows[ident]
        if roll < 0.35 or (shape == "audit_log" and roll < 0.6):
            self._forget(state, ident)
            return self._row_event(state, Op.DELETE, old, None, tx)
        if shape == "profiles":
            return self._document_update(state, ident, old, tx)
        new = dict(old)
        if roll < 0.39 and shape in ("orders", "order_lines", "all_types"):
            self._rekey(state, new)  # a primary-key change
        else:
            self._mutate(state, new)
        self._forget(state, ident)
        self._store(state, None, new)
        return self._row_event(state, Op.UPDATE, old, new, tx)

    def _pick(self, state: _TableState) -> Any:
        r = self.random
        count = len(state.idents)
        # hot keys: a fifth of the rows take most updates
        if r.random() < 0.6:
            return state.idents[r.randrange(max(1, count // 5))]
        return state.idents[r.randrange(count)]

    def _ident(self, state: _TableState, row: Mapping[str, Any]) -> Any:
        return tuple(row[k] for k in state.spec.key)

    def _store(self, state: _TableState, ident: Any, row: dict[str, Any]) -> None:
        if state.spec.keyless:
            self._next_id += 1
            state.put(self._next_id if ident is None else ident, row)
            self._fingerprints[self._fingerprint(state, row)] += 1
        else:
            state.put(self._ident(state, row), row)

    def _forget(self, state: _TableState, ident: Any) -> None:
        row = state.pop(ident)
        if state.spec.keyless:
            self._fingerprints[self._fingerprint(state, row)] -= 1

    def _fingerprint(self, state: _TableState, row: Mapping[str, Any]) -> tuple[Any, ...]:
        return (state.spec.qualified, *sorted((k, repr(v)) for k, v in row.items()))

    def _unique(self, state: _TableState, row: dict[str, Any], bump: Callable[[], None]) -> None:
        """Keep keyless rows distinct (unless duplicates are wanted): a row twice in a
        table without a key collapses in the pipeline today (README, Semantics: Keys)."""
        if not state.spec.keyless or self.keyless_duplicates:
            return
        while self._fingerprints[self._fingerprint(state, row)] > 0:
            bump()

    # ------------------------------------------------------------------ rows by shape
    def _new_row(self, state: _TableState) -> dict[str, Any]:
        r = self.random
        self._next_id += 1
        n = self._next_id
        shape = state.spec.shape
        row: dict[str, Any]
        if shape == "customers":
            name = r.choice(FIRST_NAMES)
            row = {
                "id": n,
                "name": name,
                "email": f"{name.lower()}.{n}@example.com",
                "balance": Decimal(r.randint(-5_000, 1_000_000)).scaleb(-2),
                "vip": r.random() < 0.2,
                "created_at": self._clock.replace(microsecond=r.randint(0, 999) * 1000),
            }
        elif shape == "orders":
            row = {
                "id": n,
                "customer_id": r.randint(1, max(self.rows, 2)),
                "total": Decimal(r.randint(100, 9_999_999)).scaleb(-2),
                "status": "new",
                "placed_at": self._clock,
                "note": None if r.random() < 0.7 else r.choice(["gift", "urgent", 'say "hi"\n']),
            }
        elif shape == "products":
            row = {
                "sku": f"SKU-{n:06d}",
                "title": r.choice(["Tea", "Mug", "Kettle", "Spoon"]) + f" #{n}",
                "price": Decimal(r.randint(99, 99_999)).scaleb(-2),
                "stock": r.randint(0, 500),
            }
        elif shape == "all_types":
            row = {"id": n}
            for name in state.spec.columns:
                if name != "id":
                    row[name] = self._all_types_value(name)
        elif shape == "order_lines":
            row = {
                "order_id": 1000 + r.randint(0, max(self.rows, 3)),
                "line_no": 1,
                **self._line_values(state),
            }
            while (row["order_id"], row["line_no"]) in state.rows:
                row["line_no"] += 1
        elif shape == "audit_log":
            row = self._audit_values(state)
            if self.keyless_duplicates and state.rows and r.random() < 0.15:
                row = dict(r.choice(list(state.rows.values())))  # logged twice
        else:
            row = self._document(state)
        return {name: row.get(name) for name in state.spec.columns}

    def _mutate(self, state: _TableState, row: dict[str, Any]) -> None:
        """Change a few non-key columns of ``row`` in place."""
        r = self.random
        shape = state.spec.shape
        if shape == "customers":
            row["balance"] = row["balance"] + Decimal(r.randint(-500, 500)).scaleb(-2)
            row["vip"] = not row["vip"] if r.random() < 0.1 else row["vip"]
        elif shape == "orders":
            row["status"] = r.choice(STATUSES)
        elif shape == "products":
            row["stock"] = max(0, row["stock"] + r.randint(-5, 5))
            row["price"] = row["price"] if r.random() < 0.8 else row["price"] + Decimal("1.00")
        elif shape == "all_types":
            names = [c for c in state.spec.columns if c != "id"]
            for name in r.sample(names, r.randint(1, 4)):
                row[name] = self._all_types_value(name)
        elif shape == "order_lines":
            fresh = self._line_values(state)
            for name in r.sample(sorted(fresh), r.randint(1, 3)):
                row[name] = fresh[name]
            row["updated_at"] = fresh["updated_at"]
        elif shape == "audit_log":
            # corrections: a log entry keeps its time and actor
            row["amount"] = self._amount()
            if r.random() < 0.5:
                row["detail"] = r.choice(JSON_DOCS)
            self._unique(state, row, lambda: row.update(amount=self._amount()))

    def _rekey(self, state: _TableState, row: dict[str, Any]) -> None:
        """Give ``row`` a primary key no other row has."""
        self._next_id += 1
        shape = state.spec.shape
        if shape == "order_lines":
            while (row["order_id"], row["line_no"]) in state.rows:
                row["line_no"] += 1 + self.random.randint(0, 3)
        else:
            row["id"] = self._next_id

    def _all_types_value(self, name: str) -> Any:
        r = self.random
        if name == "c_nullable":
            return None if r.random() < 0.8 else r.choice(TRICKY_TEXT)[:32]
        if r.random() < 0.08:
            return None
        if name == "c_tinyint":
            return r.choice((-128, 127, r.randint(-128, 127)))
        if name == "c_smallint":
            return r.randint(-(2**15), 2**15 - 1)
        if name == "c_int":
            return r.choice((-(2**31), 2**31 - 1, r.randint(-(2**31), 2**31 - 1)))
        if name == "c_bigint":
            return r.choice((-(2**63), 2**63 - 1, r.randint(-(2**63), 2**63 - 1)))
        if name == "c_ubigint":
            # BIGINT UNSIGNED: mostly beyond BIGINT's range, where a signed type would wrap
            return r.choice(
                (2**64 - 1, 0, r.randint(2**63, 2**64 - 1), r.randint(2**63, 2**64 - 1))
            )
        if name == "c_decimal":
            # up to 28 integer digits, never below 1 in size: a tiny DECIMAL prints in
            # scientific notation in Python, which is not how the databases send it
            whole = r.randint(1, 10 ** r.randint(1, 28) - 1)
            return _decimal(r.choice((1, -1)) * whole, r.randint(0, 10**10 - 1), 10)
        if name == "c_money":
            return Decimal(r.randint(-(10**8) + 1, 10**8 - 1)).scaleb(-2)
        if name == "c_float":
            return r.randint(-(2**20), 2**20) / 8  # exact in 32 bits
        if name == "c_double":
            return r.choice((0.0, 0.1, -2.5, round(r.uniform(-1e9, 1e9), 6), 1234.5678))
        if name == "c_varchar":
            return r.choice(TRICKY_TEXT) + r.choice(("", f" #{self._next_id}"))
        if name == "c_text":
            return "\n".join(r.sample(TRICKY_TEXT, 3))
        if name == "c_binary":
            return bytes(r.randrange(256) for _ in range(r.choice((0, 1, 5, 16))))
        if name == "c_date":
            return dt.date(1900, 1, 1) + dt.timedelta(days=r.randint(0, 73_000))
        if name == "c_time":
            return dt.time(
                r.randint(0, 23), r.randint(0, 59), r.randint(0, 59), r.randint(0, 999_999)
            )
        if name == "c_datetime":
            shift = dt.timedelta(
                days=r.randint(-25_000, 5_000), microseconds=r.randint(0, 10**6 - 1)
            )
            return self._clock + shift
        if name == "c_timestamp":
            base = dt.datetime(1971, 1, 1, tzinfo=dt.UTC)
            return base + dt.timedelta(
                seconds=r.randint(0, 2_000_000_000), microseconds=r.randint(0, 10**6 - 1)
            )
        if name == "c_bool":
            return r.random() < 0.5
        if name == "c_json":
            return r.choice(JSON_DOCS)
        raise KeyError(name)

    def _line_values(self, state: _TableState) -> dict[str, Any]:
        """order_lines' non-key values in the table's current shape (after any DDL)."""
        r = self.random
        columns = state.spec.columns
        wide = columns["qty"].type.name == "int64"
        values: dict[str, Any] = {
            "sku": f"SKU-{r.randint(0, 99_999):05d}"
            + (" " + "extended description " * r.randint(1, 4) if wide else ""),
            "qty": r.randint(2**31, 5 * 2**31) if wide and r.random() < 0.5 else r.randint(1, 99),
            "price": (
                Decimal(r.randint(1, 10**16)).scaleb(-4)
                if wide
                else Decimal(r.randint(1, 10**9)).scaleb(-2)
            ),
            "updated_at": self._clock.replace(microsecond=r.randint(0, 999) * 1000),
        }
        if "gift_note" in columns:
            values["gift_note"] = None if r.random() < 0.5 else r.choice(TRICKY_TEXT)[:64]
            values["discount"] = (
                None if r.random() < 0.5 else Decimal(r.randint(0, 99_999)).scaleb(-2)
            )
        return values

    def _amount(self) -> Decimal | None:
        r = self.random
        return None if r.random() < 0.1 else Decimal(r.randint(-(10**13), 10**13)).scaleb(-4)

    def _audit_values(self, state: _TableState) -> dict[str, Any]:
        r = self.random
        row: dict[str, Any] = {
            # the source clock ticks a second per change: no two entries share a time
            "at": self._clock + dt.timedelta(microseconds=r.randint(0, 999_999)),
            "actor": r.choice(FIRST_NAMES),
            "action": r.choice(ACTIONS),
            "amount": self._amount(),
            "detail": None if r.random() < 0.3 else r.choice(JSON_DOCS),
        }
        if "client_ip" in state.spec.columns:
            row["client_ip"] = None if r.random() < 0.3 else r.choice(("10.0.0.7", "2001:db8::1"))
        return row

    # ------------------------------------------------------------------ profile linked
    def _linked(self) -> Iterator[_Step]:
        """Profile ``linked``: a snapshot that keeps the foreign keys (customers, then
        orders of theirs, then lines of those orders), then only transactions, each inside
        BEGIN/COMMIT markers with one ``tx`` on every row: place an order with its lines,
        amend an order and one of its lines, cancel an order (its lines deleted first),
        update a customer. After every COMMIT each line's order exists, and each order's
        customer (customers are never deleted)."""
        r = self.random
        groups: list[dict[str, _TableState]] = []
        for index, state in enumerate(self._state.values()):
            if index % 3 == 0:
                groups.append({})
            groups[-1][state.spec.shape] = state
        for group in groups:
            customers, orders = group.get("customers"), group.get("orders")
            lines = group.get("order_lines")
            for table in (customers, orders):
                if table is not None:
                    for _ in range(self.rows):
                        yield self._linked_insert(group, table, Op.SNAPSHOT)
            if lines is not None and orders is not None and orders.rows:
                for _ in range(self.rows):
                    yield self._linked_line(lines, self._pick(orders)[0], Op.SNAPSHOT)
        done = 0
        while done < self.event_count:
            group = r.choice(groups)
            begin = self._begin()
            yield begin
            for step in self._linked_transaction(group, begin.event.tx):
                done += step.role == ROW
                yield step
            yield self._commit(begin.event.tx)

    def _linked_transaction(self, group: dict[str, _TableState], tx: str | None) -> Iterator[_Step]:
        """One transaction's row changes in ``group`` (the tables of one numbering)."""
        r = self.random
        customers, orders = group.get("customers"), group.get("orders")
        lines = group.get("order_lines")
        if customers is None and orders is None:
            # a document collection (drs-mongo-json): no foreign keys
            for _ in range(r.randint(1, 3)):
                yield self._change(tx)
            return
        if orders is None or lines is None:
            # the last tables of a count not a multiple of three: no lines refer to them
            tables = [s for s in (customers, orders) if s is not None]
            for _ in range(r.randint(1, 2)):
                state = r.choice(tables)
                if not state.rows or r.random() < 0.3:
                    yield self._linked_insert(group, state, Op.INSERT, tx)
                elif state is orders and r.random() < 0.3:
                    yield self._linked_delete(state, self._pick(state), tx)
                else:
                    yield self._linked_update(state, self._pick(state), tx)
            return
        roll = r.random()
        if not orders.rows or roll < 0.4:
            # (a) a new order (for a new customer now and then) with 1-3 lines
            if customers is not None and (not customers.rows or r.random() < 0.2):
                yield self._linked_insert(group, customers, Op.INSERT, tx)
            order = self._linked_insert(group, orders, Op.INSERT, tx)
            yield order
            order_id = (order.event.after or {})["id"]
            for _ in range(r.randint(1, 3)):
                yield self._linked_line(lines, order_id, Op.INSERT, tx)
            return
        ident = self._pick(orders)
        mine = self._lines_of.get((lines.spec.qualified, ident[0]), [])
        if roll < 0.75 or (roll >= 0.9 and customers is None):
            # (b) amend an order and one of its lines (or give it one, or drop one)
            yield self._linked_update(orders, ident, tx)
            pick = r.random()
            if not mine or pick < 0.25:
                yield self._linked_line(lines, ident[0], Op.INSERT, tx)
            elif pick < 0.85 or len(mine) == 1:
                yield self._linked_update(lines, r.choice(mine), tx)
            else:
                yield self._linked_delete(lines, r.choice(mine), tx)
            return
        if roll < 0.9:
            # (c) cancel an order: its lines first, then the order
            for line in list(mine):
                yield self._linked_delete(lines, line, tx)
            self._lines_of.pop((lines.spec.qualified, ident[0]), None)
            yield self._linked_delete(orders, ident, tx)
            return
        # (d) a customer's balance (customers are never deleted: orders refer to them)
        assert customers is not None
        yield self._linked_update(customers, self._pick(customers), tx)

    def _linked_insert(
        self, group: dict[str, _TableState], state: _TableState, op: Op, tx: str | None = None
    ) -> _Step:
        """A new customer, or a new order of one of the group's customers."""
        row = self._new_row(state)
        customers = group.get("customers")
        if state.spec.shape == "orders":
            row["customer_id"] = self._pick(customers)[0] if customers and customers.rows else None
        self._store(state, None, row)
        return self._row_event(state, op, None, row, tx)

    def _linked_line(
        self, state: _TableState, order_id: Any, op: Op, tx: str | None = None
    ) -> _Step:
        """A new line of the order ``order_id`` (line numbers 1, 2, ... per order)."""
        mine = self._lines_of.setdefault((state.spec.qualified, order_id), [])
        number = max((line[1] for line in mine), default=0) + 1
        values = {"order_id": order_id, "line_no": number, **self._line_values(state)}
        row = {name: values.get(name) for name in state.spec.columns}
        self._store(state, None, row)
        mine.append(self._ident(state, row))
        return self._row_event(state, op, None, row, tx)

    def _linked_update(self, state: _TableState, ident: Any, tx: str | None) -> _Step:
        old = state.rows[ident]
        new = dict(old)
        self._mutate(state, new)
        self._forget(state, ident)
        self._store(state, None, new)
        return self._row_event(state, Op.UPDATE, old, new, tx)

    def _linked_delete(self, state: _TableState, ident: Any, tx: str | None) -> _Step:
        old = state.rows[ident]
        self._forget(state, ident)
        if state.spec.shape == "order_lines":
            self._lines_of[(state.spec.qualified, ident[0])].remove(ident)
        return self._row_event(state, Op.DELETE, old, None, tx)

    # ------------------------------------------------------------------ documents
    def _document(self, state: _TableState) -> dict[str, Any]:
        r = self.random
        doc: dict[str, Any] = {
            "_id": f"{0x6465_0000 + self._next_id:08x}{r.getrandbits(64):016x}",
            "name": r.choice(FIRST_NAMES) + r.choice(("", " " + r.choice(TRICKY_TEXT))),
            "age": r.randint(18, 99),
            "visits": r.randint(2**32, 2**40),
            "score": r.choice((0.5, 12.25, round(r.uniform(0, 100), 3))),
            "balance": Decimal(r.randint(-(10**8), 10**10)).scaleb(-4),
            "active": r.random() < 0.7,
            "joined": dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
            + dt.timedelta(milliseconds=r.randint(0, 3 * 10**11)),
            "tags": dumps(r.sample(["a", "b", "vip", "ünï", "x y"], r.randint(0, 3))),
            "address": dumps(
                {"city": r.choice(("Köln", "東京", "Lima")), "zip": f"{r.randint(0, 99999):05d}"}
            ),
            "avatar": bytes(r.randrange(256) for _ in range(r.randint(1, 8))),
        }
        if r.random() < 0.5:
            doc["nickname"] = r.choice(TRICKY_TEXT)  # an optional field: absent from some documents
        return doc

    def _document_update(
        self, state: _TableState, ident: Any, old: dict[str, Any], tx: str | None
    ) -> _Step:
        """A replacement (the whole new document) or a ``$set``/``$unset`` patch."""
        r = self.random
        spec = state.spec
        if r.random() < 0.5:
            fresh = self._document(state)
            new = {**fresh, "_id": old["_id"]}
            new = {name: new.get(name) for name in spec.columns}
            state.put(ident, new)
            return self._row_event(state, Op.UPDATE, old, new, tx)
        fields = ["name", "age", "visits", "score", "active", "nickname"]
        fields += ["joined", "balance", "avatar"]  # typed: Extended JSON in the patch
        sets: dict[str, Any] = {}
        for name in r.sample(fields, r.randint(1, 3)):
            sets[name] = (
                self._document(state)[name] if name != "nickname" else r.choice(TRICKY_TEXT)
            )
        unsets = ["nickname"] if "nickname" not in sets and r.random() < 0.4 else []
        new = {**old, **sets, **dict.fromkeys(unsets)}
        state.put(ident, new)
        # patches hold Extended JSON (relaxed), as MongoDB change events do
        patch: dict[str, Any] = {"$set": {k: _ejson(v) for k, v in sets.items()}}
        if unsets:
            patch["$unset"] = unsets
        position, ts_ms = self._tick()
        event = ChangeEvent(
            op=Op.UPDATE,
            format="canonical-json",
            database=spec.database,
            table=spec.name,
            key=spec.key,
            before={"_id": old["_id"]},
            columns=self._document_columns.setdefault(("_id",), {"_id": spec.columns["_id"]}),
            ts_ms=ts_ms,
            position=position,
            tx=tx,
            partial=("before",),
            patch=patch,
        )
        return _Step(event, ROW)

    # ------------------------------------------------------------------ DDL and TRUNCATE
    def _alter(self, state: _TableState, clauses: list[str], retype: dict[str, Column]) -> _Step:
        """Apply an ALTER TABLE to the source schema (new columns NULL in every row)."""
        spec = state.spec
        columns = dict(spec.columns)
        for name, column in retype.items():
            if name not in columns:
                for row in state.rows.values():
                    row[name] = None
            columns[name] = column
        if spec.keyless:
            # the rows changed shape: their fingerprints too
            self._fingerprints = Counter(
                {k: v for k, v in self._fingerprints.items() if k[0] != spec.qualified}
            )
            for row in state.rows.values():
                self._fingerprints[self._fingerprint(state, row)] += 1
        state.spec = replace(spec, columns=columns)
        statement = f"ALTER TABLE `{spec.database}`.`{spec.name}` " + ", ".join(clauses)
        return self._meta_event(Op.DDL, DDL, database=spec.database, table=spec.name, ddl=statement)

    def _ddl_lines_add(self, state: _TableState) -> Iterator[_Step]:
        gift, discount = col("string", "varchar(64)"), col("decimal", "decimal(5,2)", 5, 2)
        yield self._alter(
            state,
            ["ADD COLUMN `gift_note` varchar(64) NULL", "ADD COLUMN `discount` decimal(5,2) NULL"],
            {"gift_note": gift, "discount": discount},
        )
        yield from self._follow_up(state)

    def _ddl_lines_widen(self, state: _TableState) -> Iterator[_Step]:
        yield self._alter(
            state,
            [
                "MODIFY COLUMN `qty` bigint NOT NULL",
                "MODIFY COLUMN `price` decimal(18,4) NOT NULL",
                "MODIFY COLUMN `sku` varchar(255) NOT NULL",
            ],
            {
                "qty": col("int64", "bigint"),
                "price": col("decimal", "decimal(18,4)", 18, 4),
                "sku": col("string", "varchar(255)"),
            },
        )
        yield from self._follow_up(state)

    def _ddl_audit_add(self, state: _TableState) -> Iterator[_Step]:
        yield self._alter(
            state,
            ["ADD COLUMN `client_ip` varchar(45) NULL"],
            {"client_ip": col("string", "varchar(45)")},
        )
        yield from self._follow_up(state)

    def _follow_up(self, state: _TableState) -> Iterator[_Step]:
        """Rows of the new shape right after a schema change: an insert, then an update."""
        yield self._insert(state)
        ident = self._pick(state)
        old = state.rows[ident]
        new = dict(old)
        self._mutate(state, new)
        self._forget(state, ident)
        self._store(state, None, new)
        yield self._row_event(state, Op.UPDATE, old, new)

    def _truncate(self, state: _TableState) -> Iterator[_Step]:
        """TRUNCATE; formats without one get a delete of every row instead (same end state)."""
        spec = state.spec
        rows = list(state.rows.values())
        yield self._meta_event(
            Op.TRUNCATE, TRUNCATE, database=spec.database, table=spec.name, key=spec.key or None
        )
        for row in rows:
            step = self._row_event(state, Op.DELETE, row, None)
            yield _Step(step.event, TRUNCATE_FALLBACK)
        state.clear()
        self._fingerprints = Counter(
            {k: v for k, v in self._fingerprints.items() if k[0] != spec.qualified}
        )
        yield from (self._insert(state) for _ in range(2))


def _ejson(value: Any) -> Any:
    """A field value in MongoDB Extended JSON, relaxed form (dates to the millisecond)."""
    if isinstance(value, dt.datetime):
        stamp = value.astimezone(dt.UTC)
        return {"$date": stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"}
    if isinstance(value, Decimal):
        return {"$numberDecimal": str(value)}
    if isinstance(value, bytes):
        return {"$binary": {"base64": base64.b64encode(value).decode("ascii"), "subType": "00"}}
    return value


def _decimal(units: int, fraction: int, scale: int) -> Decimal:
    """``units.fraction`` with exactly ``scale`` fractional digits (sign from ``units``)."""
    sign = "-" if units < 0 else ""
    return Decimal(f"{sign}{abs(units)}.{fraction:0{scale}d}")
