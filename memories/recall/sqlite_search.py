"""The lexical search on SQLite: FTS5 finds the owner's matches, planned word by word, and
BM25 ranks them with the owner's statistics (bm25.py)."""

from __future__ import annotations

import time
from collections import defaultdict

from .bm25 import RERANK, idf_weights, owner_bm25
from .hits import MAX_MATCHES, Hit
from .lexical_index import FTS_TABLE
from .lexical_query import fts5_match
from .current import FLAGGED_SQL
from .readable import READABLE_SQL
from .space_stats import newest_id, owner_stats


# What the rows BM25 ranks are read with: its own columns first (owner_bm25), then what
# recall's candidates are made of (candidates.fetch), so the memories the words arm
# found are not read a second time.
READ_COLUMNS = (
    "id, raw_text, summary, entities, topics, source, importance, occurred_at, status, "
    f"({READABLE_SQL}), event_dates, {FLAGGED_SQL}, recall_keys"
)


def fts5_search(owner_id: int, query: list[str], limit: int, connection, read: dict | None = None) -> list[Hit]:
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
    newest = newest_id(connection, owner_id)
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
        size, mean_length = owner_stats(connection, owner_id, newest)
        df = {w: counts[w] for w in finding}
        idf = idf_weights(df, size)
        # Matches hold one of a few combinations of the words: each one's sum is made once.
        sums: dict[tuple, float] = {}
        coarse = []
        for pk, words in held.items():
            words = tuple(words)
            total = sums.get(words)
            if total is None:
                total = sums[words] = sum(idf[w] for w in words)
            coarse.append((-total, -pk))
        coarse.sort()
        best = [-pk for _, pk in coarse[: max(RERANK, 2 * limit)]]
        cursor.execute(
            f"SELECT {READ_COLUMNS} FROM memories_memory WHERE id IN ({', '.join(['%s'] * len(best))})", [owner_id, *best]
        )
        rows = cursor.fetchall()
    if read is not None:
        read.update((row[0], row) for row in rows)
    return owner_bm25([row[:6] for row in rows], finding, df, size=size, mean_length=mean_length)[:limit]


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
# its newest memory, as owner_stats is): the same names, projects and key words come back
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
