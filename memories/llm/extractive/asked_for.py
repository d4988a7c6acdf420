"""What kind of thing a question asks for (a decision, a person, a date, a place, a number,
an overview) and how much a sentence gives it."""

from __future__ import annotations

import re

from .entities import AMOUNT_RE, DATE_RE, extract_entities
from .relative_dates import RELATIVE_RE

_DECISION_Q = re.compile(
    r"\b(?:decid\w*|decision\w*|agree\w*|plan\w*|conclu\w*|resolv\w*|settled|chose|choose|commit\w*|outcome)\b", re.I
)
_DECISION_S = re.compile(
    r"\b(?:decid\w*|decision\w*|agree\w*|will|shall|ships?|launch\w*|owns?|leads?|starts?|deadline|due|by\s+(?:the\s+)?(?:end|[A-Z]\w+\s+\d)|"
    r"capped|approved?|plan(?:s|ned)?\s+to|going\s+to|committed|assigned|next\s+step\w*|action\s+items?)\b",
    re.I,
)
_WHO_Q = re.compile(r"^\s*(?:who|whom|whose)\b|\bwhich\s+(?:person|people|colleague|friend|one)\b", re.I)
_WHEN_Q = re.compile(
    r"^\s*when\b|\bwhat\s+(?:date|day|time|year|month|week)\b|\bhow\s+long\s+ago\b|\bwhich\s+(?:year|month|day)\b", re.I
)
_WHERE_Q = re.compile(r"^\s*where\b|\bwhich\s+(?:city|country|place|town)\b", re.I)
_BROAD_Q = re.compile(
    r"\b(?:know|say|says|said|tell|learn\w*|think|read)\b.{0,80}\babout\b|^\s*(?:summari[sz]e|what\s+about)\b", re.I
)
_COUNT_Q = re.compile(r"\bhow\s+(?:many|much|long|often|old|far)\b", re.I)
_NUMBER = re.compile(
    r"\b\d+(?:[.,]\d+)?\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|dozen|once|twice)\b",
    re.I,
)
_PLACE_S = re.compile(r"\b(?:in|at|from|to|near|moved|live[sd]?|living|visit\w*)\s+(?:the\s+)?\w", re.I)


def wants(question: str) -> set[str]:
    wants = set()
    if _DECISION_Q.search(question):
        wants.add("decision")
    if _WHO_Q.search(question):
        wants.add("who")
    if _WHEN_Q.search(question):
        wants.add("when")
    if _WHERE_Q.search(question):
        wants.add("where")
    if _COUNT_Q.search(question):
        wants.add("count")
    if _BROAD_Q.search(question):
        wants.add("broad")
    return wants


def fits(sentence: str, wants: set[str], question: str = "") -> float:
    bonus = 0.0
    asked = question.lower()
    if "decision" in wants and _DECISION_S.search(sentence):
        bonus += 0.35
    if "when" in wants and (
        DATE_RE.search(sentence) or RELATIVE_RE.search(sentence) or re.search(r"\b(?:19|20)\d\d\b", sentence)
    ):
        bonus += 0.3
    if "count" in wants and (_NUMBER.search(sentence) or AMOUNT_RE.search(sentence)):
        bonus += 0.3
    # The answer to "who" or "where" is a name the question does not already hold.
    new_names = [e for e in extract_entities(sentence) if e[:1].isupper() and not DATE_RE.fullmatch(e) and e.lower() not in asked]
    if "who" in wants and new_names:
        bonus += 0.3
    if "where" in wants and new_names and _PLACE_S.search(sentence):
        bonus += 0.3
    return bonus
