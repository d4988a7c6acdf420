"""The speaker signal: a question about Ann is answered by what Ann said ("Ann: ...")."""

from __future__ import annotations

import re
import threading
import time
from functools import lru_cache

from django.db.models.functions import Substr

from .readable import readable_memories
from ..textutil import NOT_ENTITIES
from .words import cached_stem

W_SPEAKER = 0.1  # the memory is in the words of a person the question names ("Ann: ...")
OTHER_SPEAKER = 0.6  # ... and a line of someone else's, when it names one, weighs this much
SPEAKER_KEEP_RANK = 3  # ... but the question's best match stays among the first this many

# A transcript line, "Ann: ..." or "Ann Lee: ...": its speaker. Labels ("Note: ...",
# "Summary: ...") are not people.
_SPEAKER = re.compile(r"\s*([A-Z][A-Za-z'’.-]*(?: [A-Z][A-Za-z'’.-]*){0,2})\s*:\s")


def speaker_label(text: str | None) -> str:
    """ "Ann Lee: " when a text opens with a speaker's label (not "Note: "), else ""."""
    m = _SPEAKER.match(text or "")
    return f"{m.group(1)}: " if m and m.group(1).split()[0] not in NOT_ENTITIES else ""


@lru_cache(maxsize=100_000)
def speaker_of(head: str | None) -> str:
    """The stem of the first name a "Name: ..." text opens with, or ""."""
    m = _SPEAKER.match(head or "")
    first = m.group(1).split()[0] if m else ""
    return cached_stem(first.lower()) if first and first not in NOT_ENTITIES else ""


def own_words_bonus(speaker: str, named: frozenset[str]) -> float:
    """What a line gains in its base score for being in the words of a person the question names."""
    return W_SPEAKER if speaker and speaker in named else 0.0


def prefer_named_speakers(candidates, named: frozenset[str]) -> None:
    """A question about Ann is answered by what Ann said far more often than by what
    others said to her. Only the final order: a line of theirs still brings Ann's
    reply to it along. But the question's best match keeps a place among the first
    SPEAKER_KEEP_RANK whoever said it: a line of someone else's that holds what is
    asked ("What did Bob tell Ann about the job?") must not sink below Ann's small talk."""
    best = max(candidates, key=lambda c: (c.relevance, c.base), default=None)
    for c in candidates:
        if c.speaker and c.speaker not in named:
            c.bonus -= (1 - OTHER_SPEAKER) * c.score
    if best is not None and best.relevance > 0 and best.speaker and best.speaker not in named:
        above = sorted((c.score for c in candidates if c is not best), reverse=True)
        if len(above) >= SPEAKER_KEEP_RANK - 1 and SPEAKER_KEEP_RANK > 1:
            floor = above[SPEAKER_KEEP_RANK - 2] - 1e-6
            if best.score < floor:
                best.bonus += floor - best.score


# Who speaks in the owner's conversations, read from their newest lines and kept a minute:
# the meaning arm keeps these names in the question it embeds (every line of theirs opens
# with the name, so the name is part of what those lines mean). Kept by the account, not
# its id alone: an id can be given again after a rolled-back sign-up or evaluation (SQLite
# rolls its counter back too), and the next account must not get the last one's speakers.
SPEAKERS_FROM_NEWEST = 2000
SPEAKERS_SECONDS = 60.0
_speakers: dict[tuple, tuple[float, frozenset[str]]] = {}
_speakers_lock = threading.Lock()


def speakers_of(owner) -> frozenset[str]:
    """The stems of the first names the owner's newest memories open with ("Ann: ...")."""
    now = time.monotonic()
    account = (owner.pk, getattr(owner, "date_joined", None))
    with _speakers_lock:
        cached = _speakers.get(account)
    if cached and now - cached[0] < SPEAKERS_SECONDS:
        return cached[1]
    heads = (
        readable_memories(owner)
        .order_by("-pk")
        .annotate(head=Substr("raw_text", 1, 40))
        .values_list("head", flat=True)[:SPEAKERS_FROM_NEWEST]
    )
    found = frozenset(s for s in map(speaker_of, heads) if s)
    with _speakers_lock:
        if len(_speakers) > 10_000:
            _speakers.clear()
        _speakers[account] = (now, found)
    return found


def clear_speakers_cache() -> None:
    with _speakers_lock:
        _speakers.clear()
