"""A reply lent the meaning of the line it answers.

"The kids loved it! They were so excited to get their hands dirty" says what the kids did
only with the line before it ("How was the pottery workshop?"). The turn right after a
line the meaning arm ranks high gets a credit by that line's rank, so a short reply can
be found by what it answers and not only by what it says. (neighbours.py lends support
after the ranking from the best-scored hits; this enters the relevance itself.)"""

from __future__ import annotations

from django.db import connection

from .neighbours import source_group
from .sql import MEMORY_TABLE, placeholders

# The credit a reply gets from the first line of the meaning arm. 0: off. Measured by folds
# on LoCoMo dev (round 11, CHANGELOG): 0.15 is picked when conv-30 is held out and there
# loses R@5 71.2 -> 67.5 and R@25 88.9 -> 87.3; not picked in the other two folds. Off.
W_REPLY = 0.0
REPLY_RANK_K = 10
REPLY_TAKE = 50  # lines of the meaning arm whose replies get a credit


def lend(owner, relevance: dict[int, float], by_meaning: list[tuple[int, float]]) -> dict[int, float]:
    if not W_REPLY or not by_meaning:
        return relevance
    asked = [pk for pk, _ in by_meaning[:REPLY_TAKE]]
    # Turns ingested together have consecutive ids: the reply to line n is n + 1 of its source.
    ids = sorted(set(asked) | {pk + 1 for pk in asked})
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, source FROM {MEMORY_TABLE} WHERE owner_id = %s AND id IN ({placeholders(ids)})", [owner.pk, *ids]
        )
        group = {pk: source_group(source or "") for pk, source in cursor.fetchall()}
    out = dict(relevance)
    for rank, pk in enumerate(asked):
        line, reply = group.get(pk), group.get(pk + 1)
        if line and reply and line[1] and line == reply:
            out[pk + 1] = out.get(pk + 1, 0.0) + W_REPLY * (REPLY_RANK_K + 1) / (REPLY_RANK_K + rank + 1)
    return out
