"""Facts change: a new memory that changes what an older one states supersedes it.

After extraction, the newest few older memories of the same owner that could state the
same fact (the candidates) are judged by the provider in one call: a model with a
structured prompt, or the offline rules (llm/extractive/update_rules.py). Each older memory judged
updated is marked superseded (`outdated_by`, true until the newer one's `occurred_at`),
linked to its successor with the relationship "updates: ...", and both get a history
event. Nothing is lost: the old memory stays in the bank and, ranked below its successor,
in recall. A wrong call is undone with `undo_update` ("not an update"), which is recorded
and remembered so the same pair is not judged an update again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Q

from .. import embeddings, textutil
from ..recall import search
from ..recall.lexical_query import query_words
from ..embeddings import index as vector_index
from ..recall.current import not_expired
from ..llm import ProviderError, circuit, get_provider, provider_name
from ..llm.base import MemoryNote, Provider
from ..models import Event, Memory, MemoryLink, MemoryVector
from .embed import embed_text
from .history import SYSTEM, Actor, record

log = logging.getLogger(__name__)

# Older memories judged per new memory: the newest of the best matches. Few, so one model
# call stays small, and an update is nearly always of something said recently about it.
CANDIDATES = 8
LEXICAL_POOL = 30
LINK_PREFIX = MemoryLink.UPDATES
# Words for one attribute said in different words: "I moved to Berlin" must find "I live
# in Paris", with which it shares no word.
WORD_FAMILIES = [
    "live lives living lived moved move moving relocated relocate home address based apartment flat house city reside",
    "work works working job employer employed joined hired company quit left position role title promoted startup teacher teaching",
    "dating partner girlfriend boyfriend married engaged wife husband broke split seeing divorced single relationship",
    "cost costs price rent salary fee pay raised increased subscription budget charge",
    "favorite favourite prefer switched use drink drive car editor",
    "vegetarian vegan pescatarian meat eat eating fish diet",
    "smoke smoking drink drinking",
    "school elementary college university class",
    "lead leads manager boss owner owned took over runs doctor dentist",
    "code password phone number email",
]
_FAMILIES = [set(f.split()) for f in WORD_FAMILIES]
_FAMILY_STEMS = [{textutil.stem(w) for w in f} for f in _FAMILIES]
# The newest memories before it are judged too, whatever their words: a change usually
# follows soon after what it changes, and is often said in other words ("I'm a teacher at
# Lincoln High", then "I left teaching and joined a startup").
RECENT = 3

# Where more arms (e.g. embeddings, nearest in meaning) plug in: each takes the new memory
# and a limit and returns ids of the owner's memories, best first.
Arm = Callable[[Memory, int], list[int]]
EXTRA_ARMS: list[Arm] = []


def _query_words(memory: Memory) -> list[str]:
    text = f"{memory.raw_text[:2000] or memory.summary} {' '.join(map(str, memory.entities))}"
    words = list(dict.fromkeys(query_words(text)))
    have = {textutil.stem(w) for w in textutil.words(text)}
    for family, stems in zip(_FAMILIES, _FAMILY_STEMS):
        if stems & have:
            words.extend(w for w in sorted(family) if w not in words)
    return words[:60]


def lexical_arm(memory: Memory, limit: int) -> list[int]:
    hits = search.lexical_search(owner=memory.owner, query=_query_words(memory), limit=limit)
    return [h.memory_id for h in hits]


def recent_arm(memory: Memory, limit: int) -> list[int]:
    older = Q(occurred_at__lt=memory.occurred_at) | Q(occurred_at=memory.occurred_at, pk__lt=memory.pk)
    rows = Memory.objects.owned_by(memory.owner_id).filter(status=Memory.Status.READY).filter(older)
    return list(rows.order_by("-occurred_at", "-pk").values_list("pk", flat=True)[: min(limit, RECENT)])


# The meaning arm: the owner's memories closest in meaning to the new one (what it says in
# words the lexical arm has no family for: "Sold the Civic" for "I drive a Civic" shares a
# word, "Traded the Trek for a Brompton" for "I ride a road bike" does not).
# The index's search is the embedding layer's public one (recall's meaning arm uses it).
MEANING_POOL = 12


def _vector_of(memory: Memory) -> tuple[np.ndarray, str, int] | None:
    """The memory's vector (query, model, dim): its stored one, else its text embedded now.
    Vectors follow in the background (services/embed.py), so a memory just extracted has
    none yet: its text is embedded here (in the extraction's worker), and its stored vector
    still comes later. None when embeddings are off. Kept on the instance for the rest of
    its check (the candidates' search and their nearness read it: one embedding, not two)."""
    text = embed_text(memory)
    kept = memory.__dict__.get("_update_check_vector")
    if kept is not None and kept[0] == text:
        return kept[1]
    row = MemoryVector.objects.owned_by(memory.owner_id).filter(memory=memory).first()
    if row is not None:
        vector = np.frombuffer(row.vector, dtype="<f4"), row.model, row.dim
    else:
        embedder = embeddings.get_embedder()
        if embedder is None:
            return None
        query = np.asarray(embedder.embed_documents([text])[0], dtype=np.float32)
        vector = query, embedder.model, embedder.dim
    memory.__dict__["_update_check_vector"] = (text, vector)
    return vector


def meaning_arm(memory: Memory, limit: int) -> list[int]:
    """The new memory's vector searched among the owner's."""
    try:
        vector = _vector_of(memory)
        if vector is None:
            return []
        query, model, dim = vector
        found = vector_index.search(
            owner_id=memory.owner_id, model=model, dim=dim, query=query, limit=min(limit, MEANING_POOL) + 1
        )
    except embeddings.EmbeddingError as exc:
        log.warning("update candidates without the meaning arm: %s", exc)
        return []
    return [pk for pk, _ in found if pk != memory.pk]


# How near each candidate is to the new memory, against the owner's own memories: an
# embedding model's cosines crowd together (e5's between 0.7 and 0.9), so two of a
# person's unrelated notes ("Juju turns 11 today!! Skating party ..." / "Adopted Poutine
# from the SPCA") can read as close as a fact and its change; what tells them apart is
# how much closer a candidate is than the owner's typical note. Measured over the pairs of
# two scenario sets written by others (CHANGELOG, round 34): the changes found sat 2.0 to
# 4.7 standard deviations above the mean, the background notes wrongly marked -0.7 to 2.1.
# The closeness is read against the owner's newest vectors (a sample: enough for a mean
# and a spread, and one bounded read per check whatever the store's size); too few
# memories give no spread worth reading.
NEARNESS_SAMPLE = 400
NEARNESS_MIN_MEMORIES = 6


def nearness(memory: Memory, others: list[Memory]) -> dict[int, float]:
    """For each of `others` with a vector: how much closer in meaning it is to `memory`
    than the owner's memories are on average, in standard deviations of their closeness
    (the memory itself left out). Empty when embeddings are off or the owner has fewer
    than NEARNESS_MIN_MEMORIES other memories with vectors."""
    try:
        vector = _vector_of(memory)
    except embeddings.EmbeddingError as exc:
        log.warning("update check without nearness: %s", exc)
        return {}
    if vector is None:
        return {}
    query, model, dim = vector
    rows = MemoryVector.objects.owned_by(memory.owner_id).filter(model=model, dim=dim).exclude(memory_id=memory.pk)
    sample = dict(rows.order_by("-memory_id").values_list("memory_id", "vector")[:NEARNESS_SAMPLE])
    if len(sample) < NEARNESS_MIN_MEMORIES:
        return {}
    wanted = {m.pk for m in others} - set(sample)
    vectors = {**sample, **dict(rows.filter(memory_id__in=wanted).values_list("memory_id", "vector"))}
    ids = list(vectors)
    matrix = np.stack([np.frombuffer(bytes(vectors[pk]), dtype="<f4") for pk in ids])
    closeness = dict(zip(ids, (matrix @ np.asarray(query, dtype=np.float32)).tolist(), strict=True))
    return above_typical([closeness[pk] for pk in sample], {m.pk: closeness[m.pk] for m in others if m.pk in closeness})


def above_typical(typical: list[float], wanted: dict) -> dict:
    """Each of `wanted`'s closeness in standard deviations above the mean of `typical` (the
    owner's memories' closeness to the same memory); empty when they are too few or all
    alike."""
    if len(typical) < NEARNESS_MIN_MEMORIES:
        return {}
    sample = np.asarray(typical, dtype=np.float64)
    spread = float(sample.std())
    if spread <= 1e-6:
        return {}
    mean = float(sample.mean())
    return {key: (value - mean) / spread for key, value in wanted.items()}


def candidates(memory: Memory, *, limit: int = CANDIDATES, arms: list[Arm] | None = None) -> list[Memory]:
    """Older memories of the same owner that may state a fact this one changes: the few
    newest, then the best matches by shared words (and any extra arm), at most `limit`,
    newest first; only current ones (not superseded, expired or deleted) and none already
    judged "not an update" of it."""
    ids: dict[int, None] = {}
    # The few newest first, then the other arms in turns (each arm's best, then each
    # one's second...): words and meaning each get their best matches in.
    first, *others = arms if arms is not None else [recent_arm, lexical_arm, meaning_arm, *EXTRA_ARMS]
    ids.update(dict.fromkeys(first(memory, LEXICAL_POOL)))
    ranked = [arm(memory, LEXICAL_POOL) for arm in others]
    for depth in range(max(map(len, ranked), default=0)):
        ids.update(dict.fromkeys(found[depth] for found in ranked if depth < len(found) and found[depth] != memory.pk))
    ids.pop(memory.pk, None)
    if not ids:
        return []
    older = Q(occurred_at__lt=memory.occurred_at) | Q(occurred_at=memory.occurred_at, pk__lt=memory.pk)
    rows = (
        Memory.objects.filter(
            owner_id=memory.owner_id,
            pk__in=list(ids),
            status=Memory.Status.READY,
            outdated_by__isnull=True,
            duplicate_of__isnull=True,
        )
        .filter(older)
        .filter(not_expired())
    ).in_bulk()
    usable = [rows[pk] for pk in ids if pk in rows and memory.pk not in (rows[pk].metadata or {}).get("not_updated_by", [])]
    return sorted(usable[:limit], key=lambda m: (m.occurred_at, m.pk), reverse=True)


def note_of(memory: Memory, nearness: float | None = None) -> MemoryNote:
    return MemoryNote(
        id=memory.pk,
        nearness=nearness,
        summary=memory.summary,
        text=memory.raw_text[:4000],
        source=memory.source,
        entities=tuple(map(str, memory.entities)),
        topics=tuple(map(str, memory.topics)),
        importance=memory.importance,
        occurred_at=memory.occurred_at,
    )


def needs_update_check(memory: Memory) -> bool:
    # What an assistant said never outdates a fact of the person's ("since you live in Paris").
    return settings.MEMORY_DETECT_UPDATES and memory.status == Memory.Status.READY and not memory.metadata.get("said_by")


def check_later() -> bool:
    """Whether a bulk ingest leaves its memories' update checks to the worker that makes
    their vectors: when embeddings are on. The check by meaning searches with the new
    memory's vector, which follows in the background, and without it embeds the text on
    the spot (with the local model about 50 ms a memory, and the judge's sentences as much
    again): done in the ingest, it made a bulk ingest with the local model 4.5 times
    slower than without (3.0 against 13.4 memories a second)."""
    try:
        return embeddings.get_embedder() is not None
    except embeddings.EmbeddingError:
        return False


def queue_checks(*, owner_id: int, memory_ids: list[int]) -> None:
    """The worker makes the owner's waiting vectors, then checks these memories
    (check_after_vectors). Called once the memories are committed."""
    from django_q.tasks import async_task

    try:
        async_task("memories.tasks.check_updates", owner_id, list(memory_ids), task_name=f"updates-{owner_id}")
    except Exception:
        # The memories are stored and found by their words; a queue that cannot take the
        # task now costs only their update check, never the ingest that already succeeded.
        log.warning("could not queue the update check of %d memories of owner %s", len(memory_ids), owner_id, exc_info=True)


def check_after_vectors(*, owner, memory_ids: list[int], actor: Actor = SYSTEM) -> int:
    """The update checks a bulk ingest left (check_later): the owner's memories waiting
    for a vector get theirs first (in batches), then each memory is checked in the order
    it arrived, as it would have been then. Returns how many older memories were marked
    superseded."""
    from .embed import embed_waiting

    embed_waiting(owner=owner)
    marked = 0
    for memory in Memory.objects.filter(owner=owner, pk__in=list(memory_ids)).order_by("pk"):
        if needs_update_check(memory):
            marked += len(detect_updates(memory, actor=actor))
    return marked


def detect_updates(memory: Memory, *, actor: Actor = SYSTEM, provider: Provider | None = None) -> list[Memory]:
    """Judge the new memory against its candidates (one provider call) and mark what it
    supersedes. A model that fails or answers nonsense changes nothing."""
    if memory.status != Memory.Status.READY or not memory.is_live or memory.outdated_by_id:
        return []
    found = candidates(memory)
    if not found:
        return []
    own = provider is None
    if own:
        if circuit.is_open(provider_name()):
            return []
        provider = get_provider()
    try:
        near = nearness(memory, found)
        verdicts = provider.judge_updates(new=note_of(memory), candidates=[note_of(m, near.get(m.pk)) for m in found])
    except ProviderError as exc:
        log.warning("update check of memory %s failed; nothing marked: %s", memory.pk, exc)
        return []
    except Exception:  # a judge's bug must not fail the ingest that already succeeded
        log.exception("update check of memory %s crashed; nothing marked", memory.pk)
        return []
    finally:
        if own:
            provider.close()
    by_id = {m.pk: m for m in found}
    outdated = []
    for verdict in verdicts:
        old = by_id.get(verdict.old_id)
        if old is not None and mark_superseded(old=old, new=memory, reason=verdict.reason, actor=actor):
            outdated.append(old)
    return outdated


# Newer memories judged against one that became ready after them, at most.
NEWER_READY_FIRST = 4


def newer_ready_first(memory: Memory) -> list[Memory]:
    """The owner's memories that arrived after this one and tell of a later time, yet were
    read (and their update checks run) while it was still waiting: an agent adds notes in
    quick succession, the worker finishes them out of order, and this one was no candidate
    then. Empty when notes are read in the order they arrive."""
    later = Q(occurred_at__gt=memory.occurred_at) | Q(occurred_at=memory.occurred_at, pk__gt=memory.pk)
    rows = (
        Memory.objects.owned_by(memory.owner_id)
        .filter(pk__gt=memory.pk, status=Memory.Status.READY, outdated_by__isnull=True, duplicate_of__isnull=True)
        .filter(later)
        .filter(not_expired())
        .exclude(pk__in=(memory.metadata or {}).get("not_updated_by", []))
        .order_by("occurred_at", "pk")
    )
    return [m for m in rows[:NEWER_READY_FIRST] if not m.metadata.get("said_by")]


def detect_updates_by_newer(memory: Memory, *, actor: Actor = SYSTEM) -> list[Memory]:
    """Judge this memory as the older one of each newer memory read before it
    (newer_ready_first): the check that memory's own reading could not make. Returns the
    newer memory that superseded it, if one did."""
    if memory.status != Memory.Status.READY or not memory.is_live or memory.outdated_by_id:
        return []
    newer = newer_ready_first(memory)
    if not newer or circuit.is_open(provider_name()):
        return []
    provider = get_provider()
    try:
        for later in newer:
            try:
                near = nearness(later, [memory]).get(memory.pk)
                verdicts = provider.judge_updates(new=note_of(later), candidates=[note_of(memory, near)])
            except ProviderError as exc:
                log.warning("update check of memory %s by %s failed; nothing marked: %s", memory.pk, later.pk, exc)
                return []
            except Exception:  # a judge's bug must not fail the extraction that already succeeded
                log.exception("update check of memory %s by %s crashed; nothing marked", memory.pk, later.pk)
                return []
            verdict = next((v for v in verdicts if v.old_id == memory.pk), None)
            if verdict is not None and mark_superseded(old=memory, new=later, reason=verdict.reason, actor=actor):
                return [later]
    finally:
        provider.close()
    return []


def mark_superseded(*, old: Memory, new: Memory, reason: str = "", actor: Actor = SYSTEM) -> bool:
    """The old memory's fact was true until the new one's date; never across owners."""
    if old.owner_id != new.owner_id or old.pk == new.pk:
        return False
    reason = " ".join((reason or "a newer fact").split())[:200]
    with transaction.atomic():
        # Only if still current: two updates of one fact at once mark it once.
        changed = (
            Memory.objects.owned_by(new.owner_id)
            .filter(pk=old.pk, outdated_by__isnull=True)
            .update(outdated_by=new, valid_until=new.occurred_at)
        )
        if not changed:
            return False
        old.refresh_from_db()
        if not MemoryLink.objects.filter(from_memory=new, to_memory=old, relationship__startswith=LINK_PREFIX).exists():
            MemoryLink.objects.create(from_memory=new, to_memory=old, relationship=f"{LINK_PREFIX}: {reason}"[:500])
        when = old.valid_until.isoformat()
        record(old, Event.Action.OUTDATED, actor, after={"outdated_by": new.pk, "valid_until": when}, note=reason)
        record(new, Event.Action.UPDATES, actor, after={"supersedes": old.pk}, note=reason)
    return True


def undo_update(*, owner, memory_id: int, actor: Actor = SYSTEM) -> Memory | None:
    """ "Not an update": the superseded memory is current again, the link goes, the pair
    is remembered so it is not judged an update again; recorded on both memories."""
    with transaction.atomic():
        old = Memory.objects.owned_by(owner).filter(pk=memory_id, outdated_by__isnull=False).first()
        if old is None:
            return None
        new_id, until = old.outdated_by_id, old.valid_until
        metadata = dict(old.metadata or {})
        metadata["not_updated_by"] = sorted({*metadata.get("not_updated_by", []), new_id})
        old.outdated_by, old.valid_until, old.metadata = None, None, metadata
        old.save(update_fields=["outdated_by", "valid_until", "metadata", "updated_at"])
        MemoryLink.objects.filter(from_memory_id=new_id, to_memory=old, relationship__startswith=LINK_PREFIX).delete()
        before = {"outdated_by": new_id, "valid_until": until.isoformat() if until else None}
        record(old, Event.Action.NOT_UPDATE, actor, before=before, note=f"memory {new_id} does not change this fact")
        if new := Memory.all_objects.owned_by(owner).filter(pk=new_id).first():
            record(new, Event.Action.NOT_UPDATE, actor, before={"supersedes": old.pk}, note=f"does not change memory {old.pk}")
    return old


def release_successors(memory: Memory, actor: Actor, *, why: str) -> list[int]:
    """Memories the given one superseded are current again (it left the record)."""
    released = []
    for old in Memory.objects.owned_by(memory.owner_id).filter(outdated_by=memory):
        before = {"outdated_by": memory.pk, "valid_until": old.valid_until.isoformat() if old.valid_until else None}
        old.outdated_by, old.valid_until = None, None
        old.save(update_fields=["outdated_by", "valid_until", "updated_at"])
        record(old, Event.Action.NOT_UPDATE, actor, before=before, note=why)
        released.append(old.pk)
    return released


def recent_updates(*, owner, limit: int = 20):
    """The latest updates found for the owner (the consolidations page lists them)."""
    events = list(Event.objects.owned_by(owner).filter(subject_type=Event.Subject.MEMORY, action=Event.Action.OUTDATED)[:limit])
    ids = {e.subject_id for e in events} | {e.after.get("outdated_by") for e in events if isinstance(e.after, dict)}
    memories = Memory.all_objects.owned_by(owner).filter(pk__in=[i for i in ids if i]).in_bulk()
    out = []
    for e in events:
        old, new = memories.get(e.subject_id), memories.get((e.after or {}).get("outdated_by"))
        if old is not None and new is not None:
            out.append({"event": e, "old": old, "new": new, "current": old.outdated_by_id == new.pk})
    return out
