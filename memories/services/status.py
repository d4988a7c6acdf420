"""What the status sidebar and GET /api/status report: one owner's counts and the engine;
and where the owner's consolidation run stands."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count
from django.utils import timezone

from .. import embeddings
from ..llm import ProviderError, circuit, get_provider, provider_name
from ..models import Consolidation, ConsolidationRun, Memory, ProcessedFile
from ..schedule import next_consolidation_run
from .consolidate import planned_batches, unconsolidated
from .embed import waiting_for_vectors
from .inbox import refused_files, watcher_last_seen
from .lifecycle import clearable_inbox_files

log = logging.getLogger(__name__)


@dataclass
class EngineStatus:
    name: str
    label: str = ""
    is_language_model: bool = False
    error: str = ""  # a misconfiguration, reported rather than raised
    down: bool = False  # the circuit breaker has stopped calling a failing model
    last_error: str = ""


def engine_status() -> EngineStatus:
    try:
        name = provider_name()
        provider = get_provider()
    except ProviderError as exc:
        return EngineStatus(name=settings.MEMORY_LLM_PROVIDER, error=str(exc))
    try:
        breaker = circuit.state(name)
        return EngineStatus(
            name=name,
            label=provider.label,
            is_language_model=provider.is_language_model,
            down=circuit.is_open(name),
            last_error=breaker["last_error"],
        )
    finally:
        provider.close()


def space_counts(*, owner) -> dict[str, int]:
    by_status = dict(Memory.objects.owned_by(owner).values_list("status").annotate(n=Count("id")).order_by())
    return {
        "memories": sum(by_status.values()),
        "ready": by_status.get(Memory.Status.READY, 0),
        "pending": by_status.get(Memory.Status.PENDING, 0),
        "failed": by_status.get(Memory.Status.FAILED, 0),
        "review": by_status.get(Memory.Status.REVIEW, 0),
        "unconsolidated": unconsolidated(owner).count(),
        "consolidations": Consolidation.objects.owned_by(owner).count(),
        # Vectors follow in the background (services/embed.py): found by words until then.
        "waiting_for_vector": waiting_for_vectors(owner=owner),
    }


def task_queue_length() -> int | None:
    """Tasks waiting for a worker (extractions, consolidations), or None when the broker
    cannot say. The whole queue, not one owner's: it is how busy the workers are."""
    from django_q.brokers import get_broker

    try:
        return get_broker().queue_size()
    except Exception:  # a broker that is down must not take the sidebar with it
        log.warning("could not read the task queue length", exc_info=True)
        return None


def waiting_review(*, owner) -> int:
    """Memories of this owner waiting for review (the nav shows the number)."""
    return Memory.objects.owned_by(owner).filter(status=Memory.Status.REVIEW).count()


def engine_display() -> dict:
    """Which engine answers, said plainly; a misconfiguration is shown, not raised."""
    engine = engine_status()
    return {
        "name": engine.name,
        "label": engine.label,
        "error": engine.error,
        "offline": not engine.is_language_model and not engine.error,
        "down": engine.down,
        "last_error": engine.last_error,
    }


def status_panel(*, owner) -> dict:
    """Everything the status sidebar shows for one owner."""
    return {
        "refused": refused_files(owner=owner, limit=3),
        "counts": space_counts(owner=owner),
        "provider": engine_display(),
        "embeddings": embeddings.status(),
        "every_minutes": settings.MEMORY_CONSOLIDATE_EVERY_MINUTES,
        "next_run": next_consolidation_run(),
        "watcher_seen": watcher_last_seen(),
        "queue_length": task_queue_length(),
    }


def space_totals(*, owner) -> dict[str, int]:
    """What clearing the owner's space would remove (the danger zone says it before asking)."""
    owned = Memory.objects.owned_by(owner)
    return {
        "memory_count": owned.count(),
        "file_count": owned.exclude(original="").count(),
        "consolidation_count": Consolidation.objects.owned_by(owner).count(),
        "processed_count": ProcessedFile.objects.owned_by(owner).count(),
        "inbox_file_count": clearable_inbox_files(owner=owner),
    }


# A request not picked up by a worker within this long is no longer shown as queued.
QUEUED_FOR = timedelta(minutes=10)


@dataclass
class RunState:
    state: str  # "idle", "queued" (asked for, no worker yet) or "running"
    latest: ConsolidationRun | None
    just_finished: bool  # the run asked for at requested_at has finished
    request_done: bool  # the request is finished or too old to wait for: forget it
    progress: dict | None  # while running: batches done of about how many, memories so far
    waiting: int  # ready memories not consolidated yet
    next_run: datetime | None  # of the schedule
    # Insights the latest run wrote (or older ones) retired since it finished, by a clear or
    # deleted sources: the page says so instead of "2 insights" beside an empty list.
    retired_since_run: int = 0


def consolidation_run(*, owner, requested_at: datetime | None = None) -> RunState:
    """Where the owner's consolidation stands; `requested_at` is when the owner last asked
    for a run (the page remembers it), so a run not started yet shows as queued."""
    latest = ConsolidationRun.objects.owned_by(owner).first()
    expired = requested_at is not None and timezone.now() - requested_at > QUEUED_FOR
    pending_request = None if expired else requested_at
    if latest is not None and latest.finished_at is None:
        state = "running"
    elif pending_request and (latest is None or latest.started_at < pending_request):
        state = "queued"
    else:
        state = "idle"
    just_finished = bool(pending_request and state == "idle")
    progress = None
    if state == "running":
        # Batches are saved as they finish; what is still waiting says how many may follow.
        done = latest.consolidations_made
        total = min(done + planned_batches(owner=owner), settings.MEMORY_CONSOLIDATE_MAX_BATCHES)
        progress = {"done": done, "total": max(total, done, 1), "memories": latest.memories_consolidated}
    return RunState(
        state=state,
        latest=latest,
        just_finished=just_finished,
        request_done=just_finished or expired,
        progress=progress,
        waiting=unconsolidated(owner).count(),
        next_run=next_consolidation_run(),
        retired_since_run=Consolidation.all_objects.owned_by(owner).filter(retired_at__gt=latest.finished_at).count()
        if latest is not None and latest.finished_at is not None
        else 0,
    )
