"""The lexical search on SQLite: FTS5 finds the owner's matches, planned word by word, and
BM25 ranks them with the owner's statistics (bm25.py)."""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict

from .bm25 import RERANK, idf_weights, owner_bm25
from .hits import MAX_MATCHES, Hit
from .lexical_index import FTS_TABLE, owner_stamp
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
    returned, unranked. What these lookups found is remembered until the owner's memories
    change (_Remembered)."""
    with connection.cursor() as cursor:
        known = _Remembered(connection, owner_id, owner_stamp(cursor, owner_id))
        # How many of the owner's readable memories hold each word, and which (for a word
        # that may find): a search within the owner's scope token walks the whole scope's
        # postings alongside the word's (0.5-1.4 ms at 100k memories, against 0.05-0.2 for
        # the word alone). So each word is first counted unscoped, every owner's together,
        # which bounds its count in the scope: a word held by at most MAX_MATCHES memories
        # of anyone's is read once, its scoped matches counted as they come; only a commoner
        # one is counted in the scope (the plan below still sees only the owner's figures).
        found: dict[str, tuple[int, ...]] = {}
        counts: dict[str, int] = {}
        for w in query:
            remembered = known.get(("word", w, MAX_MATCHES))
            if remembered is not None:
                counts[w], ids = remembered
                if ids is not None:
                    found[w] = ids
                continue
            if _count(cursor, w, MAX_MATCHES + 1) <= MAX_MATCHES:
                found[w] = _matches(cursor, w, owner_id)
                counts[w] = len(found[w])
            else:
                counts[w] = _count(cursor, w, MAX_MATCHES + 1, owner_id=owner_id)
            known.put(("word", w, MAX_MATCHES), (counts[w], found.get(w)))
        ordered = sorted(query, key=lambda w: counts[w])
        if counts[ordered[0]] > MAX_MATCHES:
            remembered = known.get(("newest", *ordered[:2], limit))
            if remembered is None:
                ids = _newest_matches(cursor, owner_id, ordered, limit)
                known.put(("newest", *ordered[:2], limit), (len(ids), ids))
            else:
                ids = remembered[1]
            # Equal relevance, a hair less for each older one: recall's other signals decide.
            return [Hit(memory_id=pk, score=1.0 - i / (10 * max(1, limit))) for i, pk in enumerate(ids)]
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
            if w not in found:
                found[w] = _matches(cursor, w, owner_id)
                known.put(("word", w, MAX_MATCHES), (counts[w], found[w]))
            for pk in found[w]:
                held[pk].append(w)
        size, mean_length = owner_stats(connection, owner_id, newest_id(connection, owner_id))
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


def _newest_matches(cursor, owner_id: int, ordered: list[str], limit: int) -> tuple[int, ...]:
    """The ids of the newest memories holding the two rarest words (or failing that the rarest)."""
    sql = f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s ORDER BY rowid DESC LIMIT %s"
    cursor.execute(sql, [fts5_match(ordered[:2], owner_id=owner_id, conjunctive=True), limit])
    ids = [row[0] for row in cursor.fetchall()]
    if len(ids) < limit and len(ordered) > 1:
        cursor.execute(sql, [fts5_match(ordered[:1], owner_id=owner_id), limit])
        ids += [pk for (pk,) in cursor.fetchall() if pk not in set(ids)][: limit - len(ids)]
    return tuple(ids)


# What the words arm looked up in an owner's index (each word's count in the scope and the
# ids of the memories holding it, the newest matches of a question of common words),
# remembered between questions under the owner's stamp (lexical_index.STAMPS_TABLE: drawn
# afresh by every write that changes what the index holds for the owner's memories, so
# what is found here is what the index would answer now). The same names, projects and
# key words come back question after question, and in feedback's second search: at 100k
# memories the lookups were 3.3 of the 11 ms the arm spent on a question naming a month.
# Bounded by the ids held (a common word's 2000 at most), the least recently used dropped
# first; a stamp no longer current is never asked for again and ages out the same way.
REMEMBERED_IDS = 200_000
_remembered: OrderedDict[tuple, tuple] = OrderedDict()
_remembered_ids = 0
_remembered_lock = threading.Lock()


class _Remembered:
    """The lookups remembered for one owner at one stamp (none when the stamp is None), each
    as (a count, ids or None)."""

    def __init__(self, connection, owner_id: int, stamp: int | None):
        # By database too: tests and evaluate make other databases under the same alias.
        self.key = None if stamp is None else (connection.alias, str(connection.settings_dict["NAME"]), owner_id, stamp)

    def get(self, what: tuple):
        if self.key is None:
            return None
        with _remembered_lock:
            found = _remembered.get((*self.key, *what))
            if found is not None:
                _remembered.move_to_end((*self.key, *what))
            return found

    def put(self, what: tuple, value) -> None:
        global _remembered_ids
        if self.key is None:
            return
        with _remembered_lock:
            old = _remembered.pop((*self.key, *what), None)
            _remembered_ids += _size(value) - (_size(old) if old is not None else 0)
            _remembered[(*self.key, *what)] = value
            while _remembered_ids > REMEMBERED_IDS and len(_remembered) > 1:
                _, dropped = _remembered.popitem(last=False)
                _remembered_ids -= _size(dropped)


def _size(value: tuple[int, tuple[int, ...] | None]) -> int:
    return 1 + len(value[1] or ())


def forget_remembered() -> None:
    global _remembered_ids
    with _remembered_lock:
        _remembered.clear()
        _remembered_ids = 0


def _matches(cursor, word: str, owner_id: int) -> tuple[int, ...]:
    """The ids of the owner's readable memories that hold the word."""
    cursor.execute(f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s", [fts5_match([word], owner_id=owner_id)])
    return tuple(pk for (pk,) in cursor.fetchall())


def _count(cursor, word: str, cap: int, owner_id: int | None = None) -> int:
    """How many memories (anyone's, or the owner's readable ones) hold the word, counting
    no further than `cap`."""
    cursor.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s LIMIT %s)",
        [fts5_match([word], owner_id=owner_id), cap],
    )
    return cursor.fetchone()[0]
