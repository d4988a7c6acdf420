"""What the status sidebar and GET /api/status report: one owner's counts and the engine."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Count

from ..llm import ProviderError, circuit, get_provider, provider_name
from ..models import Consolidation, Memory
from .consolidate import unconsolidated

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
            name=name, label=provider.label, is_language_model=provider.is_language_model,
            down=circuit.is_open(name), last_error=breaker["last_error"],
        )
    finally:
        provider.close()


def space_counts(*, owner) -> dict[str, int]:
    by_status = dict(Memory.objects.filter(owner=owner).values_list("status").annotate(n=Count("id")).order_by())
    return {
        "memories": sum(by_status.values()),
        "ready": by_status.get(Memory.Status.READY, 0),
        "pending": by_status.get(Memory.Status.PENDING, 0),
        "failed": by_status.get(Memory.Status.FAILED, 0),
        "review": by_status.get(Memory.Status.REVIEW, 0),
        "unconsolidated": unconsolidated(owner).count(),
        "consolidations": Consolidation.objects.filter(owner=owner).count(),
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
