"""The lexical index recall ranks with: SQLite FTS5 (bm25) or PostgreSQL full-text search.

SQLite: a contentless FTS5 table kept in step by triggers on memories_memory, so every
code path that writes a memory (ORM save, bulk_create, queryset update, delete, cascade,
raw SQL) updates the index without the code having to remember to. Besides the text it
indexes one `scope` token per memory, "u<owner id>", present only while recall may read
the memory (ready or pending, not deleted, superseded or a near-duplicate), so the index alone can
say which of an owner's memories hold a word (see _fts5_search for when that is used).
PostgreSQL: a stored generated tsvector column with a GIN index; the database computes it
on every insert and update. On PostgreSQL each word's ts_rank is weighted by its IDF,
which bm25 has built in.

A question is never passed to MATCH or to_tsquery as typed: it is cut into plain
alphanumeric words, stopwords dropped, and each word quoted (FTS5) or joined with `|`
(tsquery), so FTS syntax in a question is just text.
"""

from __future__ import annotations

import math
import re
import time
from collections import defaultdict
from dataclasses import dataclass

from django.core.cache import cache
from django.db import connection as default_connection
from django.db.models.expressions import RawSQL

from .readable import READABLE_SQL, readable_condition, readable_memories
from ..textutil import STOPWORDS, cjk_terms, fold, has_cjk, stem, words

FTS_TABLE = "memories_memory_fts"
PG_COLUMN = "search_vector"
# The most words of a question sent to the index: a pasted essay must not become a
# thousand-term OR that matches everything.
MAX_QUERY_WORDS = 32
# Indexed text per memory on PostgreSQL: a tsvector is capped at 1 MB, and a memory whose
# text overflowed it would fail to save at all.
PG_MAX_CHARS = 200_000
# bm25 is computed for every row a query matches: at most this many (see _fts5_search),
# a few milliseconds of ranking at any store size.
MAX_MATCHES = 2000

# Column order matters: BM25_WEIGHTS follows it.
FTS_COLUMNS = ("raw_text", "summary", "entities", "topics", "source", "scope")
TEXT_COLUMNS = FTS_COLUMNS[:-1]
# raw text carries the facts; summary repeats the text's central sentences, so it counts
# less; entities and topics are the memory's key words; the source is mostly an id; the
# scope token only filters.
BM25_WEIGHTS = (1.0, 0.4, 0.6, 0.6, 0.2, 0.0)
# Columns whose change can change what the index holds for a memory.
_WATCHED = (
    "raw_text",
    "summary",
    "entities",
    "topics",
    "source",
    "owner_id",
    "status",
    "deleted_at",
    "superseded_by_id",
    "duplicate_of_id",
)


def _scope_sql(row: str, columns: set[str]) -> str:
    """SQL for a memory's scope token: its owner while recall may read it, else nothing.
    Built from the columns the table has, so it also works at the migration that made the
    index (before the soft-delete columns existed)."""
    return f"CASE WHEN {readable_condition(row, columns)} THEN 'u' || {row}.owner_id ELSE '' END"


def _values(row: str, columns: set[str]) -> str:
    return ", ".join([f"{row}.{c}" for c in TEXT_COLUMNS] + [_scope_sql(row, columns)])


def _sqlite_columns(cursor, table: str) -> set[str]:
    cursor.execute(f"PRAGMA table_info({table})")
    return {row[1] for row in cursor.fetchall()}


def _sqlite_install(cursor) -> bool:
    """Create the table and (re)create its triggers; True when the table is new."""
    columns = _sqlite_columns(cursor, "memories_memory")
    have = _sqlite_columns(cursor, FTS_TABLE)
    created = False
    if have and set(FTS_COLUMNS) != have:
        # An index of an older layout (external content, no scope): replace it.
        _sqlite_uninstall(cursor)
        have = set()
    if not have:
        cursor.execute(
            f"""CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(
                {", ".join(FTS_COLUMNS)}, content='', tokenize='porter unicode61 remove_diacritics 2'
            )"""
        )
        created = True
    cols = ", ".join(FTS_COLUMNS)
    watched = ", ".join(c for c in _WATCHED if c in columns)
    # Dropped and made again every time: a trigger made before a column existed must learn
    # about it, and a migration that rebuilt memories_memory has dropped them anyway.
    for suffix in ("ai", "ad", "au"):
        cursor.execute(f"DROP TRIGGER IF EXISTS {FTS_TABLE}_{suffix}")
    cursor.execute(
        f"""CREATE TRIGGER {FTS_TABLE}_ai AFTER INSERT ON memories_memory BEGIN
            INSERT INTO {FTS_TABLE}(rowid, {cols}) VALUES (new.id, {_values("new", columns)});
        END"""
    )
    # A contentless table forgets a row only when told exactly what it indexed for it.
    cursor.execute(
        f"""CREATE TRIGGER {FTS_TABLE}_ad AFTER DELETE ON memories_memory BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {cols}) VALUES ('delete', old.id, {_values("old", columns)});
        END"""
    )
    cursor.execute(
        f"""CREATE TRIGGER {FTS_TABLE}_au AFTER UPDATE OF {watched} ON memories_memory BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {cols}) VALUES ('delete', old.id, {_values("old", columns)});
            INSERT INTO {FTS_TABLE}(rowid, {cols}) VALUES (new.id, {_values("new", columns)});
        END"""
    )
    return created


def _sqlite_uninstall(cursor) -> None:
    for suffix in ("ai", "ad", "au"):
        cursor.execute(f"DROP TRIGGER IF EXISTS {FTS_TABLE}_{suffix}")
    cursor.execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")


REBUILD_CHUNK = 5000


def _sqlite_rebuild(cursor, progress=None) -> None:
    columns = _sqlite_columns(cursor, "memories_memory")
    cursor.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('delete-all')")
    cursor.execute("SELECT coalesce(max(id), 0) FROM memories_memory")
    highest = cursor.fetchone()[0]
    # In id ranges, so a progress bar can follow a rebuild of 100,000 memories.
    for start in range(0, highest, REBUILD_CHUNK):
        cursor.execute(
            f"INSERT INTO {FTS_TABLE}(rowid, {', '.join(FTS_COLUMNS)}) SELECT m.id, {_values('m', columns)} "
            "FROM memories_memory m WHERE m.id > %s AND m.id <= %s",
            [start, start + REBUILD_CHUNK],
        )
        if progress is not None:
            progress(max(cursor.rowcount, 0))


PG_VECTOR = (
    "setweight(to_tsvector('english'::regconfig, left(coalesce(raw_text, ''), {n})), 'A') || "
    "setweight(to_tsvector('english'::regconfig, coalesce(entities::text, '') || ' ' || coalesce(topics::text, '')), 'B') || "
    "setweight(to_tsvector('english'::regconfig, left(coalesce(summary, ''), {n})), 'C') || "
    "setweight(to_tsvector('english'::regconfig, coalesce(source, '')), 'D')"
).format(n=PG_MAX_CHARS)
_PG_SETUP = [
    f"ALTER TABLE memories_memory ADD COLUMN IF NOT EXISTS {PG_COLUMN} tsvector GENERATED ALWAYS AS ({PG_VECTOR}) STORED",
    f"CREATE INDEX IF NOT EXISTS memories_memory_search_gin ON memories_memory USING gin ({PG_COLUMN})",
]
_PG_TEARDOWN = [
    "DROP INDEX IF EXISTS memories_memory_search_gin",
    f"ALTER TABLE memories_memory DROP COLUMN IF EXISTS {PG_COLUMN}",
]


def install(connection=None) -> None:
    """Create the index (idempotent). Safe to run again after a migration that rebuilt
    memories_memory: on SQLite, Django re-creates a table to alter it, which drops its
    triggers. A new (or replaced) SQLite index is filled from the table at once."""
    connection = connection or default_connection
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            if _sqlite_install(cursor):
                _sqlite_rebuild(cursor)
        elif connection.vendor == "postgresql":
            if _pg_installed(cursor):
                # ALTER TABLE, even a no-op one, fails inside a transaction with pending
                # deferred constraint checks; an installed index needs nothing.
                return
            for sql in _PG_SETUP:
                cursor.execute(sql)


def _pg_installed(cursor) -> bool:
    cursor.execute(
        "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'memories_memory' AND column_name = %s "
        "UNION ALL SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'memories_memory_search_gin'",
        [PG_COLUMN],
    )
    return len(cursor.fetchall()) == 2


def uninstall(connection=None) -> None:
    connection = connection or default_connection
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            _sqlite_uninstall(cursor)
        elif connection.vendor == "postgresql":
            for sql in _PG_TEARDOWN:
                cursor.execute(sql)


def rebuild(connection=None, *, progress=None) -> None:
    """Re-create the index from the memories table (after a restore, or to repair it).
    progress(n), when given, is called as each n memories are indexed."""
    connection = connection or default_connection
    install(connection)
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            _sqlite_rebuild(cursor, progress)
        elif connection.vendor == "postgresql":
            cursor.execute("REINDEX INDEX memories_memory_search_gin")
            if progress is not None:
                cursor.execute("SELECT count(*) FROM memories_memory")
                progress(cursor.fetchone()[0])


# Anything but letters and digits (of any script) splits a word: what is left can never be
# FTS5 or tsquery syntax.
_PLAIN = re.compile(r"[\W_]+")
_SCOPE_LIKE = re.compile(r"u\d+")


def query_words(text: str) -> list[str]:
    """The words of a question worth searching for: lower-case letters and digits of any
    script (everything FTS could read as syntax is gone), no stopwords, each once. A
    Chinese or Japanese run gives its content pieces (see textutil.cjk_terms)."""
    out: dict[str, None] = {}
    for word in words(text or ""):
        if word in STOPWORDS:
            continue
        for piece in _PLAIN.split(word.lower()):
            if has_cjk(piece):
                for term in cjk_terms(piece):
                    out.setdefault(term, None)
            elif piece and piece not in STOPWORDS and (len(piece) > 1 or piece.isdigit()):
                out.setdefault(piece, None)
    return list(out)[:MAX_QUERY_WORDS]


def fts5_match(query: list[str], *, owner_id: int | None = None, conjunctive: bool = False) -> str:
    # Each word quoted: an FTS5 string, never an operator, column filter or prefix query.
    # `query_words` leaves only letters and digits, so a quote can never end the string early.
    joined = (" AND " if conjunctive else " OR ").join(f'"{w}"' for w in query)
    if owner_id is None:
        # A word shaped like a scope token must not match the scope column.
        return f"{{{' '.join(TEXT_COLUMNS)}}} : ({joined})" if any(_SCOPE_LIKE.fullmatch(w) for w in query) else joined
    return f'scope : "u{int(owner_id)}" AND ({{{" ".join(TEXT_COLUMNS)}}} : ({joined}))'


def tsquery(query: list[str]) -> str:
    return " | ".join(query)


@dataclass(frozen=True)
class Hit:
    memory_id: int
    score: float  # higher is more relevant; only comparable within one search


def lexical_search(*, owner, query: list[str], limit: int, connection=None) -> list[Hit]:
    """The owner's readable memories that match any query word, best first."""
    connection = connection or default_connection
    spaced = [w for w in query if not has_cjk(w)]
    unspaced = [w for w in query if has_cjk(w)]
    hits: list[Hit] = []
    if not spaced:
        pass
    elif connection.vendor == "sqlite":
        hits = _fts5_search(owner.pk, spaced, limit, connection)
    elif connection.vendor == "postgresql":
        hits = _pg_search(owner.pk, spaced, limit, connection)
    else:
        hits = _scan_search(owner=owner, query=spaced, limit=limit)
    if unspaced:
        hits = _merge(hits, _substring_search(owner.pk, unspaced, limit, connection), limit)
    return hits


def _merge(hits: list[Hit], more: list[Hit], limit: int) -> list[Hit]:
    """Substring finds join the index's, each found term counting as much as the index's
    best match does."""
    unit = max((h.score for h in hits), default=1.0) or 1.0
    scores = {h.memory_id: h.score for h in hits}
    for h in more:
        scores[h.memory_id] = scores.get(h.memory_id, 0.0) + h.score * unit
    return [Hit(pk, score) for pk, score in sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))[:limit]]


# Memories a substring search reads at most, newest first.
SUBSTRING_SCAN = 20_000


def _substring_search(owner_id: int, terms: list[str], limit: int, connection) -> list[Hit]:
    """Chinese and Japanese terms, which neither index can cut out of a run of text: the
    owner's readable memories whose text or summary holds them, by how many (longer
    terms count more). A scan of the owner's newest memories, bounded."""
    terms = terms[:8]
    like = " OR ".join(["raw_text LIKE %s OR summary LIKE %s"] * len(terms))
    params = [p for t in terms for p in (f"%{t}%", f"%{t}%")]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, raw_text, summary FROM (SELECT id, raw_text, summary FROM memories_memory WHERE {_PG_READABLE} "
            f"ORDER BY id DESC LIMIT %s) AS recent WHERE {like}",
            [owner_id, SUBSTRING_SCAN, *params],
        )
        rows = cursor.fetchall()
    weight = sum(min(len(t), 4) for t in terms)
    hits = []
    for pk, raw_text, summary in rows:
        text = f"{raw_text} {summary}"
        found = sum(min(len(t), 4) for t in terms if t in text)
        if found:
            hits.append(Hit(pk, found / weight))
    hits.sort(key=lambda h: (-h.score, -h.memory_id))
    return hits[:limit]


_BM25 = f"bm25({FTS_TABLE}, {', '.join(str(w) for w in BM25_WEIGHTS)})"


def _fts5_search(owner_id: int, query: list[str], limit: int, connection) -> list[Hit]:
    """The owner's readable memories that hold the question's words, ranked by BM25 with
    statistics of the owner's memories alone.

    FTS5's own bm25() takes how common a word is (IDF) and the average length of a text
    from the whole table, every owner's rows together: one user's ranking would shift as
    another user adds or deletes memories, and a user could read how common a word is in
    other spaces from their own scores. So FTS5 only finds the matches (owner-scoped by
    the scope token), and BM25 is computed here over them: IDF from how many of the
    owner's memories hold each word, lengths against the owner's own average.

    Matching is planned first: the rarest words (they carry the weight in BM25 anyway)
    find the candidates, as many as keep the matches under MAX_MATCHES; commoner words
    (a close friend's name in a large store) are left to recall's entity and topic match.
    When even the rarest word is in more memories than that, no word tells memories apart:
    the newest memories holding the two rarest words (or failing that the rarest) are
    returned, unranked."""
    newest = _newest_id(connection, owner_id)
    with connection.cursor() as cursor:
        # How many of the owner's readable memories hold each word, and which (for a word
        # that may find): a search within the owner's scope token walks the whole scope's
        # postings alongside the word's (0.5-1.4 ms at 100k memories, against 0.05-0.2 for
        # the word alone). So each word is first counted unscoped, every owner's together,
        # which bounds its count in the scope: a word held by at most MAX_MATCHES memories
        # of anyone's is read once, its scoped matches counted as they come; only a commoner
        # one is counted in the scope (the plan below still sees only the owner's figures).
        found: dict[str, list[int]] = {}
        counts: dict[str, int] = {}
        for w in query:
            if _known_common(connection, owner_id, newest, w):
                counts[w] = MAX_MATCHES + 1
            elif _count(cursor, w, MAX_MATCHES + 1) <= MAX_MATCHES:
                found[w] = _matches(cursor, w, owner_id)
                counts[w] = len(found[w])
            else:
                counts[w] = _count(cursor, w, MAX_MATCHES + 1, owner_id=owner_id)
                if counts[w] > MAX_MATCHES:
                    _remember_common(connection, owner_id, newest, w)
        ordered = sorted(query, key=lambda w: counts[w])
        if counts[ordered[0]] > MAX_MATCHES:
            return _newest_matches(cursor, owner_id, ordered, limit)
        finding, total = [], 0
        for w in ordered:
            if counts[w] == 0:
                continue
            if finding and total + counts[w] > MAX_MATCHES:
                break
            finding.append(w)
            total += counts[w]
        if not finding:
            return []
        # Which of the words each match holds, one indexed lookup per word: enough for a
        # coarse score (the IDF of the words held); only the best of those are read and
        # ranked by full BM25, whose cost per row is what grows with the store.
        held: dict[int, list[str]] = defaultdict(list)
        for w in finding:
            for pk in found[w] if w in found else _matches(cursor, w, owner_id):
                held[pk].append(w)
        size, mean_length = _owner_stats(connection, owner_id, newest)
        df = {w: counts[w] for w in finding}
        idf = _idf(df, size)
        best = sorted(held, key=lambda pk: (-sum(idf[w] for w in held[pk]), -pk))[: max(RERANK, 2 * limit)]
        cursor.execute(
            f"SELECT id, raw_text, summary, entities, topics, source FROM memories_memory WHERE id IN ({', '.join(['%s'] * len(best))})",
            best,
        )
        rows = cursor.fetchall()
    return owner_bm25(rows, finding, df, size=size, mean_length=mean_length)[:limit]


# Matches ranked by full BM25 at most (by the coarse score, the rest are not relevant enough).
RERANK = 300


def _idf(df: dict[str, int], size: int) -> dict[str, float]:
    return {w: math.log(1.0 + (max(size, n) - n + 0.5) / (n + 0.5)) for w, n in df.items()}


# BM25's usual constants (FTS5 uses the same).
BM25_K1 = 1.2
BM25_B = 0.75


def owner_bm25(rows, query: list[str], df: dict[str, int], *, size: int, mean_length: float) -> list[Hit]:
    """BM25 over rows (id, raw_text, summary, entities, topics, source) that matched, with
    document frequencies and lengths of the owner's memories only. A word counts in a
    column as often as a token there starts with its stem ("launch" counts "launched"),
    which is about what the index's stemmer matched."""
    stems = {w: stem(fold(w)) for w in query}
    idf = _idf(df, size)
    pattern = re.compile(r"(?<![^\W_])(" + "|".join(sorted(map(re.escape, set(stems.values())), key=len, reverse=True)) + r")")
    hits = []
    mean_length = max(1.0, mean_length)
    for pk, raw_text, summary, entities, topics, source in rows:
        raw_text, summary = raw_text or "", summary or ""
        length = (len(raw_text) + len(summary)) / AVG_TOKEN_CHARS
        norm = BM25_K1 * (1 - BM25_B + BM25_B * length / mean_length)
        tf: dict[str, float] = {}
        # The text, and the key words (entities, topics) the index weighs too; an
        # extractive summary only repeats the text, so it is counted when it differs.
        columns = [(1.0, raw_text), (0.6, f"{_text(entities)} {_text(topics)}"), (0.2, source or "")]
        if summary and summary not in raw_text:
            columns.append((0.4, summary))
        for weight, text in columns:
            text = text.lower() if text.isascii() else fold(text)
            for found in pattern.findall(text):
                tf[found] = tf.get(found, 0.0) + weight
        score = 0.0
        for w in query:
            f = tf.get(stems[w], 0.0)
            if f:
                score += idf[w] * f * (BM25_K1 + 1) / (f + norm)
        # The index matched it (its stemmer may reach forms ours does not): never zero.
        hits.append(Hit(memory_id=pk, score=score or 1e-6))
    hits.sort(key=lambda h: (-h.score, -h.memory_id))
    return hits


AVG_TOKEN_CHARS = 5.0


def _text(value) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else " ".join(map(str, value))


def _newest_id(connection, owner_id: int) -> tuple | None:
    """The owner's newest memory, as (id, when it was made): its time too, as a space made
    again under reused ids (a rolled-back one: evaluate's, a test's) can end at the same id."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, created_at FROM memories_memory WHERE owner_id = %s ORDER BY id DESC LIMIT 1", [owner_id])
        row = cursor.fetchone()
    return tuple(row) if row else None


def _owner_stats(connection, owner_id: int, newest: tuple | None) -> tuple[int, float]:
    """How many readable memories the owner has (up to PG_IDF_CAP) and their mean length
    in tokens (text and summary), remembered for a few minutes: figures a little out of
    date move the ranking by a hair. Keyed by the owner's newest memory (`newest`,
    _newest_id) too: a new memory (or a space made again under a reused id, as evaluate's
    rolled-back spaces are) is never read with another store's figures."""
    key = f"memories:search:stats:{owner_id}:{':'.join(str(part).replace(' ', 'T') for part in newest or ())}"
    stats = cache.get(key)
    if stats is None:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT count(*), avg(length(raw_text) + length(summary)) FROM (SELECT raw_text, summary FROM memories_memory "
                f"WHERE {_PG_READABLE} ORDER BY id DESC LIMIT %s) AS mine",
                [owner_id, PG_IDF_CAP],
            )
            count, mean_chars = cursor.fetchone()
        stats = (int(count or 0), float(mean_chars or 0.0) / AVG_TOKEN_CHARS)
        cache.set(key, stats, PG_SIZE_SECONDS)
    return stats


def _newest_matches(cursor, owner_id: int, ordered: list[str], limit: int) -> list[Hit]:
    sql = f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s ORDER BY rowid DESC LIMIT %s"
    cursor.execute(sql, [fts5_match(ordered[:2], owner_id=owner_id, conjunctive=True), limit])
    ids = [row[0] for row in cursor.fetchall()]
    if len(ids) < limit and len(ordered) > 1:
        cursor.execute(sql, [fts5_match(ordered[:1], owner_id=owner_id), limit])
        ids += [pk for (pk,) in cursor.fetchall() if pk not in set(ids)][: limit - len(ids)]
    # Equal relevance, a hair less for each older one: recall's other signals decide.
    return [Hit(memory_id=pk, score=1.0 - i / (10 * max(1, limit))) for i, pk in enumerate(ids)]


# Words too common in an owner's space to find with (more than MAX_MATCHES of their
# memories hold them), remembered a few minutes while the store stays as it was (keyed by
# its newest memory, as _owner_stats is): the same names, projects and key words come back
# question after question (and in feedback's second search), and counting one in the scope
# is its costliest lookup. One that falls below it after many are deleted is searched for
# again within minutes.
COMMON_SECONDS = 300.0
_common: dict[tuple, float] = {}


def _known_common(connection, owner_id: int, newest, word: str) -> bool:
    until = _common.get((connection.alias, owner_id, newest, word))
    return until is not None and until > time.monotonic()


def _remember_common(connection, owner_id: int, newest, word: str) -> None:
    if len(_common) > 50_000:
        _common.clear()
    _common[(connection.alias, owner_id, newest, word)] = time.monotonic() + COMMON_SECONDS


def _matches(cursor, word: str, owner_id: int) -> list[int]:
    """The ids of the owner's readable memories that hold the word."""
    cursor.execute(f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s", [fts5_match([word], owner_id=owner_id)])
    return [pk for (pk,) in cursor.fetchall()]


def _count(cursor, word: str, cap: int, owner_id: int | None = None) -> int:
    """How many memories (anyone's, or the owner's readable ones) hold the word, counting
    no further than `cap`."""
    cursor.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s LIMIT %s)",
        [fts5_match([word], owner_id=owner_id), cap],
    )
    return cursor.fetchone()[0]


_PG_READABLE = READABLE_SQL
# A store size for IDF is counted up to this many memories, and kept this long.
PG_IDF_CAP = 50_000
PG_SIZE_SECONDS = 300
PG_SIZE_CACHE_FROM = 1000
# Matches ranked with ts_rank at most (the rest, by the coarse score, are not relevant enough).
PG_RERANK = 500


def _pg_search(owner_id: int, query: list[str], limit: int, connection) -> list[Hit]:
    """PostgreSQL full-text search. ts_rank knows nothing of how common a word is, so each
    word's rank is weighted by its IDF among the owner's memories, as bm25 does on SQLite:
    a friend's name in half the memories must not count as much as the rare word.

    One statement: every match is scored coarsely (the IDF of the words it holds, counted
    over the matches as they are found), and only the best PG_RERANK of them are ranked
    with ts_rank, whose cost per row is what grows with the store. At most MAX_MATCHES
    matches are read, in no order: when the words are that common any sample ranks about
    as well, and reading them all would cost more than the rest of recall together
    (counts over a sample understate how common such words are; their order, which is
    what IDF weighs by, holds)."""
    words = list(dict.fromkeys(query))
    size = max(1, _pg_owner_size(connection, owner_id))
    n = range(len(words))
    holds = ", ".join(f"({PG_COLUMN} @@ to_tsquery('english', %s))::int AS m{i}" for i in n)
    # float8 throughout: numeric arithmetic (what integer + 0.5 becomes) is many times slower.
    counts = ", ".join(f"(sum(m{i}) OVER ())::float8 AS n{i}" for i in n)
    idf = ", ".join(f"ln(1.0 + (%s::float8 - n{i} + 0.5) / (n{i} + 0.5)) AS idf{i}" for i in n)
    coarse = " + ".join(f"m{i} * idf{i}" for i in n)
    # ts_rank weights are for the D, C, B, A parts of the vector (source, summary, entities
    # and topics, text); normalisation 1 divides by 1 + log(length), so long texts do not
    # win by size.
    fine = " + ".join(f"ts_rank('{{0.1, 0.3, 0.6, 1.0}}', m.{PG_COLUMN}, to_tsquery('english', %s), 1) * best.idf{i}" for i in n)
    # The vectors are read twice (to find, then to rank the best) rather than carried
    # through the counting: they are the wide part of a row.
    sql = (
        f"WITH hits AS (SELECT id, {holds} FROM memories_memory "
        f"WHERE {PG_COLUMN} @@ to_tsquery('english', %s) AND {_PG_READABLE} LIMIT %s), "
        f"counted AS (SELECT *, {counts} FROM hits), "
        f"weighted AS (SELECT *, {idf} FROM counted), "
        f"best AS (SELECT * FROM weighted ORDER BY {coarse} DESC, id DESC LIMIT %s) "
        f"SELECT m.id, {fine} AS rank FROM best JOIN memories_memory m ON m.id = best.id ORDER BY rank DESC, m.id DESC LIMIT %s"
    )
    params = [*words, tsquery(words), owner_id, MAX_MATCHES, *([size] * len(words)), max(PG_RERANK, limit), *words, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [Hit(memory_id=pk, score=float(score)) for pk, score in cursor.fetchall()]


def _pg_owner_size(connection, owner_id: int) -> int:
    """How many readable memories the owner has (for IDF), counted up to PG_IDF_CAP and
    remembered for a few minutes: a count a little out of date moves IDF by a hair."""
    key = f"memories:search:size:{owner_id}"
    size = cache.get(key)
    if size is None:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM memories_memory WHERE {_PG_READABLE} LIMIT %s) AS mine",
                [owner_id, PG_IDF_CAP],
            )
            size = cursor.fetchone()[0]
        # A small space is counted afresh each time (cheap): a few memories more or less
        # there move IDF a lot, and ingest searches too (the update check), so a count
        # cached while a space is filling up would be well out of date.
        if size >= PG_SIZE_CACHE_FROM:
            cache.set(key, size, PG_SIZE_SECONDS)
    return size


def _scan_search(*, owner, query: list[str], limit: int) -> list[Hit]:
    """Other databases: count matching words over the newest memories. Slow and rough,
    but recall still works."""
    wanted = set(query)
    hits = []
    rows = readable_memories(owner).order_by("-id").values_list("id", "raw_text", "summary")[:5000]
    for pk, raw_text, summary in rows:
        found = wanted & set(words(f"{raw_text} {summary}"))
        if found:
            hits.append(Hit(pk, float(len(found))))
    hits.sort(key=lambda h: -h.score)
    return hits[:limit]


# -- the memory bank's filters (services/browse.py): any owner and state, narrowed by the caller


def fts5_phrase(words: list[str]) -> str:
    # Only \w characters are left, so nothing here can end the quoted string or be FTS syntax.
    return '"' + " ".join(words) + '"'


def candidate_ids(
    columns: tuple[str, ...], words: list[str], *, phrase: bool, limit: int, within: list[int] | None = None
) -> list[int] | None:
    """Ids of memories (any owner, any state) whose columns hold the words (all of them,
    or as one phrase), from the index; None when there are more than `limit` or
    no index to ask (another database). `within` (ids another filter found) narrows it."""
    # Ids are ints from the database, written into the SQL as such.
    narrow = f" AND {{id}} IN ({', '.join(str(int(pk)) for pk in within)})" if within else ""
    if within is not None and not within:
        return []
    if default_connection.vendor == "sqlite":
        terms = fts5_phrase(words) if phrase else " AND ".join(fts5_phrase([w]) for w in words)
        sql = f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s{narrow.format(id='rowid')} LIMIT %s"
        params = [f"{{{' '.join(columns)}}} : ({terms})", limit + 1]
    elif default_connection.vendor == "postgresql":
        # The tsvector holds every text column; plainto/phraseto parse the words safely.
        function = "phraseto_tsquery" if phrase else "plainto_tsquery"
        sql = f"SELECT id FROM memories_memory WHERE {PG_COLUMN} @@ {function}('english', %s){narrow.format(id='id')} LIMIT %s"
        params = [" ".join(words), limit + 1]
    else:
        return None
    with default_connection.cursor() as cursor:
        cursor.execute(sql, params)
        ids = [row[0] for row in cursor.fetchall()]
    return ids if len(ids) <= limit else None


def matching_ids(columns: tuple[str, ...], words: list[str]) -> RawSQL | None:
    """The same match as candidate_ids (every word), unbounded, as a subquery the list
    filters by; None with no index to ask."""
    if default_connection.vendor == "sqlite":
        match = f"{{{' '.join(columns)}}} : ({' AND '.join(fts5_phrase([w]) for w in words)})"
        return RawSQL(f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s", [match])
    if default_connection.vendor == "postgresql":
        return RawSQL(f"SELECT id FROM memories_memory WHERE {PG_COLUMN} @@ plainto_tsquery('english', %s)", [" ".join(words)])
    return None
