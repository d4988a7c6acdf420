"""A memory's own page: details, corrections, history and the original file."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404
from django.shortcuts import redirect, render
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.csp import csp_override
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from .. import services
from ..forms import MemoryEditForm
from ..models import Memory
from ..services import browse
from ..services.history import Actor
from ._common import CHANGED, NOT_YOURS, _error, _owned_memory, _owned_any


def _detail_context(request, memory_id: int, form=None) -> dict:
    try:
        page = browse.memory_page(owner=request.user, memory_id=memory_id)
    except Memory.DoesNotExist:
        raise Http404(NOT_YOURS) from None
    memory = page.memory
    return {
        **page.context(),
        "form": form if form is not None else (MemoryEditForm.for_memory(memory) if memory.is_editable else None),
    }


@login_required
@require_GET
def memory_detail(request, memory_id: int):
    return render(request, "memories/memory_detail.html", _detail_context(request, memory_id))


@login_required
@require_POST
def memory_edit(request, memory_id: int):
    """Correct summary, entities, topics, importance or the date; the edit is recorded."""
    memory = _owned_any(request, memory_id)
    if not memory.is_live:
        return _error(request, f"Memory {memory.pk} is {memory.state.label.lower()}; restore it before editing.", status=409)
    if not memory.is_editable:
        # An extraction still to come would overwrite the correction.
        return _error(
            request,
            f"Memory {memory.pk} has not been extracted yet ({memory.get_status_display().lower()}); correct it once it is ready.",
            status=409,
        )
    form = MemoryEditForm.for_memory(memory, request.POST)
    if not form.is_valid():
        return _edit_refused(request, memory, form)
    changes = form.changes()
    if not changes:
        return _edited(request, memory, "Nothing changed.")
    try:
        memory = services.update_memory(
            owner=request.user, memory_id=memory.pk, changes=changes, actor=Actor.for_user(request.user)
        )
    except services.EditError as exc:
        # The service's words, shown at the field they are about.
        form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        return _edit_refused(request, memory, form)
    except Memory.DoesNotExist:
        raise Http404(NOT_YOURS) from None
    return _edited(request, memory, f"Memory {memory.pk} corrected: {', '.join(f.replace('_', ' ') for f in changes)}.")


def _edit_refused(request, memory: Memory, form):
    """The form comes back with what was typed and each error under its field, where the
    person is looking (the flash area is a screen away on a long memory page)."""
    if request.htmx:
        return render(request, "memories/memory_detail.html#edit_form", {"memory": memory, "form": form}, status=400)
    return render(request, "memories/memory_detail.html", _detail_context(request, memory.pk, form), status=400)


def _edited(request, memory: Memory, message: str):
    if not request.htmx:
        messages.success(request, message)
        return redirect("memories:detail", memory.pk)
    context = {**_detail_context(request, memory.pk), "flash": [("success", message)]}
    response = render(request, "memories/memory_detail.html#edited", context)
    return trigger_client_event(response, CHANGED)


@login_required
@require_POST
def memory_not_update(request, memory_id: int):
    """Undo a wrong update: the superseded memory is current again (recorded)."""
    _owned_memory(request, memory_id)
    memory = services.undo_update(owner=request.user, memory_id=memory_id, actor=Actor.for_user(request.user))
    if memory is None:
        return _error(request, f"Memory {memory_id} is not superseded by a newer fact.", status=409)
    message = f"Memory {memory_id} is current again; the update was undone."
    if not request.htmx:
        messages.success(request, message)
        return redirect("memories:detail", memory_id)
    return _edited(request, memory, message)


@login_required
@require_GET
def memory_history(request, memory_id: int):
    """Who changed what, newest first; still there after a purge, for the owner only."""
    history = browse.history_page(owner=request.user, memory_id=memory_id)
    if history is None:
        raise Http404(NOT_YOURS)
    context = {"memory": history.memory, "memory_id": memory_id, "events": history.events}
    if request.htmx:
        return render(request, "memories/history.html#history", context)
    return render(request, "memories/history.html", context)


@login_required
@require_GET
@xframe_options_sameorigin
# Not the pages' policy: its frame-ancestors 'none' and object-src 'none' would stop the PDF
# preview (framed by the memory page, shown by the browser's viewer); the view sets its own.
@csp_override({})
def memory_file(request, memory_id: int):
    """The original upload (services.may_fetch_original says to whom); previewable types
    inline, the rest as a download."""
    memory = browse.original_file(user=request.user, memory_id=memory_id)
    if memory is None:
        raise Http404("No original file of yours with that id.")
    try:
        handle = memory.original.open("rb")
    except FileNotFoundError:
        raise Http404("The original file is missing from storage.") from None
    inline = bool(memory.preview_kind) and request.GET.get("download") != "1"
    response = FileResponse(
        handle, as_attachment=not inline, filename=memory.file_name, content_type=memory.mime_type or "application/octet-stream"
    )
    response["X-Content-Type-Options"] = "nosniff"
    if memory.preview_kind != "pdf":
        # Nothing in a stored file runs as this site (Chromium's PDF viewer refuses a sandbox).
        response["Content-Security-Policy"] = "sandbox; default-src 'none'; img-src 'self'; media-src 'self'"
    return response
