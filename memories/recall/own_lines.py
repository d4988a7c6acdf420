"""The meaning arm among the named person's own lines.

"What activities does Melanie partake in?" is answered by lines of Melanie's spread over
many sessions (a pottery class, a camping trip, swimming with the kids), none of which
says "activities". Among all the lines of a conversation such a line ranks far down by
meaning (the other speaker's lines about the same things compete); among Melanie's own
lines it ranks higher. So for a question that names a speaker, the meaning arm's deeper
list is read again with only that speaker's lines, and their ranks there lend a credit
the way the arm's own ranks do (fusion.py)."""

from __future__ import annotations

from django.db import connection

from .speaker import speaker_of, speakers_of
from .sql import MEMORY_TABLE, placeholders

# The credit of the first of the person's own lines, against the best word match's 1. 0: off.
# Measured by folds on LoCoMo dev (round 11, CHANGELOG): 0.15 is picked when conv-41 is
# held out and there loses R@5 73.0 -> 69.1 (gains R@10 84.1 -> 85.4); not picked in the
# other two folds. Off.
W_OWN_LINES = 0.0
OWN_RANK_K = 10
OWN_POOL = 600  # how deep in the meaning arm's list the person's lines are looked for
OWN_TAKE = 50  # the person's lines that get a credit


def lend(owner, relevance: dict[int, float], meaning_arm, q_stems: set[str]) -> dict[int, float]:
    """`relevance` with the credit, by meaning, of the own lines of the speakers the question names."""
    if not W_OWN_LINES or meaning_arm.vector is None:
        return relevance
    named = speakers_of(owner) & q_stems
    if not named:
        return relevance
    deep = meaning_arm.nearest(OWN_POOL)
    if not deep:
        return relevance
    ids = [pk for pk, _ in deep]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, substr(raw_text, 1, 40) FROM {MEMORY_TABLE} WHERE owner_id = %s AND id IN ({placeholders(ids)})",
            [owner.pk, *ids],
        )
        speaker = {pk: speaker_of(head) for pk, head in cursor.fetchall()}
    own = [pk for pk in ids if speaker.get(pk) in named][:OWN_TAKE]
    out = dict(relevance)
    for rank, pk in enumerate(own):
        out[pk] = out.get(pk, 0.0) + W_OWN_LINES * (OWN_RANK_K + 1) / (OWN_RANK_K + rank + 1)
    return out
