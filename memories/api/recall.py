"""Recall: which memories the model reads for a question (GET /recall), and the answer it
writes from them (the original's GET /query)."""

from __future__ import annotations

from ninja import Query, Router, Schema
from ninja.errors import HttpError
from pydantic import Field

from ..recall import RecallResult
from ..services import answer_question
from ..services.query import clean_question, recall_context
from . import schemas as s
from .common import actor, enforce_rate

router = Router(tags=["recall"])


def recalled(result: RecallResult) -> list[dict]:
    return [
        {
            "rank": rank,
            "id": r.memory.pk,
            "source": r.memory.source,
            "summary": r.memory.summary,
            "score": round(float(r.score), 4),
            "reasons": list(r.reasons),
        }
        for rank, r in enumerate(result.memories, 1)
    ]


def insights(result: RecallResult) -> list[dict]:
    return [{"id": c.pk, "summary": c.summary, "insight": c.insight} for c in result.consolidations]


class RecallParams(Schema):
    q: s.Text = Field(min_length=1, max_length=2000, description="The question.")
    k: int | None = Field(None, ge=1, le=500)
    strategy: s.StrategyName | None = None


@router.get(
    "/recall",
    response={200: s.RecallOut, 400: s.Message, 429: s.Message},
    summary="The memories the model would read for a question, ranked, with scores",
)
def recall(request, params: Query[RecallParams]):
    enforce_rate(request, "recall")
    question = clean_question(params.q)
    try:
        result = recall_context(owner=request.auth, question=question, strategy=params.strategy, k=params.k)
    except ValueError as exc:
        raise HttpError(400, str(exc)) from None
    return {
        "question": question,
        "strategy": result.strategy,
        "context_tokens": result.context_tokens,
        "memories": recalled(result),
        "consolidations": insights(result),
    }


class QueryParams(Schema):
    q: s.Text = Field(min_length=1, max_length=2000, description="The question.")
    strategy: s.StrategyName | None = None
    k: int | None = Field(None, ge=1, le=500, description="How many memories recall may hand the model.")


def answer(request, params: QueryParams) -> dict:
    """The model's answer from what recall chose, with the memories it read and cited."""
    enforce_rate(request, "query")
    try:
        result = answer_question(
            owner=request.auth, question=params.q, strategy=params.strategy, k=params.k, actor=actor(request)
        )
    except ValueError as exc:  # an empty question after whitespace is squeezed out
        raise HttpError(400, str(exc)) from None
    return {
        "question": result.question,
        "answer": result.answer,
        "cited": result.cited,
        "context": recalled(result.recall),
        "consolidations": insights(result.recall),
        "strategy": result.recall.strategy,
        "provider": result.provider,
        "elapsed_ms": result.elapsed_ms,
    }
