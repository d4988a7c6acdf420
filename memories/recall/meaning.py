"""The meaning arm: the owner's memories closest to the question by embedding.

The arm is begun before the lexical arm and finished after it: the question's embedding
(the local model on the CPU, or a provider's API over the network) and, over numpy, the
search with it are done on a worker thread while the lexical arm reads the full-text
index, so the two cost about the longer of them rather than their sum (at 100k memories
on 2 cores: 35 -> 26 ms). The worker touches no database: the owner's matrix is brought
up to date on the asking thread before (Django's connections are per thread), and
pgvector's search, a query, is made there after."""

from __future__ import annotations

import logging
import re
from concurrent.futures import Future, ThreadPoolExecutor

from .. import embeddings
from ..embeddings import hubness
from ..embeddings import index as vector_index
from . import speaker
from .words import cached_stem

log = logging.getLogger(__name__)

MEANING_POOL = 150  # memories the meaning arm hands over
MEANING_REASON_RANKS = 50  # "close in meaning" is said of the arm's first this many

# A name in the question is the lexical arm's to find: it matches the memories that hold
# it, word for word. Embedded, a name pulls the question towards every line that says it
# ("Hey Caroline!") and away from the lines about her that do not. So the question is
# embedded without its names: capitalised words past a sentence's first (not "I").
# A speaker's name stays: every line of theirs opens with it ("Ann: ..."), so it is part of
# what those lines mean. LoCoMo dev's turns stored as notes (no "Speaker: " opening),
# R@10 / 50: the arm alone about 22 / 53 -> 63.9 / 85.7, hybrid + local 65.6 / 81.8 ->
# 71.3 / 86.9; as conversations, hybrid + local (eval_recall_arms.py) 82.5 / 93.4 with
# every name, 81.9 / 93.3 with none, 82.8 / 93.4 with the speakers' (README, "Measured").
EMBED_WITHOUT_NAMES = True
# A word, and whether a sentence ends before it (its first word is capitalised as a word).
_WORD_RE = re.compile(r"(^\W*|[.!?]\W*\s\W*)?\b(\w[\w'’-]*)")


def question_for_meaning(question: str, speakers: frozenset[str] = frozenset()) -> str:
    """The question as the meaning arm embeds it: without the names in it (see above) but
    those of speakers (stems: every line of theirs opens with the name, "Ann: ...", so the
    name is part of what it means), or whole when nothing else would be left. (In a
    language that capitalises every noun, as German does, its nouns go too; the lexical
    arm still matches them.)"""
    if not EMBED_WITHOUT_NAMES:
        return question

    def keep(match: re.Match) -> str:
        opens, word = match.group(1), match.group(2)
        is_name = opens is None and word[0].isupper() and word != "I" and not word.startswith(("I'", "I’"))
        if is_name and speakers and cached_stem(re.sub(r"['’]s$", "", word).lower()) in speakers:
            return match.group(0)
        return " " if is_name else match.group(0)

    rest = " ".join(_WORD_RE.sub(keep, question).split())
    return rest if any(c.isalnum() for c in rest) else question


# Questions embedded at once per process (the local model takes them in turn anyway).
_embedding = ThreadPoolExecutor(max_workers=2, thread_name_prefix="question-embedding")


def _embed_and_search(embedder, text: str, search) -> tuple:
    """On the worker: the question's vector and, with numpy's search (`search` is
    index.searcher's, which needs no database), the owner's nearest memories too, so the
    product is done before the lexical arm is (None: the asking thread searches)."""
    vector = embeddings.embed_question(embedder, text)
    if search is None:
        return vector, None
    return vector, search(vector, MEANING_POOL, hubness.content_free_direction(embedder))


class MeaningArm:
    """One question's meaning arm: `begin` starts embedding the question (and, over numpy,
    searching with it), `nearest` waits for what it found."""

    def __init__(self, owner, embedder=None, vector: Future | None = None):
        self.owner = owner
        self.embedder = embedder
        self.vector = vector  # a Future of (the question's vector, the nearest or None)

    @classmethod
    def begin(cls, owner, question: str) -> MeaningArm:
        if not question.strip():
            return cls(owner)
        try:
            # The backend is chosen on the asking thread: `embeddings.using` is a context
            # variable the worker would not see.
            embedder = embeddings.get_embedder()
        except embeddings.EmbeddingError as exc:
            log.warning("recall without the meaning arm: %s", exc)
            return cls(owner)
        if embedder is None:
            return cls(owner)
        search = vector_index.searcher(owner_id=owner.pk, model=embedder.model, dim=embedder.dim)
        text = question_for_meaning(question[:2000], speaker.speakers_of(owner))
        return cls(owner, embedder, _embedding.submit(_embed_and_search, embedder, text, search))

    def unseen(self, ids) -> frozenset[int]:
        """Those of `ids` the arm cannot judge: memories with no vector of the active model
        (yet: vectors follow in the background). Empty when the arm is off."""
        if self.vector is None or not ids:
            return frozenset()
        return frozenset(ids) - vector_index.with_vectors(ids=ids, owner_id=self.owner.pk, model=self.embedder.model)

    def question_vector(self):
        """The question's vector as the arm embedded it (without its names), or None."""
        if self.vector is None:
            return None
        try:
            return self.vector.result()[0]
        except embeddings.EmbeddingError:
            return None

    def nearest(self, pool: int = MEANING_POOL) -> list[tuple[int, float]]:
        """The owner's memories closest to the question, best first, with their score
        (cosine less what is typical: embeddings/hubness.py). Empty when embeddings are
        off, the owner has no vectors of the active model, or the backend fails (recall
        then stands on its lexical arm)."""
        if self.vector is None:
            return []
        try:
            vector, found = self.vector.result()
            if found is not None and pool <= MEANING_POOL:
                return found[:pool]
            return vector_index.search(
                owner_id=self.owner.pk,
                model=self.embedder.model,
                dim=self.embedder.dim,
                query=vector,
                limit=pool,
                content_free=hubness.content_free_direction(self.embedder),
            )
        except embeddings.EmbeddingError as exc:
            log.warning("recall without the meaning arm: %s", exc)
            return []
