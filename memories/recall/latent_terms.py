"""The latent-terms arm: the owner's memories that share the most of the question's
latent terms (embeddings/terms.py: the local model's sparse head), by an inverted index
(embeddings/terms_index.py). It matches by concept, where the lexical arm matches words
and the meaning arm one dense vector.

Like the meaning arm it is begun before the lexical arm and finished after it: the
owner's index is brought up to date on the asking thread (it reads the table), and the
question's terms are computed and searched on a worker thread meanwhile. Off (an empty
list) with embeddings off, with a provider's embeddings (they have no such head), with
MEMORY_LATENT_TERMS off, and when the model fails: recall stands on its other arms.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor

from .. import embeddings
from ..embeddings import terms as latent
from ..embeddings import terms_index
from . import speaker
from .meaning import question_for_meaning

log = logging.getLogger(__name__)

TERMS_POOL = 150  # memories the arm hands over
WITHOUT_NAMES = True  # the question's names left out, as the meaning arm does (see begin)

_worker = ThreadPoolExecutor(max_workers=2, thread_name_prefix="question-terms")


# A question's terms cost one pass of the model, as its vector does: the same question
# asked again (once per k by evaluate, a page reload, an agent's retry) reuses them, as
# embeddings.embed_question reuses the vector.
QUESTION_CACHE_SIZE = 1000
_questions: OrderedDict[str, latent.Terms] = OrderedDict()
_questions_lock = threading.Lock()


def question_terms(text: str) -> latent.Terms:
    with _questions_lock:
        if text in _questions:
            _questions.move_to_end(text)
            return _questions[text]
    found = latent.of_texts([text], query=True)[0]
    with _questions_lock:
        _questions[text] = found
        while len(_questions) > QUESTION_CACHE_SIZE:
            _questions.popitem(last=False)
    return found


def _terms_and_search(text: str, search) -> list[tuple[int, float]]:
    return search(question_terms(text), TERMS_POOL)


class TermsArm:
    def __init__(self, owner, found: Future | None = None):
        self.owner = owner
        self.found = found

    @classmethod
    def begin(cls, owner, question: str) -> TermsArm:
        if not question.strip():
            return cls(owner)
        try:
            embedder = embeddings.get_embedder()
        except embeddings.EmbeddingError:
            return cls(owner)
        if not latent.in_use(embedder):
            return cls(owner)
        search = terms_index.searcher(owner_id=owner.pk)
        # Without the names in it, as the meaning arm embeds it (recall/meaning.py): a name
        # is the lexical arm's to match, and in notes that do not say it, it only misleads.
        text = question_for_meaning(question[:2000], speaker.speakers_of(owner)) if WITHOUT_NAMES else question[:2000]
        return cls(owner, _worker.submit(_terms_and_search, embeddings.question_text(text), search))

    def nearest(self, pool: int = TERMS_POOL) -> list[tuple[int, float]]:
        """The owner's memories sharing most of the question's latent terms, best first,
        with their score (a dot product); empty when the arm is off."""
        if self.found is None:
            return []
        try:
            return self.found.result()[:pool]
        except Exception as exc:  # the arm failing must not fail recall
            log.warning("recall without the latent-terms arm: %s", exc)
            return []

    def unseen(self, ids) -> frozenset[int]:
        """Those of `ids` with no latent terms yet (they follow in the background with the
        vector); empty when the arm is off."""
        if self.found is None or not ids:
            return frozenset()
        return frozenset(ids) - terms_index.holding(ids=ids, owner_id=self.owner.pk)
