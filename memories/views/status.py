"""The status sidebar and the danger zone (clearing a space)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from .. import services
from ..forms import ClearForm
from ..services import status as space_status
from ..services.history import Actor


@login_required
@require_GET
def status(request):
    return render(request, "memories/status.html", space_status.status_panel(owner=request.user))


@login_required
@require_http_methods(["GET", "POST"])
def clear(request):
    form = ClearForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        counts = services.clear_owner(owner=request.user, actor=Actor.for_user(request.user))
        messages.success(
            request,
            f"Cleared {counts['memories']} memories and {counts['consolidations']} consolidations, "
            f"and removed {counts['inbox_files']} inbox file{'s' * (counts['inbox_files'] != 1)}. "
            "The same content can be added again, or all of it restored from Memory bank → Deleted memories.",
        )
        return redirect("memories:ingest")
    context = {"form": form, **space_status.space_totals(owner=request.user)}
    return render(request, "memories/clear.html", context, status=400 if request.method == "POST" else 200)
