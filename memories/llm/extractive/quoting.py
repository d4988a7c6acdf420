"""How a picked sentence is quoted: on one line, never able to cite, with who said it and,
for a question that asks when, the date it gives."""

from __future__ import annotations

import re

from ..base import MemoryNote
from .entities import DATE_RE
from .relative_dates import RELATIVE_RE, when_said
from .sentences import Sentence

# A quoted sentence shorter than this brings the next one of its memory along.
SHORT_SENTENCE_WORDS = 8

# A citation written inside a memory's own text must not read as the engine's citation.
_CITATION_IN_QUOTE = re.compile(r"\[(Memory\s+\d+)\]", re.I)


def quote_text(text: str) -> str:
    """A memory's words as they are, on one line: the answer is plain text (the pages show
    it escaped, a note holding "<b>" shows "<b>", as on its card), and a "[Memory N]" the
    memory itself holds becomes "(Memory N)" so a quote can never cite."""
    return _CITATION_IN_QUOTE.sub(r"(\1)", " ".join(text.split()))


def quote(s: Sentence, *, when: bool) -> str:
    prefix = ""
    # Only a question that asks when gets a date first, and not when the sentence gives its
    # own ("The launch is on March 3"): the day a note was stored reads as the answer.
    if when and s.memory.occurred_at and (RELATIVE_RE.search(s.text) or not _OWN_DATE.search(s.text)):
        prefix = f"{when_said(s.text, s.memory.occurred_at)}: "
    text = s.text
    if s.following and len(text.split()) < SHORT_SENTENCE_WORDS:
        # "That race sounds great, Mel!" says little; what follows it says what it was about.
        text = f"{text} {s.following}"
    if s.lead:
        text = f"{s.lead} {text}"
    return f"- {prefix}{said_by(s.memory, text)}{quote_text(text)} [Memory {s.memory.id}]"


def said_by(note: MemoryNote, text: str) -> str:
    """ "ChatGPT said: " before a quote of an assistant's reply, so it never reads as the
    person's own fact (its text opens with the name, which then is not said twice)."""
    if not note.said_by:
        return ""
    if text.startswith(f"{note.said_by}:"):
        return ""
    return f"{note.said_by} said: "


_OWN_DATE = re.compile(rf"{DATE_RE.pattern}|\b(?:19|20)\d\d\b", DATE_RE.flags)
