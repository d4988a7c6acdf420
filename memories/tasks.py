"""django-q2 entry points: thin, take ids, call services."""

from django.contrib.auth import get_user_model
from django_q.conf import Conf

from .models import Memory

from . import services


def extract_memory(memory_id: int) -> str:
    # Inline (sync) tasks have no queue to go to the back of.
    if not Conf.SYNC and services.should_yield(memory_id):
        services.queue_extraction(Memory(pk=memory_id))
        return f"memory {memory_id}: its owner already has an extraction running while others wait; queued again"
    memory = services.extract_memory(memory_id)
    return f"memory {memory_id}: {memory.status if memory else 'deleted before extraction'}"


def consolidate_all() -> str:
    outcomes = services.consolidate_all(actor=services.SCHEDULER)
    made = sum(len(o.consolidations) for o in outcomes)
    return f"{made} consolidations for {len(outcomes)} owners"


def consolidate_owner(owner_id: int) -> str:
    owner = get_user_model().objects.get(pk=owner_id)
    try:
        # Queued by the owner's "consolidate now" button.
        outcome = services.consolidate_owner(owner=owner, actor=services.Actor.for_user(owner))
    except services.ConsolidationBusy as exc:
        return str(exc)
    return f"{len(outcome.consolidations)} consolidations, {outcome.run.memories_consolidated} memories"


def maintain() -> str:
    done = services.maintain(actor=services.SCHEDULER)
    return f"faded {done['faded']}, forgot {done['forgotten']} by retention"


def resume_stuck() -> str:
    ids = services.resume_stuck()
    return f"re-queued {len(ids)} stuck memories"


def embed_sweep() -> str:
    from .services.embed import sweep

    outcome = sweep()
    return f"embedded {outcome.embedded} memories ({outcome.backend})" + (f"; {outcome.error}" if outcome.error else "")


def import_history(job_id: str) -> str:
    from .services.history_jobs import run_import

    return run_import(job_id)


def embed_waiting(owner_id: int) -> str:
    # One owner's memories waiting for a vector: queued after new memories and an import.
    from .services.embed import embed_waiting as embed_owner

    owner = get_user_model().objects.filter(pk=owner_id).first()
    if owner is None:
        return f"owner {owner_id}: gone"
    outcome = embed_owner(owner=owner)
    return f"owner {owner_id}: embedded {outcome.embedded} memories ({outcome.backend})" + (
        f"; {outcome.error}" if outcome.error else ""
    )


def check_updates(owner_id: int, memory_ids: list[int]) -> str:
    # The update checks a bulk ingest left until the memories' vectors are made.
    from .services.updates import check_after_vectors

    owner = get_user_model().objects.filter(pk=owner_id).first()
    if owner is None:
        return f"owner {owner_id}: gone"
    marked = check_after_vectors(owner=owner, memory_ids=memory_ids)
    return f"owner {owner_id}: {len(memory_ids)} memories checked for updates, {marked} older ones superseded"
