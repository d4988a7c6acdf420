"""The memory bank: the filtered, keyset-paged list, its filter options and bulk delete."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from .. import services
from ..forms import BulkDeleteForm, MemoryFilterForm
from ..services import browse
from ..services.history import Actor
from ._common import CHANGED, _error, _without


@login_required
@require_GET
def memory_list(request):
    form = MemoryFilterForm(request.GET)
    if not form.is_valid():
        return _error(
            request,
            "Those filters are not valid: "
            + "; ".join(f"{k}: {v[0]}" if k != "__all__" else v[0] for k, v in form.errors.items()),
        )
    filters = {k: v for k, v in form.cleaned_data.items() if k not in ("after", "before")}
    filtered = any(filters[k] for k in browse.BANK_FILTERS)
    if request.htmx and request.htmx.target == "result-count":
        # A delete, undo or extraction changed what the count says; the cards stay as they are.
        total, more = browse.bank_count(owner=request.user, **filters)
        return render(request, "memories/memory_list.html#result_count", {"total": total, "more": more, "filtered": filtered})
    page = browse.bank_page(owner=request.user, after=form.cleaned_data["after"], before=form.cleaned_data["before"], **filters)
    base_query = _without(request, "after", "before")
    rows = page.memories
    context = {
        "form": form,
        "memories": rows,
        "total": page.total,
        "more": page.more,
        "filtered": filtered,
        "count_url": f"?{base_query}",
        "next_url": f"?{base_query}&after={rows[-1].pk}" if page.has_next and rows else "",
        "prev_url": f"?{base_query}&before={rows[0].pk}" if page.has_prev and rows else "",
        "first_url": f"?{base_query}" if page.has_prev else "",
        "lost_cursor": page.lost_cursor,
    }
    if request.htmx and request.htmx.target == "results":
        return render(request, "memories/memory_list.html#results", context)
    return render(request, "memories/memory_list.html", context)


FACET_COLUMNS = {"topics": "topic", "entities": "entity"}


@login_required
@require_GET
def memory_facets(request, column: str):
    """The options of the bank's topic or entity filter: the owner's most used values with
    counts. Loaded after the page, so counting never holds the list up."""
    if column not in FACET_COLUMNS:
        raise Http404("No such filter.")
    items, sampled = browse.facets(owner=request.user, column=column)
    selected = request.GET.get(FACET_COLUMNS[column], "")[:200]
    context = {
        "items": items,
        "sampled": sampled,
        "selected": selected,
        "column": column,
        "selected_missing": bool(selected) and selected not in {value for value, _ in items},
    }
    return render(request, "memories/memory_list.html#facet_options", context)


@login_required
@require_POST
def memory_bulk_delete(request):
    """Delete the memories ticked on the bank page, each a recorded delete (restorable)."""
    form = BulkDeleteForm(request.POST)
    if not form.is_valid():
        return _error(request, form.errors["ids"][0])
    deleted = services.delete_memories(
        owner=request.user, memory_ids=form.cleaned_data["ids"], actor=Actor.for_user(request.user)
    )
    message = f"Deleted {len(deleted)} memor{'y' if len(deleted) == 1 else 'ies'}; restore {'it' if len(deleted) == 1 else 'them'} from Deleted memories."
    if not request.htmx:
        messages.success(request, message)
        return redirect("memories:list")
    response = render(request, "memories/memory_list.html#bulk_deleted", {"deleted": deleted, "flash": [("success", message)]})
    return trigger_client_event(response, CHANGED)
