"""The ingest page: text and file uploads, and what became of them."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import reswap, retarget, trigger_client_event

from .. import services
from ..extract import SUPPORTED_TYPES
from ..forms import SAMPLE_INPUTS, TextIngestForm
from ..services import browse
from ..services.history import Actor
from ._common import CHANGED, _error, _over_limit


def _upload_context() -> dict:
    return {
        "max_upload_mb": settings.MEMORY_MAX_UPLOAD_MB,
        "accept": ",".join(sorted(SUPPORTED_TYPES)),
        "supported_types": " ".join(sorted(SUPPORTED_TYPES)),
    }


@login_required
@require_GET
def ingest(request):
    return render(
        request,
        "memories/ingest.html",
        {
            "form": TextIngestForm(),
            "samples": SAMPLE_INPUTS,
            **_upload_context(),
            **browse.ingest_page(owner=request.user),
        },
    )


@login_required
@require_POST
def ingest_text(request):
    if limited := _over_limit(request, "ingest"):
        return limited
    form = TextIngestForm(request.POST)
    if not form.is_valid():
        first = next(iter(form.errors.values()))[0] if form.errors else "Check the form."
        field = next(iter(form.errors), "")
        return _error(request, f"{field.replace('_', ' ').capitalize()}: {first}" if field and field != "__all__" else first)
    try:
        result = services.ingest_text(owner=request.user, **form.cleaned_data, actor=Actor.for_user(request.user), queue=True)
    except services.RejectedContentError as exc:
        return _rejected(request, [str(exc)], browse.restorable(owner=request.user, memory_ids=[exc.memory_ref]))
    except services.IngestError as exc:
        return _error(request, str(exc))
    return _ingested(request, [result], [])


@login_required
@require_POST
def ingest_files(request):
    if limited := _over_limit(request, "ingest"):
        return limited
    files = request.FILES.getlist("files")
    if not files:
        return _error(request, "Choose at least one file to upload.")
    source = request.POST.get("source", "")[:500]
    results, errors, rejected = [], [], []
    for upload in files:
        try:
            result = services.ingest_file(
                owner=request.user,
                fileobj=upload,
                name=upload.name,
                source=source,
                occurred_at=request.POST.get("occurred_at") or None,
                actor=Actor.for_user(request.user),
                queue=True,
            )
        except services.IngestError as exc:
            errors.append(str(exc))
            rejected.append(getattr(exc, "memory_ref", None))
            continue
        results.append(result)
    restorable = browse.restorable(owner=request.user, memory_ids=rejected)
    if not results:
        return _rejected(request, errors, restorable)
    return _ingested(request, results, errors, restorable)


def _rejected(request, errors: list[str], restorable: list[int]):
    """Content deleted before is refused; the message says when, with a button to restore it."""
    if not restorable:
        return _error(request, " ".join(errors))
    if request.htmx:
        response = render(
            request,
            "memories/fragments.html#flash",
            {"flash": [("error", e) for e in errors], "restorable": restorable},
            status=400,
        )
        return reswap(retarget(response, "#flash"), "innerHTML")
    return render(request, "memories/error.html", {"message": " ".join(errors), "restorable": restorable}, status=400)


def _ingested(request, results, errors, restorable=()):
    flash = [("success", r.message) for r in results] + [("error", e) for e in errors]
    if not request.htmx:
        for level, text in flash:
            messages.add_message(request, messages.SUCCESS if level == "success" else messages.ERROR, text)
        return redirect("memories:ingest")
    # The task may already have run (sync mode, a fast worker): show the status as it is now.
    memories = browse.current_memories(owner=request.user, memory_ids=[r.memory.pk for r in results if r.created])
    response = render(
        request, "memories/fragments.html#ingested", {"memories": memories, "flash": flash, "restorable": restorable}
    )
    return trigger_client_event(response, CHANGED)
