"""The lexical search on PostgreSQL: full-text search finds the matches, BM25 with the
owner's figures ranks them (as on SQLite)."""

from __future__ import annotations

from .bm25 import RERANK, owner_bm25
from .hits import MAX_MATCHES, Hit
from .lexical_index import PG_COLUMN
from .lexical_query import tsquery
from .space_stats import newest_id, owner_stats
from .readable import READABLE_SQL


def pg_search(owner_id: int, query: list[str], limit: int, connection) -> list[Hit]:
    """PostgreSQL full-text search, ranked by the same BM25 as SQLite's (bm25.py, with the
    owner's own figures): the index finds the matches, the ranking is one formula on
    either database. It was ts_rank weighted by IDF, whose length normalisation (1 +
    log(length)) and lack of saturation spread the scores of a question's matches
    otherwise than BM25 does: a longer line holding one question word more stood further
    above a shorter one, so what recall's signals add as a share of a line's score (the
    dated-line lift, dates.DATED_LIFT) reached on SQLite and not here.

    One statement: every match is scored coarsely (the IDF of the words it holds, counted
    over the matches as they are found), and only the best RERANK of them are read and
    ranked by BM25, whose cost per row is what grows with the store. At most MAX_MATCHES
    matches are read, in no order: when the words are that common any sample ranks about
    as well, and reading them all would cost more than the rest of recall together
    (counts over a sample understate how common such words are; their order, which is
    what IDF weighs by, holds)."""
    words = list(dict.fromkeys(query))
    size, mean_length = owner_stats(connection, owner_id, newest_id(connection, owner_id))
    size = max(1, size)
    n = range(len(words))
    holds = ", ".join(f"({PG_COLUMN} @@ to_tsquery('english', %s))::int AS m{i}" for i in n)
    # float8 throughout: numeric arithmetic (what integer + 0.5 becomes) is many times slower.
    counts = ", ".join(f"(sum(m{i}) OVER ())::float8 AS n{i}" for i in n)
    idf = ", ".join(f"ln(1.0 + (%s::float8 - n{i} + 0.5) / (n{i} + 0.5)) AS idf{i}" for i in n)
    coarse = " + ".join(f"m{i} * idf{i}" for i in n)
    matched = ", ".join(f"best.n{i}" for i in n)
    # The rows' text is read twice (to find, then to rank the best) rather than carried
    # through the counting: it is the wide part of a row.
    sql = (
        f"WITH hits AS (SELECT id, {holds} FROM memories_memory "
        f"WHERE {PG_COLUMN} @@ to_tsquery('english', %s) AND {READABLE_SQL} LIMIT %s), "
        f"counted AS (SELECT *, {counts} FROM hits), "
        f"weighted AS (SELECT *, {idf} FROM counted), "
        f"best AS (SELECT * FROM weighted ORDER BY {coarse} DESC, id DESC LIMIT %s) "
        f"SELECT m.id, m.raw_text, m.summary, m.entities, m.topics, m.source, {matched} "
        f"FROM best JOIN memories_memory m ON m.id = best.id"
    )
    params = [*words, tsquery(words), owner_id, MAX_MATCHES, *([size] * len(words)), max(RERANK, 2 * limit)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        return []
    # How many matches hold each word (the same on every row: a window over all of them).
    df = {w: int(rows[0][6 + i]) for i, w in enumerate(words)}
    return owner_bm25([row[:6] for row in rows], words, df, size=size, mean_length=mean_length)[:limit]
