"""The consolidations (insights) hybrid recall adds next to its memories."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Q

from ..models import Consolidation
from .readable import usable_consolidations
from .result import Recalled
from .words import cached_stem, terms

HYBRID_CONSOLIDATIONS = 5


def for_recalled(owner, recalled: list[Recalled], q_words: list[str]) -> tuple[list[Consolidation], dict[int, list[str]]]:
    """Consolidations built over the chosen memories, and those whose text matches."""
    score: dict[int, float] = defaultdict(float)
    why: dict[int, list[str]] = defaultdict(list)
    usable = list(usable_consolidations(owner).values_list("id", flat=True)[:5000])
    if not usable:
        return [], {}
    chosen = {r.memory.pk: r.score for r in recalled}
    if chosen:
        through = Consolidation.sources.through.objects.filter(memory_id__in=list(chosen), consolidation_id__in=usable)
        built: dict[int, list[int]] = defaultdict(list)
        for cid, mid in through.values_list("consolidation_id", "memory_id"):
            built[cid].append(mid)
            score[cid] += chosen[mid]
        for cid, mids in built.items():
            why[cid].append("built from " + ", ".join(f"#{m}" for m in sorted(mids)[:5]))
    if q_words:
        # The longest words are the most specific; a LIKE per word keeps this portable.
        longest = sorted(q_words, key=len, reverse=True)[:4]
        where = Q()
        for w in longest:
            where |= Q(insight__icontains=w) | Q(summary__icontains=w)
        rows = usable_consolidations(owner).filter(where).values_list("id", "summary", "insight")[:200]
        q_stems = {cached_stem(w): w for w in q_words}
        for cid, summary, insight in rows:
            have = set(terms(f"{summary} {insight}"))
            matched = [w for s, w in q_stems.items() if s in have]
            if matched:
                score[cid] += len(matched) / len(q_stems)
                why[cid].append("matches " + ", ".join(f"'{w}'" for w in matched[:5]))
    best = sorted(score, key=lambda cid: -score[cid])[:HYBRID_CONSOLIDATIONS]
    objects = usable_consolidations(owner).in_bulk(best)
    return [objects[cid] for cid in best if cid in objects], {cid: why[cid] for cid in best if cid in objects}
