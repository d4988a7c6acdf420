"""Two stages for sources with positions, and breadth for questions that ask for a set.

A conversation's sessions (or a document's sections: what a positioned source names,
`chat:D3` of `chat:D3:14`, see neighbours.source_group) are ranked first, by the matches
they hold; the turns of the best sessions then gain on the turns of the others, fused
with the turns' own ranking. A question that asks for several things ("What activities
...", "Which places ...", "How many times ...") is answered from several sessions, so its
first places are spread over them instead of going to near-copies from one."""

from __future__ import annotations

import re
from collections import defaultdict

from .candidates import Candidate
from .neighbours import source_group

# Sessions whose turns gain, and how much a turn of the best one gains (a share of the
# best match's score; the others by their strength against the best). 0: off.
W_SESSION = 0.0
TOP_SESSIONS = 3
# The same for a question that asks for a time (its event told in one or two sessions). 0: off.
TIME_W_SESSION = 0.0
SESSION_MATCHES = 3  # a session's strength: the sum of its best this many matches' scores

# Breadth: a candidate's score is multiplied by this for each candidate of its session
# already placed above it, within the first BREADTH_HEAD places. 1: off.
BREADTH_DECAY = 1.0
BREADTH_HEAD = 60
# The same for a question that asks for a time: an event is told more than once (planned,
# done, recalled), in several sessions, and the turns around the best mention must not
# take the places of the other mentions. 1: off.
TIME_BREADTH_DECAY = 1.0

# A question asking for a set: "what/which" and a plural noun, "how many", "where has".
_NOT_PLURAL = frozenset("is was does has this its his hers ours yours theirs as us always".split())
_SET = re.compile(
    r"^\W*(?:(?:what|which)\s+(?:kinds?\s+of\s+|types?\s+of\s+|sorts?\s+of\s+)?([a-z]+s)\b|how\s+many\b|where\s+(?:has|have)\b)",
    re.I,
)


def asks_for_a_set(question: str) -> bool:
    m = _SET.search(question or "")
    return bool(m) and not (m.group(1) and (m.group(1).lower() in _NOT_PLURAL or m.group(1).lower().endswith("ss")))


def _session(c: Candidate) -> str | None:
    group, positioned = source_group(c.source)
    return group if positioned else None


def prefer_best_sessions(candidates, weight: float | None = None) -> None:
    """Stage one: the sessions by the matches they hold; stage two: each turn an arm found
    in one of the best TOP_SESSIONS gains W_SESSION times its session's strength against
    the best's, on top of its own score."""
    weight = W_SESSION if weight is None else weight
    if not weight:
        return
    by_session: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        session = _session(c)
        if session is not None and c.relevance > 0:
            by_session[session].append(c)
    strength = {s: sum(sorted((c.base for c in cs), reverse=True)[:SESSION_MATCHES]) for s, cs in by_session.items()}
    best = sorted(strength, key=lambda s: -strength[s])[:TOP_SESSIONS]
    if not best or strength[best[0]] <= 0:
        return
    top = strength[best[0]]
    for s in best:
        for c in by_session[s]:
            c.bonus += weight * strength[s] / top


def spread(ranked: list[Candidate], decay: float | None = None) -> list[Candidate]:
    """The first BREADTH_HEAD places, chosen greedily by score discounted for each place
    its session already holds above (memories with no session are never discounted)."""
    decay = BREADTH_DECAY if decay is None else decay
    if decay >= 1.0 or len(ranked) < 2:
        return ranked
    head, rest = list(ranked[:BREADTH_HEAD]), ranked[BREADTH_HEAD:]
    placed: dict[str, int] = defaultdict(int)
    out = []
    while head:

        def effective(c: Candidate) -> float:
            session = _session(c)
            return c.score * (decay ** placed[session] if session is not None else 1.0)

        pick = max(head, key=effective)
        head.remove(pick)
        out.append(pick)
        session = _session(pick)
        if session is not None:
            placed[session] += 1
    return out + rest
