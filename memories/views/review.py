"""The review queue: memories waiting for approval in review mode."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from .. import services
from ..services import browse
from ..services.history import Actor
from ._common import CHANGED, _error, _owned_memory


@login_required
@require_GET
def review(request):
    return render(request, "memories/review.html", {"page": browse.review_page(owner=request.user, page=request.GET.get("page"))})


def _reviewed(request, memory_id: int, service, done: str):
    _owned_memory(request, memory_id)  # another owner's memory stays a 404
    memory = service(owner=request.user, memory_id=memory_id, actor=Actor.for_user(request.user))
    if memory is None:
        return _error(request, f"Memory {memory_id} is not waiting for review.", status=409)
    if not request.htmx:
        messages.success(request, f"Memory {memory_id} {done}.")
        return redirect("memories:review")
    context = {"memory": memory, "done": done}
    return trigger_client_event(render(request, "memories/review.html#reviewed", context), CHANGED)


@login_required
@require_POST
def memory_approve(request, memory_id: int):
    return _reviewed(request, memory_id, services.approve_memory, "approved")


@login_required
@require_POST
def memory_reject(request, memory_id: int):
    return _reviewed(request, memory_id, services.reject_memory, "rejected")
