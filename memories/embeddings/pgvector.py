"""The meaning arm's search inside PostgreSQL, with the pgvector extension.

Each vector is kept a second time as `halfvec` (half precision: 768 bytes at 384
dimensions) in an `embedding` column of the vector table, with one HNSW index per
dimension in use (a partial expression index, `embedding::halfvec(384)` where dim = 384:
one column serves models of any size). A question is answered in SQL: the owner's and
the model's rows only, ordered by inner product with the question shifted by what is
typical (embeddings/hubness.py: the shift is of the question's vector, so it is applied
to the query, and the index still serves). `hnsw.iterative_scan = relaxed_order` (pgvector
0.8) lets the index keep looking past its first candidates when other owners' rows fill
them, so the owner filter does not starve the result; the few rows it returns are put in
exact order again. An owner with few vectors is searched exactly instead (the owner's
index, every one of its rows scored): that is quicker than walking a graph of everyone's
vectors for a handful of them, and exact.

No process holds a copy of anyone's vectors: only the owner's typical memory (one vector,
the mean over its rows, which are its visible memories' alone: embeddings/store.py) is
remembered per process.

Whether it is in use: PostgreSQL, the extension installed and the column made (migration
0013, or any later `migrate`: it says plainly when the extension cannot be created), and
MEMORY_VECTOR_SEARCH not `numpy`. Otherwise embeddings/index.py searches in numpy as on SQLite.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import DatabaseError, transaction
from django.db import connection as default_connection

from .store import VECTOR_TABLE

log = logging.getLogger(__name__)

MIN_VERSION = (0, 8)  # iterative index scans
HNSW_MAX_DIM = 4000  # halfvec's HNSW limit; larger vectors are searched exactly
# An owner with at most this many vectors of the model is searched exactly (see above).
EXACT_UP_TO = 5_000
BUILD_MEMORY_MB = 512  # maintenance_work_mem while an index is built (ensure_index)
EF_SEARCH = 200  # candidates the graph walk keeps; above the arm's 150
MAX_SCAN_TUPLES = 50_000  # how far an iterative scan may go for one owner's rows
# The owner's typical memory is read again when its vectors changed; for a large owner at
# most this often (the mean of 20,000 vectors or more barely moves in a minute of additions).
TYPICAL_LARGE_FROM = 20_000
TYPICAL_LARGE_EVERY_SECONDS = 60.0
# How long a "not available" answer is believed before the catalogue is asked again.
RECHECK_SECONDS = 60.0

_ready: dict[str, tuple[bool, float]] = {}
_typical: dict[tuple[str, int, str], _Owner] = {}
_lock = threading.Lock()


def _version(text: str | None) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in (text or "").split(".")[:2])
    except ValueError:
        return ()


def _column_present(cursor) -> bool:
    cursor.execute(
        "SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = 'embedding' AND NOT attisdropped",
        [VECTOR_TABLE],
    )
    return cursor.fetchone() is not None


def enabled(connection=None) -> bool:
    """True when the meaning arm searches in PostgreSQL (see the module's notes)."""
    connection = connection or default_connection
    if connection.vendor != "postgresql" or (settings.MEMORY_VECTOR_SEARCH or "auto").lower() == "numpy":
        return False
    known = _ready.get(connection.alias)
    if known is not None and (known[0] or time.monotonic() - known[1] < RECHECK_SECONDS):
        return known[0]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
            ready = row is not None and _version(row[0]) >= MIN_VERSION and _column_present(cursor)
    except DatabaseError:
        ready = False
    _ready[connection.alias] = (ready, time.monotonic())
    return ready


def forget_state() -> None:
    """Forget what was learnt of the database (tests; after install)."""
    with _lock:
        _ready.clear()
        _typical.clear()


def install(connection=None, *, say=None) -> bool:
    """Create the extension when it can, add the halfvec column, copy the stored vectors
    into it and index each dimension; say plainly why not when it cannot (the numpy search
    serves then). Idempotent: any later `migrate` finishes what an earlier one could not."""
    connection = connection or default_connection
    say = say or log.warning
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT default_version, installed_version FROM pg_available_extensions WHERE name = 'vector'")
        row = cursor.fetchone()
        if row is None:
            say(
                "pgvector is not installed on this PostgreSQL server: recall by meaning searches in each process "
                "(numpy), as on SQLite. For search inside the database install it (the pgvector/pgvector:pg17 image "
                "of compose.yaml, or the postgresql-NN-pgvector package) and run `manage.py migrate` again."
            )
            return False
        installed = row[1]
        if installed is None:
            try:
                with transaction.atomic(using=connection.alias):
                    cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except DatabaseError as exc:
                say(
                    f"pgvector is available but could not be created ({str(exc).strip()}): recall by meaning searches in "
                    "each process (numpy). A superuser can run `CREATE EXTENSION vector;` in this database; then run "
                    "`manage.py migrate` again."
                )
                return False
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            installed = cursor.fetchone()[0]
        if _version(installed) < MIN_VERSION:
            say(
                f"pgvector {installed} is older than {'.'.join(map(str, MIN_VERSION))} (iterative index scans): recall by "
                "meaning searches in each process (numpy). `ALTER EXTENSION vector UPDATE;` after upgrading it, then "
                "`manage.py migrate`."
            )
            return False
        cursor.execute(f"ALTER TABLE {VECTOR_TABLE} ADD COLUMN IF NOT EXISTS embedding halfvec")
    backfill(connection)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT DISTINCT dim FROM {VECTOR_TABLE}")
        dims = [row[0] for row in cursor.fetchall()]
    for dim in dims:
        ensure_index(dim, connection)
    forget_state()
    return True


def _literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.6g}" for x in np.asarray(vector, dtype=np.float32).tolist()) + "]"


def write(rows: list[tuple[int, np.ndarray]], *, dim: int, connection=None) -> None:
    """Set the halfvec copy of these memories' vectors (inside the caller's transaction)."""
    connection = connection or default_connection
    if not rows:
        return
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {VECTOR_TABLE} SET embedding = %s::halfvec WHERE memory_id = %s", [(_literal(v), pk) for pk, v in rows]
        )


BACKFILL_BATCH = 1000


def backfill(connection=None) -> int:
    """Copy stored vectors without a halfvec copy into it (vectors written before the
    extension, or by code that wrote the table directly); short batches, each its own
    transaction."""
    connection = connection or default_connection
    done, dims = 0, set()
    while True:
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            cursor.execute(
                f"SELECT memory_id, dim, vector FROM {VECTOR_TABLE} WHERE embedding IS NULL LIMIT {BACKFILL_BATCH}",
            )
            rows = cursor.fetchall()
            if not rows:
                break
            dims.update(dim for _, dim, _ in rows)
            cursor.executemany(
                f"UPDATE {VECTOR_TABLE} SET embedding = %s::halfvec WHERE memory_id = %s",
                [(_literal(np.frombuffer(bytes(v), dtype="<f4")), pk) for pk, _, v in rows],
            )
        done += len(rows)
    for dim in dims:
        ensure_index(dim, connection)  # after the rows: building a graph whole is quicker than row by row
    return done


def _index_name(dim: int) -> str:
    return f"memoryvector_hnsw_{int(dim)}"


def ensure_index(dim: int, connection=None) -> None:
    """The HNSW index of one dimension (made the first time a vector of it is stored: over
    a handful of rows that is quick; migrate makes those of the vectors already there)."""
    connection = connection or default_connection
    dim = int(dim)
    if dim > HNSW_MAX_DIM:
        return
    with connection.cursor() as cursor:
        # Asked of the catalogue each time (one lookup): an index made in a transaction
        # that was rolled back is gone, whatever this process saw.
        cursor.execute("SELECT to_regclass(%s)", [_index_name(dim)])
        if cursor.fetchone()[0] is not None:
            return
        inside = connection.in_atomic_block
        if inside:
            # PostgreSQL refuses to index a table with foreign-key checks still pending in
            # the transaction (Django defers them): made now, they clear the way.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        # The graph is built in memory when it fits (64 MB by default: about 60,000 vectors
        # of 384 dimensions); past that the build slows several times over.
        cursor.execute(f"SET maintenance_work_mem = '{BUILD_MEMORY_MB}MB'")
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {_index_name(dim)} ON {VECTOR_TABLE} "
            f"USING hnsw ((embedding::halfvec({dim})) halfvec_ip_ops) WHERE dim = {dim}"
        )
        cursor.execute("RESET maintenance_work_mem")
        if inside:
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")


RECOUNT_SECONDS = 10.0  # as embeddings/index.py: a count catches only a vector removed


@dataclass
class _Owner:
    stamp: tuple  # (the newest vector's time, how many vectors)
    counted_at: float
    computed_at: float  # when typical was read
    typical: np.ndarray


def _stamp(cursor, owner_id: int, model: str, dim: int, cached: _Owner | None) -> tuple[tuple, bool]:
    """(the newest vector's time, how many vectors of this model), and whether it was counted."""
    cursor.execute(f"SELECT max(embedded_at) FROM {VECTOR_TABLE} WHERE owner_id = %s AND model = %s", [owner_id, model])
    newest = cursor.fetchone()[0]
    if cached is not None and cached.stamp[0] == newest and time.monotonic() - cached.counted_at < RECOUNT_SECONDS:
        return cached.stamp, False
    cursor.execute(
        f"SELECT count(*) FROM {VECTOR_TABLE} WHERE owner_id = %s AND model = %s AND dim = {int(dim)} AND embedding IS NOT NULL",
        [owner_id, model],
    )
    return (newest, cursor.fetchone()[0]), True


def _owner_state(cursor, alias: str, owner_id: int, model: str, dim: int) -> tuple[int, np.ndarray]:
    """(how many vectors the owner has of this model, its typical memory)."""
    key = (alias, owner_id, model)
    cached = _typical.get(key)
    stamp, counted = _stamp(cursor, owner_id, model, dim, cached)
    now = time.monotonic()
    if cached is not None and (
        cached.stamp == stamp
        or (
            stamp[1] >= TYPICAL_LARGE_FROM
            and cached.stamp[1] >= TYPICAL_LARGE_FROM
            and now - cached.computed_at < TYPICAL_LARGE_EVERY_SECONDS
        )
    ):
        if counted or cached.stamp != stamp:
            with _lock:
                _typical[key] = _Owner(stamp, now if counted else cached.counted_at, cached.computed_at, cached.typical)
        return stamp[1], cached.typical
    cursor.execute(
        f"SELECT avg(embedding::vector({int(dim)})) FROM {VECTOR_TABLE} "
        f"WHERE owner_id = %s AND model = %s AND dim = {int(dim)} AND embedding IS NOT NULL",
        [owner_id, model],
    )
    typical = _parse(cursor.fetchone()[0], dim)
    with _lock:
        _typical[key] = _Owner(stamp, now, now, typical)
    return stamp[1], typical


def _parse(value, dim: int) -> np.ndarray:
    if value is None:
        return np.zeros(dim, dtype=np.float32)
    return np.asarray([float(x) for x in str(value).strip("[]").split(",")], dtype=np.float32)


def is_exact(count: int, dim: int) -> bool:
    return count <= EXACT_UP_TO or dim > HNSW_MAX_DIM


def session_settings(*, limit: int, exact: bool) -> list[str]:
    """SET LOCAL statements the search runs in its transaction."""
    if exact:
        return []
    return [
        "SET LOCAL hnsw.iterative_scan = relaxed_order",
        f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, int(limit))}",
        f"SET LOCAL hnsw.max_scan_tuples = {MAX_SCAN_TUPLES}",
    ]


def search_sql(*, exact: bool, dim: int, shifted: str, owner_id: int, model: str, limit: int) -> tuple[str, list]:
    """The search's SQL and parameters: (memory id, score) rows, best first."""
    dim = int(dim)
    if exact:
        # Not the index's expression: the planner reads the owner's rows and scores each.
        return (
            f"SELECT memory_id, -(embedding <#> %s::halfvec) AS score FROM {VECTOR_TABLE} "
            f"WHERE owner_id = %s AND model = %s AND dim = {dim} AND embedding IS NOT NULL "
            "ORDER BY embedding <#> %s::halfvec, memory_id LIMIT %s",
            [shifted, owner_id, model, shifted, limit],
        )
    # relaxed_order hands rows over nearly in order: a materialised CTE, ordered again.
    return (
        f"WITH nearest AS MATERIALIZED (SELECT memory_id, embedding::halfvec({dim}) <#> %s::halfvec({dim}) AS d "
        f"FROM {VECTOR_TABLE} WHERE owner_id = %s AND model = %s AND dim = {dim} "
        f"ORDER BY embedding::halfvec({dim}) <#> %s::halfvec({dim}) LIMIT %s) "
        "SELECT memory_id, -d FROM nearest ORDER BY d, memory_id",
        [shifted, owner_id, model, shifted, limit],
    )


def search(
    *, owner_id: int, model: str, dim: int, query: np.ndarray, limit: int, content_free: np.ndarray | None, connection=None
) -> list[tuple[int, float]]:
    """As embeddings/index.py's search, answered by the database."""
    from . import hubness

    connection = connection or default_connection
    dim = int(dim)
    if query.shape[-1] != dim or limit <= 0:
        return []
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        count, typical = _owner_state(cursor, connection.alias, owner_id, model, dim)
        if not count:
            return []
        shifted = _literal(hubness.shifted_question(query, typical=typical, content_free=content_free))
        exact = is_exact(count, dim)
        for statement in session_settings(limit=limit, exact=exact):
            cursor.execute(statement)
        cursor.execute(*search_sql(exact=exact, dim=dim, shifted=shifted, owner_id=owner_id, model=model, limit=limit))
        return [(int(pk), float(score)) for pk, score in cursor.fetchall()]
