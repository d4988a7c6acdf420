"""The lexical search on PostgreSQL: full-text search, each word's ts_rank weighted by its
IDF among the owner's memories."""

from __future__ import annotations

from .hits import MAX_MATCHES, Hit
from .lexical_index import PG_COLUMN
from .lexical_query import tsquery
from .space_stats import pg_owner_size
from .readable import READABLE_SQL

# Matches ranked with ts_rank at most (the rest, by the coarse score, are not relevant enough).
PG_RERANK = 500


def pg_search(owner_id: int, query: list[str], limit: int, connection) -> list[Hit]:
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
    size = max(1, pg_owner_size(connection, owner_id))
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
        f"WHERE {PG_COLUMN} @@ to_tsquery('english', %s) AND {READABLE_SQL} LIMIT %s), "
        f"counted AS (SELECT *, {counts} FROM hits), "
        f"weighted AS (SELECT *, {idf} FROM counted), "
        f"best AS (SELECT * FROM weighted ORDER BY {coarse} DESC, id DESC LIMIT %s) "
        f"SELECT m.id, {fine} AS rank FROM best JOIN memories_memory m ON m.id = best.id ORDER BY rank DESC, m.id DESC LIMIT %s"
    )
    params = [*words, tsquery(words), owner_id, MAX_MATCHES, *([size] * len(words)), max(PG_RERANK, limit), *words, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [Hit(memory_id=pk, score=float(score)) for pk, score in cursor.fetchall()]
