"""A memory's card and its way out and back: retry, delete, restore, purge, the deleted list."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import trigger_client_event

from .. import services
from ..forms import PurgeForm
from ..services import browse
from ..services.history import Actor
from ._common import CHANGED, _error, _owned_memory, _owned_any, _card


@login_required
@require_GET
def memory_card(request, memory_id: int):
    memory = _owned_memory(request, memory_id)
    response = _card(request, memory, cited=request.GET.get("cited") == "1")
    if not memory.is_pending:
        trigger_client_event(response, CHANGED)
    return response


@login_required
@require_POST
def memory_retry(request, memory_id: int):
    _owned_memory(request, memory_id)
    try:
        memory = services.retry_memory(owner=request.user, memory_id=memory_id, actor=Actor.for_user(request.user))
    except services.RetryError as exc:
        return _error(request, str(exc))
    memory = _owned_memory(request, memory.pk)  # as it is now: extraction may have run inline
    if not request.htmx:
        messages.success(request, f"Memory {memory.pk} is being extracted again.")
        return redirect("memories:detail", memory.pk)
    return trigger_client_event(_card(request, memory), CHANGED)


@login_required
@require_http_methods(["GET", "POST"])
def memory_delete(request, memory_id: int):
    memory = _owned_memory(request, memory_id)
    if request.method == "GET":
        if request.htmx:
            return render(request, "memories/cards.html#confirm_delete", {"memory": memory})
        return render(request, "memories/confirm_delete.html", {"memory": memory})
    services.delete_memory(owner=request.user, memory_id=memory.pk, actor=Actor.for_user(request.user))
    if not request.htmx:
        messages.success(request, f"Memory {memory_id} deleted.")
        return redirect("memories:list")
    response = render(request, "memories/cards.html#deleted", {"memory_id": memory_id})
    return trigger_client_event(response, CHANGED)


@login_required
@require_POST
def memory_restore(request, memory_id: int):
    """Undo a delete: the tombstone is lifted and the card comes back."""
    try:
        memory = services.restore_memory(owner=request.user, memory_id=memory_id, actor=Actor.for_user(request.user))
    except services.RestoreError as exc:
        return _error(request, str(exc))
    if memory is None:
        raise Http404("No deleted memory of yours with that id.")
    if not request.htmx:
        messages.success(request, f"Memory {memory.pk} restored.")
        return redirect("memories:detail", memory.pk)
    response = render(
        request, "memories/fragments.html#restored", {"memory": memory, "flash": [("success", f"Memory {memory.pk} restored.")]}
    )
    return trigger_client_event(response, CHANGED)


@login_required
@require_POST
def restore_all(request):
    """The deleted page's "Restore all": after a clear, every memory back in one press."""
    restored, left = services.restore_all(owner=request.user, actor=Actor.for_user(request.user))
    text = f"Restored {restored} memor{'y' if restored == 1 else 'ies'}."
    if left:
        text += f" {left} stay deleted: the same content is stored again as another memory."
    messages.success(request, text)
    return redirect("memories:deleted")


@login_required
@require_http_methods(["GET", "POST"])
def memory_purge(request, memory_id: int):
    """Erase a deleted memory's content for good (a privacy request); only the hash of the
    content (so it stays refused) and a bare record of the events remain."""
    memory = _owned_any(request, memory_id)
    if memory.is_live:
        return _error(request, f"Memory {memory.pk} is not deleted. Delete it first; purge erases deleted memories.", status=409)
    if request.method == "GET":
        if request.htmx:
            return render(request, "memories/deleted.html#confirm_purge", {"memory": memory})
        return render(request, "memories/confirm_purge.html", {"memory": memory})
    form = PurgeForm(request.POST)
    if not form.is_valid():
        return _error(request, form.errors["confirm"][0])
    services.purge_memory(owner=request.user, memory_id=memory.pk, actor=Actor.for_user(request.user))
    if not request.htmx:
        messages.success(request, f"Memory {memory_id} purged: its content is erased; the record that it existed remains.")
        return redirect("memories:deleted")
    response = render(request, "memories/deleted.html#purged", {"memory_id": memory_id})
    return trigger_client_event(response, CHANGED)


@login_required
@require_GET
def deleted(request):
    """The owner's tombstones: restore one, or purge it for good."""
    page = Paginator(services.deleted_memories(owner=request.user), browse.PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "memories/deleted.html", {"page": page})
