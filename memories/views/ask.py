"""The query page: ask a question, get an answer citing the memories it used."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_GET

from .. import services
from ..forms import SAMPLE_QUESTIONS, QuestionForm
from ..llm import ProviderError
from ..services.history import Actor
from ._common import _error, _over_limit


@login_required
@require_GET
def query(request):
    context = {"sample_questions": SAMPLE_QUESTIONS}
    form = QuestionForm(request.GET or None)
    context["form"] = form
    if request.GET:
        if not form.is_valid():
            return _error(request, "Ask a question (up to 2,000 characters).")
        if limited := _over_limit(request, "query"):
            return limited
        try:
            context["result"] = services.answer_question(
                owner=request.user, question=form.cleaned_data["q"], actor=Actor.for_user(request.user)
            )
        except ProviderError as exc:
            return _error(request, f"The model did not answer: {exc}", status=502)
        except ValueError as exc:
            return _error(request, str(exc))
    if request.htmx:
        return render(request, "memories/query.html#answer", context)
    return render(request, "memories/query.html", context)
