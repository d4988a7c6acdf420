"""Query: recall chooses the context, the provider answers from it, citations are checked."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from ..llm import ProviderError, get_provider, provider_name
from ..llm.base import CITATION_RE, cited_ids
from ..recall import RecallResult, recall
from . import usage
from .errors import QuestionError
from .forgetting import mark_used
from .history import SYSTEM, Actor


@dataclass
class QueryResult:
    question: str
    answer: str
    cited: list[int]
    recall: RecallResult
    provider: str
    provider_is_language_model: bool
    elapsed_ms: int


def answer_question(
    *, owner, question: str, strategy: str | None = None, k: int | None = None, actor: Actor = SYSTEM
) -> QueryResult:
    """Raises ProviderError when the model fails; a question is not stored, so nothing is lost."""
    question = clean_question(question)
    started = time.monotonic()
    context = recall_context(owner=owner, question=question, strategy=strategy, k=k)
    provider = get_provider()
    try:
        answer = provider.answer(question=question, context=context.to_context())
    except ProviderError:
        usage.record_call(owner_id=owner.pk, provider=provider_name(), failed=True)
        raise
    finally:
        provider.close()
    usage.record_call(owner_id=owner.pk, provider=provider_name())
    answer = strip_foreign_citations(answer, allowed=set(context.memory_ids))
    # Read in an answer: what an answer cites stays fresh (importance fades otherwise).
    mark_used(owner=owner, memory_ids=cited_ids(answer), actor=actor)
    return QueryResult(
        question=question,
        answer=answer,
        cited=cited_ids(answer),
        recall=context,
        provider=provider.label,
        provider_is_language_model=provider.is_language_model,
        elapsed_ms=int((time.monotonic() - started) * 1000),
    )


def clean_question(question: str | None) -> str:
    """The question as every caller reads it, its whitespace squeezed; QuestionError (a 400
    on the API, a tool error on MCP) when nothing is left."""
    question = " ".join((question or "").split())
    if not question:
        raise QuestionError("Ask a question.")
    return question


def recall_context(*, owner, question: str, strategy: str | None = None, k: int | None = None) -> RecallResult:
    """recall(), with a question naming an impossible date ("10000 years ago") refused as
    a ValueError (a 400 for every caller) instead of an OverflowError (a 500)."""
    try:
        return recall(owner=owner, question=question, strategy=strategy, k=k)
    except OverflowError:
        raise ValueError("The question names a date outside the calendar this service can count (years 1 to 9999).") from None


def strip_foreign_citations(answer: str, *, allowed: set[int]) -> str:
    """Remove [Memory N] citations of memories the model was not shown: a model that
    invents a citation must not point a reader at a memory it never read."""
    cleaned = CITATION_RE.sub(lambda m: m.group(0) if int(m.group(1)) in allowed else "", answer)
    return re.sub(r"[ \t]+([.,;:!?])", r"\1", cleaned)
