"""The class arm: a question that names a class ("What activities does Ann do?", "Which
martial arts has Jon tried?") is answered by lines that are instances of it ("Ann: the
pottery class was fun") and seldom say the class's word. The whole question, embedded,
is about Ann and doing; its class noun alone, embedded as a question ("activities"),
is nearer the lines that are instances of it. So the class phrase is embedded on its
own (beside the question, on the same worker) and the owner's memories nearest it lend
a credit by rank, as the meaning arm's do (recall/fusion.py).

The class phrase is read from the question's grammar: the words between "what"/"which"
(and "kinds of") and the verb's auxiliary, or after "what are Ann's". A question that
asks for a time ("which month") has none."""

from __future__ import annotations

import logging
import re
from concurrent.futures import Future

from .. import embeddings
from ..embeddings import hubness
from ..embeddings import index as vector_index
from django.db.models.functions import Substr

from .meaning import _embedding
from .readable import readable_memories
from .speaker import speaker_of
from .words import cached_stem

log = logging.getLogger(__name__)

W_CLASS_ARM = 0.25  # the credit of the arm's first rank, against the best word match's 1
CLASS_RANK_K = 10
CLASS_POOL = 50  # memories the arm hands over
WITH_SPEAKER = True  # the class phrase embedded with the name of the person asked about
SPEAKER_ONLY = True  # only the lines of the person asked about, when they speak in the owner's memories
SPEAKER_SEARCH = 300  # ... found among this many nearest

# Auxiliaries and copulas end the class phrase (a closed class).
_AUX = r"(?:do|does|did|has|have|had|is|are|was|were|will|would|can|could|might|may|should|shall)"
_CLASS_Q = re.compile(
    rf"^\W*(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?((?:[a-z][\w'’-]*\s+){{0,3}}?[a-z][\w'’-]*)\s+{_AUX}\b",
    re.I,
)
# "What are Ann's hobbies?", "What were some of Jon's favourite books?"
_POSSESSED_Q = re.compile(
    r"^\W*(?i:what|which)\s+(?i:are|were)\s+(?i:some\s+(?:of\s+)?)?(?i:the\s+)?([A-Z][\w-]*)['’]s?\s+((?:[a-z][\w'’-]*\s*){1,4})\W*$"
)
# A class phrase is a noun phrase: not a pronoun or a time unit ("which month").
_NOT_CLASS = frozenset(
    "i you he she it we they this that these those time day days date year years month months week weeks".split()
)


def class_phrase(question: str) -> tuple[str, str]:
    """(the class phrase the question names, the name of whom it asks about), or ("", "")."""
    q = " ".join((question or "").split())
    m = _POSSESSED_Q.match(q)
    if m:
        phrase, name = m.group(2).strip(), m.group(1)
    else:
        m = _CLASS_Q.match(q)
        if not m:
            return "", ""
        phrase = m.group(1).strip()
        after = q[m.end() :]
        found = re.search(r"\b([A-Z][a-z][\w-]*)\b", after)
        name = found.group(1) if found else ""
    words = phrase.lower().split()
    if not words or words[-1] in _NOT_CLASS or words[0] in _NOT_CLASS or any(re.fullmatch(_AUX, w) for w in words):
        return "", ""
    return phrase, name


def _embed_and_search(embedder, text: str, search, limit: int) -> tuple:
    vector = embeddings.embed_question(embedder, text)
    if search is None:
        return vector, None
    return vector, search(vector, limit, hubness.content_free_direction(embedder))


class ClassArm:
    """One question's class arm: `begin` embeds the class phrase (and, over numpy,
    searches with it) on the question-embedding worker; `credits` waits for it."""

    def __init__(self, owner, embedder=None, found: Future | None = None, name: str = ""):
        self.owner = owner
        self.embedder = embedder
        self.found = found
        self.name = name

    @classmethod
    def begin(cls, owner, question: str, embedder) -> ClassArm:
        if embedder is None or not W_CLASS_ARM:
            return cls(owner)
        phrase, name = class_phrase(question[:2000])
        if not phrase or (SPEAKER_ONLY and not name):
            return cls(owner)
        text = f"{name}: {phrase}" if WITH_SPEAKER and name else phrase
        search = vector_index.searcher(owner_id=owner.pk, model=embedder.model, dim=embedder.dim)
        limit = SPEAKER_SEARCH if SPEAKER_ONLY and name else CLASS_POOL
        return cls(owner, embedder, _embedding.submit(_embed_and_search, embedder, text, search, limit), name)

    def credits(self) -> dict[int, float]:
        """Each memory's credit by its rank near the class phrase (empty without one)."""
        if self.found is None:
            return {}
        try:
            vector, found = self.found.result()
            if found is None:
                found = vector_index.search(
                    owner_id=self.owner.pk,
                    model=self.embedder.model,
                    dim=self.embedder.dim,
                    query=vector,
                    limit=SPEAKER_SEARCH if SPEAKER_ONLY and self.name else CLASS_POOL,
                    content_free=hubness.content_free_direction(self.embedder),
                )
        except embeddings.EmbeddingError as exc:
            log.warning("recall without the class arm: %s", exc)
            return {}
        if SPEAKER_ONLY and self.name:
            found = self._said_by_name(found)
        found = found[:CLASS_POOL]
        return {pk: W_CLASS_ARM * (CLASS_RANK_K + 1) / (CLASS_RANK_K + rank + 1) for rank, (pk, _) in enumerate(found)}

    def _said_by_name(self, found: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """Those of `found` in the words of the person asked about ("Ann: ..."): none
        when nobody speaks under the name (notes), which the arm leaves as they are."""
        stem = cached_stem(self.name.lower())
        heads = dict(
            readable_memories(self.owner)
            .filter(pk__in=[pk for pk, _ in found])
            .annotate(head=Substr("raw_text", 1, 40))
            .values_list("pk", "head")
        )
        own = [(pk, score) for pk, score in found if speaker_of(heads.get(pk)) == stem]
        return own
