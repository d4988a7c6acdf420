"""django-q2 entry points: thin, take ids, call services."""

from django.contrib.auth import get_user_model

from . import services


def extract_memory(memory_id: int) -> str:
    memory = services.extract_memory(memory_id)
    return f"memory {memory.pk}: {memory.status}"


def consolidate_all() -> str:
    outcomes = services.consolidate_all()
    made = sum(len(o.consolidations) for o in outcomes)
    return f"{made} consolidations for {len(outcomes)} owners"


def consolidate_owner(owner_id: int) -> str:
    owner = get_user_model().objects.get(pk=owner_id)
    try:
        outcome = services.consolidate_owner(owner=owner)
    except services.ConsolidationBusy as exc:
        return str(exc)
    return f"{len(outcome.consolidations)} consolidations, {outcome.run.memories_consolidated} memories"
