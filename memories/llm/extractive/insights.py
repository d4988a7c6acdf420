"""Consolidation offline: which memories belong together, what two of them share, and the
thread a group has in common.

Grouping (`group`) joins memories that are close (similarity.py: by meaning when the
embedding layer is there, by words otherwise), closest pairs first, into groups of at most
`max_size`; memories close to nothing are grouped as unrelated, and their insight says so.

A theme is a phrase two memories share ("billing migration"), a named thing (not a
transcript's speaker), or a topic word. Never a theme: speaker names alone, currency codes,
dates, amounts, file-type and engine words, stopword-like words.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from ... import textutil
from ..base import Connection, ConsolidationResult, MemoryNote
from .entities import (
    AMOUNT_RE,
    CHATTER,
    COMMON_WORDS,
    CURRENCY_CODES,
    DATE_RE,
    EMAIL_RE,
    ENGINE_WORDS,
    MONTH_NAMES,
    WEEKDAYS,
    addressed,
    elision_of_stopwords,
    topics_of,
)
from . import language, similarity
from .similarity import by_meaning, neighbours, similarity_matrix

# How close two memories must be to count as related, by the kind of similarity in use:
# TF-IDF cosine over words, or the cosine of e5-style sentence vectors (which sit near 0.75
# even for unrelated sentences). The coordinator may tune the second once embeddings land.
RELATED_LEXICAL = 0.2
RELATED_MEANING = 0.86
NEIGHBOURS = 8
MAX_THEME_WORDS = 3

_SPEAKER = re.compile(r"^\s{0,3}([^\W\d_][\w'’.\-]{0,40}(?: [^\W\d_][\w'’.\-]{0,40}){0,2}):\s", re.M)
_WORD = re.compile(r"[^\W\d_][\w'’\-]*")


def _is_label(match: re.Match) -> bool:
    """ "Ann Lee: ..." is a speaker; "Billing migration blocked: ..." is what the note says."""
    return all(w[:1].isupper() for w in match.group(1).split())


def _unlabel(match: re.Match) -> str:
    return "" if _is_label(match) else match.group(0)


def related_min() -> float:
    return RELATED_MEANING if by_meaning() else RELATED_LEXICAL


def speakers_of(text: str) -> set[str]:
    """Who speaks in a transcript line, and who is spoken to."""
    text = text[:20_000]
    names = {m.group(1) for m in _SPEAKER.finditer(text) if _is_label(m)}
    names |= addressed(text)
    return names


def _body(m: MemoryNote) -> str:
    """What a memory says, without transcript speaker labels (two lines by one speaker are
    not related because of who said them)."""
    return _SPEAKER.sub(_unlabel, m.text or m.summary)


def group(notes: list[MemoryNote], *, max_size: int = 10) -> list[list[MemoryNote]]:
    """Groups to consolidate: related memories together (largest similarity first), then
    the rest in order, `max_size` at a time, as unrelated groups. A lone memory left over
    waits for the next run."""
    max_size = max(2, max_size)
    if len(notes) < 2:
        return []
    threshold = related_min()
    bodies = [_body(m) for m in notes]
    vectors = similarity.document_vectors(bodies)
    if vectors is not None:
        bars = language_bars(bodies, vectors @ vectors.T, threshold)
        near = similarity.dense_neighbours(vectors, NEIGHBOURS, threshold)
        near = [[(j, s) for j, s in row if s >= bars[i][j]] for i, row in enumerate(near)]
    else:
        near = neighbours(bodies, k=NEIGHBOURS, min_similarity=threshold)
    edges = sorted(
        {(-s, min(i, j), max(i, j)) for i, row in enumerate(near) for j, s in row} | _shared_name_edges(notes, threshold)
    )
    parent = list(range(len(notes)))
    size = [1] * len(notes)

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for _, i, j in edges:
        a, b = root(i), root(j)
        if a != b and size[a] + size[b] <= max_size:
            if size[a] < size[b]:
                a, b = b, a
            parent[b] = a
            size[a] += size[b]
    clusters: dict[int, list[int]] = {}
    for i in range(len(notes)):
        clusters.setdefault(root(i), []).append(i)
    related = [sorted(c) for c in clusters.values() if len(c) > 1]
    alone = sorted(c[0] for c in clusters.values() if len(c) == 1)
    related.sort(key=lambda c: c[0])
    out = [[notes[i] for i in c] for c in related]
    chunks = [alone[i : i + max_size] for i in range(0, len(alone), max_size)]
    if len(chunks) > 1 and len(chunks[-1]) == 1:
        chunks.pop()  # waits for company
    out.extend([notes[i] for i in c] for c in chunks if len(c) > 1)
    return out


# A pair of languages needs this many pairs of notes in a backlog before their typical
# closeness there is read; with fewer, the model's own closeness of two content-free
# texts in those languages stands in.
MIN_LANGUAGE_PAIRS = 6
# A note's language is named from its opening (a backlog of hundreds is read).
LANGUAGE_SAMPLE = 400
# Words of each language's stopword list in one content-free text.
PROTOTYPE_WORDS = 40


def language_bars(texts: list[str], closeness: np.ndarray, threshold: float) -> np.ndarray:
    """How close each pair must be to count as related, by meaning. Two notes in the same
    language other than English are closer to each other than two English notes, whatever
    they say (multilingual-e5 puts "Bruno frisst kein Trockenfutter" at 0.88 of "Der
    Kühlschrank macht Geräusche"; unrelated English notes sit near 0.80). The bar is raised
    by how much closer a pair of languages' notes typically are than the backlog's: read
    from the backlog (the median of those pairs against the median of all) when it has
    enough of them, else from the model (two texts of stopwords, one in each language,
    against two English ones). A batch in English keeps the bar as it is."""
    n = len(texts)
    bars = np.full((n, n), threshold, dtype=np.float32)
    if n < 2:
        return bars
    langs = [language.language_of(t[:LANGUAGE_SAMPLE]) for t in texts]
    upper = np.triu_indices(n, 1)
    overall = float(np.median(closeness[upper]))
    pairs: dict[tuple[str, str], list[float]] = {}
    for i, j in zip(*upper):
        pairs.setdefault(_pair(langs[i], langs[j]), []).append(float(closeness[i, j]))
    raise_by = {}
    for key, values in pairs.items():
        if len(values) >= MIN_LANGUAGE_PAIRS:
            raise_by[key] = max(0.0, float(np.median(values)) - overall)
        else:
            raise_by[key] = _model_raise(*key)
    for i in range(n):
        for j in range(n):
            bars[i, j] += raise_by.get(_pair(langs[i], langs[j]), 0.0)
    return bars


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


_prototypes: dict[str, np.ndarray | None] = {}


def _prototype(lang: str) -> np.ndarray | None:
    """Two content-free texts in `lang` (halves of its stopwords, in a fixed order), embedded."""
    if lang not in _prototypes:
        words = sorted(language.library_stopwords(lang), key=lambda w: (hash_order(w), w))
        texts = [" ".join(words[:PROTOTYPE_WORDS]), " ".join(words[PROTOTYPE_WORDS : 2 * PROTOTYPE_WORDS])]
        _prototypes[lang] = similarity.meaning_vectors(texts) if len(words) >= 2 * PROTOTYPE_WORDS else None
    return _prototypes[lang]


def hash_order(word: str) -> int:
    """A fixed shuffle of a word list (Python's hash() changes between processes)."""
    return int.from_bytes(word.encode()[:8].ljust(8, b"\0"), "little") * 2654435761 % 2**32


def _model_raise(a: str, b: str) -> float:
    if not a or not b or a == b == "en":
        return 0.0
    try:
        pa, pb, pe = _prototype(a), _prototype(b), _prototype("en")
    except Exception:  # the embedding layer down: the bar stays
        return 0.0
    if pa is None or pb is None or pe is None:
        return 0.0
    return max(0.0, float(pa[0] @ pb[1]) - float(pe[0] @ pe[1]))


# A name or phrase held by more than this share of a backlog is how this owner talks, not
# a thread (a speaker, the owner's own town); below, two memories holding it belong together.
MAX_KEY_SHARE = 0.05


def _shared_name_edges(notes: list[MemoryNote], similarity: float) -> set[tuple[float, int, int]]:
    """Memories that name the same thing or share a phrase ("Berlin", "billing migration")
    belong together even when their sentences are not close in meaning ("Booked the hotel in
    Berlin" and "The Berlin talk is accepted"): joined after the pairs close in meaning."""
    speakers = set().union(*(speakers_of(m.text or m.summary) for m in notes))
    holders: dict[str, list[int]] = {}
    for i, m in enumerate(notes):
        for key in _keys(m, speakers, topics=False):
            holders.setdefault(key, []).append(i)
    limit = max(3, int(MAX_KEY_SHARE * len(notes)))
    edges = set()
    for held in holders.values():
        if 1 < len(held) <= limit:
            edges |= {(-similarity, a, b) for a, b in zip(held, held[1:])}
    return edges


def _keys(m: MemoryNote, speakers: set[str], full: dict[str, str] | None = None, *, topics: bool = True) -> dict[str, str]:
    """A memory's possible themes: key -> how to say it. Phrases first, then names, then words.
    `full`: a first name -> the one full name the group knows for it ("Priya" -> "Priya Raman")."""
    body = _body(m)
    full = full or {}
    out: dict[str, str] = {}
    for phrase in _phrases(body):
        out.setdefault("p:" + phrase.lower(), phrase)
    speaker_words = {w.lower() for s in speakers for w in s.split()}
    for entity in m.entities:
        entity = full.get(str(entity), str(entity))
        low = entity.lower()
        if not entity or low in ENGINE_WORDS or low in CURRENCY_CODES or low in speaker_words or entity in speakers:
            continue
        if (
            DATE_RE.fullmatch(entity)
            or AMOUNT_RE.fullmatch(entity)
            or EMAIL_RE.fullmatch(entity)
            or entity in MONTH_NAMES
            or entity in WEEKDAYS
        ):
            continue
        if any(ch.isdigit() for ch in entity) and not any(ch.isalpha() for ch in entity):
            continue
        out.setdefault("e:" + low, entity)
    for topic in topics_of(body, [*m.entities, *speakers], limit=8) if topics else ():
        # Themes stay narrower than topics: an everyday subject ("work", "family") joins too much.
        if topic not in CHATTER and topic not in COMMON_WORDS:
            out.setdefault("t:" + textutil.stem(topic), topic)
    return out


def _phrases(text: str) -> list[str]:
    """Runs of two or three content words ("billing migration", "support group")."""
    words = [w.group(0) for w in _WORD.finditer(text[:20_000])]
    stops = language.stopwords_for(text[:LANGUAGE_SAMPLE])  # "nous avons réservé" is no phrase
    out = []
    for n in (3, 2):
        for i in range(len(words) - n + 1):
            run = words[i : i + n]
            if all(_content(w, stops) for w in run) and not all(w[:1].isupper() for w in run):
                out.append(" ".join(w.lower() for w in run))
    return list(dict.fromkeys(out))


def _content(word: str, stops: frozenset[str] = textutil.STOPWORDS) -> bool:
    low = word.lower()
    return (
        len(low) > 2
        and low not in stops
        and not elision_of_stopwords(low, stops)
        and low not in COMMON_WORDS
        and low not in CHATTER
        and low not in ENGINE_WORDS
        and low not in CURRENCY_CODES
        and word not in MONTH_NAMES
        and word not in WEEKDAYS
    )


def _shared(a: dict[str, str], b: dict[str, str]) -> list[str]:
    keys = [k for k in a if k in b]
    # A phrase says more than its words: drop words a shared phrase already holds.
    phrases = [a[k] for k in keys if k.startswith("p:")]
    longest = [p for p in phrases if not any(p != q and p in q for q in phrases)]
    inside = {w for p in longest for w in p.split()}
    rest = [a[k] for k in keys if not k.startswith("p:") and not (k.startswith("t:") and a[k].lower() in inside)]
    names = [r for r in rest if r[:1].isupper()]
    words = [r for r in rest if not r[:1].isupper() and r.lower() not in inside]
    return longest[:2] + names[:2] + words[: max(0, MAX_THEME_WORDS - len(longest[:2]))]


def describe(shared: list[str]) -> str:
    """["billing migration", "Priya"] -> "the billing migration with Priya"."""
    things = [s for s in shared if not s[:1].isupper()]
    names = [s for s in shared if s[:1].isupper()]
    if things and names:
        return f"{_join(things[:2])} with {_join(names[:2])}"
    return _join((things or names)[:3])


def consolidate(memories: list[MemoryNote]) -> ConsolidationResult:
    speakers = set().union(*(speakers_of(m.text or m.summary) for m in memories)) if memories else set()
    multi = {str(e) for m in memories for e in m.entities if " " in str(e)}
    firsts: dict[str, set[str]] = {}
    for name in multi:
        firsts.setdefault(name.split()[0], set()).add(name)
    full = {first: next(iter(names)) for first, names in firsts.items() if len(names) == 1}
    keys = {m.id: _keys(m, speakers, full) for m in memories}
    bodies = [_body(m) for m in memories]
    closeness = similarity_matrix(bodies, bodies, queries_are_questions=False)
    threshold = related_min()
    bars = language_bars(bodies, closeness, threshold) if threshold == RELATED_MEANING else np.full(closeness.shape, threshold)
    connections = []
    for i, a in enumerate(memories):
        for j in range(i + 1, len(memories)):
            b = memories[j]
            shared = _shared(keys[a.id], keys[b.id])
            strong = any(" " in s or s[:1].isupper() for s in shared) or len(shared) >= 2
            if shared and (strong or closeness[i][j] >= bars[i][j]):
                connections.append(Connection(a.id, b.id, f"both about {describe(shared)}"))
            elif closeness[i][j] >= bars[i][j]:
                one, other = _topic(keys[a.id]), _topic(keys[b.id])
                if one and other:
                    connections.append(Connection(a.id, b.id, f"close in meaning: one about {one}, the other about {other}"))
    counts: Counter = Counter()
    holders: dict[str, list[int]] = {}
    for m in memories:
        for k in keys[m.id]:
            counts[k] += 1
            holders.setdefault(k, []).append(m.id)
    linked_pairs = {(c.from_id, c.to_id) for c in connections}
    # A theme counts when two memories it joins are linked (a lone shared word is not a thread).
    shared_keys = [
        k for k, c in counts.items() if c > 1 and any((x, y) in linked_pairs for x in holders[k] for y in holders[k] if x < y)
    ]
    linked = {c.from_id for c in connections} | {c.to_id for c in connections}
    if not shared_keys and not connections:
        # Memories that share nothing get no insight: a catch-all would claim a thread.
        return ConsolidationResult(summary="", insight="", connections=[], about=())
    if shared_keys:
        # The thread: what most memories share; a phrase or a name over a single word on a tie.
        rank = {"p": 0, "e": 1, "t": 2}
        best = sorted(shared_keys, key=lambda k: (-counts[k], rank[k[0]], k))
        lead = best[0]
        theme_parts = [keys[holders[lead][0]][lead]]
        for k in best[1:]:
            if len(theme_parts) == 2:
                break
            word = keys[holders[k][0]][k]
            if set(holders[k]) == set(holders[lead]) and word.lower() not in " ".join(theme_parts).lower():
                theme_parts.append(word)
        theme = describe(theme_parts)
        on_thread = [m for m in memories if m.id in holders[lead]]
    else:
        # Close in meaning with no word in common ("Fui al médico", "War beim Arzt"): the
        # thread is the thing their words both name, in whatever language; a group whose
        # closeness names nothing in common gets no insight (each note's own subject, listed,
        # would claim a thread: "compré, leer cien años and decathlon").
        found = _shared_by_meaning([m for m in memories if m.id in linked], keys, linked_pairs)
        if found is None:
            return ConsolidationResult(summary="", insight="", connections=[], about=())
        words, on_thread = found
        theme = _join(words)
    if len(on_thread) < 2:
        on_thread = [m for m in memories if m.id in linked]
    ordered = sorted(on_thread, key=lambda m: (m.occurred_at is None, m.occurred_at or 0, m.id))
    steps = "; then ".join(f"{_short(m.summary)} [Memory {m.id}]" for m in ordered[:5])
    # The title and the text name what these memories share and only them: the rest of the
    # batch is not claimed ("8 memories about Berlin" when 2 of them were).
    insight = f"The common thread is {theme}: {_join([f'Memory {m.id}' for m in ordered])} bear on it. Together: {steps}."
    summary = f"{len(on_thread)} memories about {theme}."
    # Its sources are the memories on the thread and those linked to them; the others of
    # the group were read and share nothing with it. A thread named by meaning keeps only
    # the memories that name it: closeness alone links a chain of unlike notes.
    thread_ids = {m.id for m in on_thread}
    about = thread_ids | {
        x
        for c in connections
        for x in (c.from_id, c.to_id)
        if (c.from_id in thread_ids or c.to_id in thread_ids) and (shared_keys or {c.from_id, c.to_id} <= thread_ids)
    }
    return ConsolidationResult(
        summary=summary,
        insight=insight,
        connections=[c for c in connections if c.from_id in about and c.to_id in about],
        about=tuple(m.id for m in memories if m.id in about),
    )


# How close (cosine of e5 vectors) two single words must be to name the same thing: a
# word and its translation sit at 0.94-0.96 ("médico" / "Arzt", "dentista" / "tandarts");
# two things of one field below 0.93 ("dentista" / "restaurante" 0.91, "coche" / "bici" 0.92).
WORD_SAME_MEANING = 0.935
# Two memories already close in meaning may share a thing their words name less alike,
# each in its own language ("vacances" / "holiday" 0.92, "leche" / "melk" 0.91): their
# closest pair of words names it when it is at least this close.
WORD_RELATED = 0.9
MAX_THREAD_WORDS = 3


def _shared_by_meaning(
    notes: list[MemoryNote], keys: dict, linked_pairs: set[tuple[int, int]] = frozenset()
) -> tuple[list[str], list[MemoryNote]] | None:
    """The words (topics and names) of different memories that name one thing, and the
    memories that hold them: the largest such set by memories held, else the closest pair
    of words of two memories linked as close in meaning; None when no two memories' words
    name one thing."""
    owners: list[int] = []
    words: list[str] = []
    for index, m in enumerate(notes):
        for k, v in keys[m.id].items():
            if k.startswith(("t:", "e:")):  # "Bretagne" and "Brittany" name one place
                owners.append(index)
                words.append(v)
    if len(set(owners)) < 2:
        return None
    try:
        vectors = similarity.meaning_vectors(words)
    except Exception:  # the embedding layer down: only a word said alike names one thing
        vectors = None
    # One word said in both, once as a topic and once as a name ("quokka" / "Quokka"), names
    # one thing with or without the embedding layer.
    same = np.array([[a.lower() == b.lower() for b in words] for a in words], dtype=np.float32)
    if vectors is None or len(vectors) != len(words):
        close = same
    else:
        close = np.maximum(np.asarray(vectors, dtype=np.float32) @ np.asarray(vectors, dtype=np.float32).T, same)
    parent = list(range(len(words)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(words)):
        for j in range(i + 1, len(words)):
            if owners[i] != owners[j] and close[i, j] >= WORD_SAME_MEANING:
                parent[root(j)] = root(i)
    clusters: dict[int, list[int]] = {}
    for i in range(len(words)):
        clusters.setdefault(root(i), []).append(i)
    best = max(clusters.values(), key=lambda c: (len({owners[i] for i in c}), -min(c)))
    held = sorted({owners[i] for i in best})
    if len(held) >= 2:
        said = list(dict.fromkeys(words[i] for i in sorted(best)))[:MAX_THREAD_WORDS]
        return said, [notes[i] for i in held]
    linked = {frozenset(p) for p in linked_pairs}
    pairs = [
        (float(close[i, j]), i, j)
        for i in range(len(words))
        for j in range(i + 1, len(words))
        if owners[i] != owners[j] and frozenset((notes[owners[i]].id, notes[owners[j]].id)) in linked
    ]
    if not pairs:
        return None
    value, i, j = max(pairs)
    if value < WORD_RELATED:
        return None
    return list(dict.fromkeys((words[i], words[j]))), [notes[k] for k in sorted({owners[i], owners[j]})]


def _topic(keys: dict[str, str]) -> str:
    for prefix in ("p:", "t:", "e:"):
        for k, v in keys.items():
            if k.startswith(prefix):
                return v
    return ""


def _short(text: str, limit: int = 140) -> str:
    text = _SPEAKER.sub(_unlabel, " ".join(text.split())).rstrip(".")
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _join(items: list[str]) -> str:
    items = [str(i) for i in items]
    if not items:
        return ""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
