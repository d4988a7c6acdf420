"""Pages and the HTMX fragments they swap. Thin: validate, call a service, render."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm, SetPasswordForm
from django.core.paginator import Paginator
from django.db.models import Count, Prefetch, Q
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import reswap, retarget, trigger_client_event

from . import services
from .extract import SUPPORTED_TYPES
from .forms import (
    SAMPLE_INPUTS,
    SAMPLE_QUESTIONS,
    ClearForm,
    FirstOwnerForm,
    MemoryEditForm,
    MemoryFilterForm,
    PurgeForm,
    QuestionForm,
    TextIngestForm,
)
from .llm import ProviderError
from .models import Consolidation, ConsolidationRun, Memory, MemoryLink, ProcessedFile
from .schedule import next_consolidation_run
from .services import browse
from .services.consolidate import unconsolidated
from .services.history import Actor
from .services.setup import SetupError, create_first_owner, needs_first_user, user_for_sign_in_token
from .templatetags.memories_ui import status_context

log = logging.getLogger(__name__)

PAGE_SIZE = 24
RECENT_ON_INGEST = 12
# Tells the sidebar (and anything else listening) that counts may have changed.
CHANGED = "memories-changed"


# --- helpers ---------------------------------------------------------------------------------


def _error(request, message: str, status: int = 400):
    """A refused request: the message in the flash area for HTMX, an error page otherwise."""
    if request.htmx:
        response = render(request, "memories/fragments.html#flash", {"flash": [("error", message)]}, status=status)
        return reswap(retarget(response, "#flash"), "innerHTML")
    return render(request, "memories/error.html", {"message": message}, status=status)


def _owned_memory(request, memory_id: int) -> Memory:
    # Another owner's memory is indistinguishable from a missing one.
    return get_object_or_404(Memory, pk=memory_id, owner=request.user)


def _card(request, memory: Memory, **extra):
    return render(request, "memories/cards.html#card", {"memory": memory, **extra})


def _upload_context() -> dict:
    return {
        "max_upload_mb": settings.MEMORY_MAX_UPLOAD_MB,
        "accept": ",".join(sorted(SUPPORTED_TYPES)),
        "supported_types": " ".join(sorted(SUPPORTED_TYPES)),
    }


# --- first run and sign-in ---------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
def welcome_link(request, token: str):
    """GET shows a button and POST signs in, so a link previewer fetching the URL cannot use it up."""
    try:
        user = user_for_sign_in_token(token=token)
    except SetupError as exc:
        return render(request, "memories/error.html", {"message": str(exc), "anonymous": True}, status=400)
    if request.method == "GET":
        return render(request, "registration/welcome.html", {"welcome_user": user})
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    return redirect("memories:set_password")


@login_required
@require_http_methods(["GET", "POST"])
def set_password(request):
    if request.user.has_usable_password():
        return redirect("password_change")
    form = SetPasswordForm(request.user, request.POST or None)
    if request.method == "POST":
        if form.is_valid():
            user = form.save()
            update_session_auth_hash(request, user)
            messages.success(request, "Password set. Welcome to your memory.")
            return redirect("memories:ingest")
        return render(request, "registration/set_password.html", {"form": form}, status=400)
    return render(request, "registration/set_password.html", {"form": form})


@require_POST
def first_owner(request):
    if not needs_first_user():
        return render(request, "memories/error.html", {"message": "The owner account already exists; sign in instead.", "anonymous": True}, status=403)
    owner_form = FirstOwnerForm(request.POST)
    if owner_form.is_valid():
        try:
            user = create_first_owner(username=owner_form.cleaned_data["username"], password=owner_form.cleaned_data["password1"])
        except SetupError as exc:
            owner_form.add_error(None, str(exc))
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome, {user.get_username()}. Your memory is ready.")
            return redirect("memories:ingest")
    return render(request, "registration/login.html", {"form": AuthenticationForm(request), "owner_form": owner_form, "first_run": True}, status=400)


# --- ingest ----------------------------------------------------------------------------------


@login_required
@require_GET
def ingest(request):
    recent = Memory.objects.filter(owner=request.user).order_by("-created_at", "-id")[:RECENT_ON_INGEST]
    return render(request, "memories/ingest.html", {
        "form": TextIngestForm(), "samples": SAMPLE_INPUTS, "recent": recent, **_upload_context(),
    })


@login_required
@require_POST
def ingest_text(request):
    form = TextIngestForm(request.POST)
    if not form.is_valid():
        first = next(iter(form.errors.values()))[0] if form.errors else "Check the form."
        field = next(iter(form.errors), "")
        return _error(request, f"{field.replace('_', ' ').capitalize()}: {first}" if field and field != "__all__" else first)
    try:
        result = services.ingest_text(owner=request.user, **form.cleaned_data, actor=Actor.for_user(request.user))
    except services.RejectedContentError as exc:
        return _rejected(request, [str(exc)], _restorable(request.user, [exc.memory_ref]))
    except services.IngestError as exc:
        return _error(request, str(exc))
    if result.created:
        services.queue_extraction(result.memory)
    return _ingested(request, [result], [])


@login_required
@require_POST
def ingest_files(request):
    files = request.FILES.getlist("files")
    if not files:
        return _error(request, "Choose at least one file to upload.")
    source = request.POST.get("source", "")[:500]
    results, errors, rejected = [], [], []
    for upload in files:
        try:
            result = services.ingest_file(owner=request.user, fileobj=upload, name=upload.name, source=source,
                                          occurred_at=request.POST.get("occurred_at") or None,
                                          actor=Actor.for_user(request.user))
        except services.IngestError as exc:
            errors.append(str(exc))
            rejected.append(getattr(exc, "memory_ref", None))
            continue
        if result.created:
            services.queue_extraction(result.memory)
        results.append(result)
    restorable = _restorable(request.user, rejected)
    if not results:
        return _rejected(request, errors, restorable)
    return _ingested(request, results, errors, restorable)


def _restorable(owner, memory_ids) -> list[int]:
    """Of the memories a refused ingest named, those still there to restore (not purged)."""
    ids = [pk for pk in memory_ids if pk]
    if not ids:
        return []
    return list(Memory.all_objects.filter(owner=owner, pk__in=ids, deleted_at__isnull=False).order_by("pk").values_list("pk", flat=True))


def _rejected(request, errors: list[str], restorable: list[int]):
    """Content deleted before is refused; the message says when, with a button to restore it."""
    if not restorable:
        return _error(request, " ".join(errors))
    if request.htmx:
        response = render(request, "memories/fragments.html#flash", {"flash": [("error", e) for e in errors], "restorable": restorable}, status=400)
        return reswap(retarget(response, "#flash"), "innerHTML")
    return render(request, "memories/error.html", {"message": " ".join(errors), "restorable": restorable}, status=400)


def _ingested(request, results, errors, restorable=()):
    flash = [("success", r.message) for r in results] + [("error", e) for e in errors]
    if not request.htmx:
        for level, text in flash:
            messages.add_message(request, messages.SUCCESS if level == "success" else messages.ERROR, text)
        return redirect("memories:ingest")
    # The task may already have run (sync mode, a fast worker): show the status as it is now.
    memories = [Memory.objects.get(pk=r.memory.pk) for r in results if r.created]
    response = render(request, "memories/fragments.html#ingested", {"memories": memories, "flash": flash, "restorable": restorable})
    return trigger_client_event(response, CHANGED)


# --- memory cards ----------------------------------------------------------------------------


@login_required
@require_GET
def memory_card(request, memory_id: int):
    memory = _owned_memory(request, memory_id)
    response = _card(request, memory, cited=request.GET.get("cited") == "1")
    if memory.status != Memory.Status.PENDING:
        trigger_client_event(response, CHANGED)
    return response


@login_required
@require_POST
def memory_retry(request, memory_id: int):
    _owned_memory(request, memory_id)
    try:
        memory = services.retry_memory(owner=request.user, memory_id=memory_id, actor=Actor.for_user(request.user))
    except services.IngestError as exc:
        return _error(request, str(exc))
    services.queue_extraction(memory)
    memory.refresh_from_db()
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
    except services.IngestError as exc:
        return _error(request, str(exc))
    if memory is None:
        raise Http404("No deleted memory of yours with that id.")
    if not request.htmx:
        messages.success(request, f"Memory {memory.pk} restored.")
        return redirect("memories:detail", memory.pk)
    response = render(request, "memories/fragments.html#restored", {"memory": memory, "flash": [("success", f"Memory {memory.pk} restored.")]})
    return trigger_client_event(response, CHANGED)


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
    page = Paginator(services.deleted_memories(owner=request.user), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "memories/deleted.html", {"page": page})


# --- review queue ----------------------------------------------------------------------------


def _review_count(user) -> int:
    return Memory.objects.filter(owner=user, status=Memory.Status.REVIEW).count()


@login_required
@require_GET
def review(request):
    waiting = Memory.objects.filter(owner=request.user, status=Memory.Status.REVIEW).order_by("created_at", "id")
    page = Paginator(waiting, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "memories/review.html", {"page": page, "review_mode": settings.MEMORY_REVIEW_MODE})


def _reviewed(request, memory_id: int, service, done: str):
    _owned_memory(request, memory_id)  # another owner's memory stays a 404
    memory = service(owner=request.user, memory_id=memory_id, actor=Actor.for_user(request.user))
    if memory is None:
        return _error(request, f"Memory {memory_id} is not waiting for review.", status=409)
    if not request.htmx:
        messages.success(request, f"Memory {memory_id} {done}.")
        return redirect("memories:review")
    context = {"memory": memory, "done": done, "review_count": _review_count(request.user)}
    return trigger_client_event(render(request, "memories/review.html#reviewed", context), CHANGED)


@login_required
@require_POST
def memory_approve(request, memory_id: int):
    return _reviewed(request, memory_id, services.approve_memory, "approved")


@login_required
@require_POST
def memory_reject(request, memory_id: int):
    return _reviewed(request, memory_id, services.reject_memory, "rejected")


# --- query -----------------------------------------------------------------------------------


@login_required
@require_GET
def query(request):
    context = {"sample_questions": SAMPLE_QUESTIONS}
    form = QuestionForm(request.GET or None)
    context["form"] = form
    if request.GET:
        if not form.is_valid():
            return _error(request, "Ask a question (up to 2,000 characters).")
        try:
            context["result"] = services.answer_question(owner=request.user, question=form.cleaned_data["q"])
        except ProviderError as exc:
            return _error(request, f"The model did not answer: {exc}", status=502)
        except ValueError as exc:
            return _error(request, str(exc))
    if request.htmx:
        return render(request, "memories/query.html#answer", context)
    return render(request, "memories/query.html", context)


# --- memory bank -----------------------------------------------------------------------------


def _keyset(memories, order: tuple[str, ...], anchor: Memory, *, forward: bool):
    """Rows after (or before) the anchor in this order; the order ends on a unique id."""
    conditions = Q()
    equal = Q()
    for field in order:
        name = field.lstrip("-")
        descending = field.startswith("-") == forward
        value = getattr(anchor, name)
        conditions |= equal & Q(**{f"{name}__{'lt' if descending else 'gt'}": value})
        equal &= Q(**{name: value})
    return memories.filter(conditions)


def _with_link_counts(memories: list[Memory]) -> list[Memory]:
    ids = [m.pk for m in memories]
    counts = dict.fromkeys(ids, 0)
    for column in ("from_memory", "to_memory"):
        for row in MemoryLink.objects.filter(**{f"{column}__in": ids}).values(column).annotate(n=Count("id")):
            counts[row[column]] += row["n"]
    for m in memories:
        m.link_count = counts[m.pk]
    return memories


@login_required
@require_GET
def memory_list(request):
    form = MemoryFilterForm(request.GET)
    if not form.is_valid():
        return _error(request, "Those filters are not valid: " + "; ".join(f"{k}: {v[0]}" for k, v in form.errors.items()))
    f = form.cleaned_data
    sort = f["sort"] or "new"
    order = browse.SORTS.get(sort, browse.SORTS["new"])
    # No link-count aggregate here (it would GROUP BY every row); links are counted for the shown page only.
    memories = browse.filter_memories(owner=request.user, q=f["q"], topic=f["topic"], entity=f["entity"], status=f["status"], sort=sort,
                                      fact=f["fact"])
    # Keyset pagination: the cursor is the id of the last (or first) card shown, so page
    # 4,000 costs what page 1 costs, which OFFSET cannot promise.
    anchor_id = f["after"] or f["before"]
    anchor = Memory.objects.filter(owner=request.user, pk=anchor_id).first() if anchor_id else None
    if anchor is not None and f["before"]:
        reverse_order = [o[1:] if o.startswith("-") else f"-{o}" for o in order]
        rows = list(_keyset(memories, order, anchor, forward=False).order_by(*reverse_order)[: PAGE_SIZE + 1])
        has_prev, has_next = len(rows) > PAGE_SIZE, True
        rows = rows[:PAGE_SIZE][::-1]
    else:
        page = _keyset(memories, order, anchor, forward=True) if anchor is not None else memories
        rows = list(page[: PAGE_SIZE + 1])
        has_next, has_prev = len(rows) > PAGE_SIZE, anchor is not None
        rows = rows[:PAGE_SIZE]
    params = request.GET.copy()
    for key in ("after", "before"):
        params.pop(key, None)
    base_query = params.urlencode()
    context = {
        "form": form,
        "memories": _with_link_counts(rows),
        "total": memories.count(),
        "filtered": any(f[k] for k in ("q", "topic", "entity", "status", "fact")),
        "next_url": f"?{base_query}&after={rows[-1].pk}" if has_next and rows else "",
        "prev_url": f"?{base_query}&before={rows[0].pk}" if has_prev and rows else "",
        "first_url": f"?{base_query}" if has_prev else "",
        "lost_cursor": bool(anchor_id and anchor is None),
    }
    if request.htmx and request.htmx.target == "results":
        return render(request, "memories/memory_list.html#results", context)
    return render(request, "memories/memory_list.html", context)


def _owned_any(request, memory_id: int) -> Memory:
    """One of the owner's memories in any state, deleted and superseded included: its page
    still shows what happened to it and offers the way back. Others' stay a 404."""
    return get_object_or_404(Memory.all_objects.select_related("duplicate_of", "superseded_by", "outdated_by"), pk=memory_id, owner=request.user)


def _detail_context(request, memory: Memory, form=None) -> dict:
    links_out = memory.links_out.select_related("to_memory").order_by("-created_at")
    links_in = memory.links_in.select_related("from_memory").order_by("-created_at")
    connections = [(link.relationship, link.to_memory, "to") for link in links_out] + [
        (link.relationship, link.from_memory, "from") for link in links_in
    ]
    return {
        "memory": memory,
        "connections": connections,
        "consolidations": memory.consolidations.filter(owner=request.user).order_by("-created_at"),
        "preview": _preview_kind(memory),
        "inbox_files": ProcessedFile.objects.filter(owner=request.user, memory=memory),
        "form": form if form is not None else (MemoryEditForm.for_memory(memory) if _editable(memory) else None),
        "events": services.memory_history(owner=request.user, memory_id=memory.pk),
        # The live managers hide these (they are out of the record), but the page should say they exist.
        "older_versions": Memory.all_objects.filter(owner=request.user, superseded_by=memory).order_by("-created_at"),
        "near_duplicates": Memory.objects.filter(owner=request.user, duplicate_of=memory).order_by("pk"),
        # Facts change: the older facts this memory superseded.
        "outdates": Memory.objects.filter(owner=request.user, outdated_by=memory).order_by("-occurred_at"),
    }


def _editable(memory: Memory) -> bool:
    return memory.is_live and memory.status in (Memory.Status.READY, Memory.Status.REVIEW)


@login_required
@require_GET
def memory_detail(request, memory_id: int):
    memory = _owned_any(request, memory_id)
    return render(request, "memories/memory_detail.html", _detail_context(request, memory))


@login_required
@require_POST
def memory_edit(request, memory_id: int):
    """Correct summary, entities, topics, importance or the date; the edit is recorded."""
    memory = _owned_any(request, memory_id)
    if not memory.is_live:
        return _error(request, f"Memory {memory.pk} is {'deleted' if memory.deleted_at else 'superseded'}; restore it before editing.", status=409)
    if not _editable(memory):
        # An extraction still to come would overwrite the correction.
        return _error(request, f"Memory {memory.pk} has not been extracted yet ({memory.get_status_display().lower()}); correct it once it is ready.", status=409)
    form = MemoryEditForm.for_memory(memory, request.POST)
    if not form.is_valid():
        field, errors = next(iter(form.errors.items()))
        return _edit_refused(request, memory, form, f"{form[field].label}: {errors[0]}" if field != "__all__" else errors[0])
    changes = form.changes()
    if not changes:
        return _edited(request, memory, "Nothing changed.")
    try:
        memory = services.update_memory(owner=request.user, memory_id=memory.pk, changes=changes, actor=Actor.for_user(request.user))
    except services.IngestError as exc:
        return _edit_refused(request, memory, form, str(exc))
    except Memory.DoesNotExist:
        raise Http404("No memory of yours with that id.") from None
    return _edited(request, memory, f"Memory {memory.pk} corrected: {', '.join(f.replace('_', ' ') for f in changes)}.")


def _edit_refused(request, memory: Memory, form, message: str):
    if request.htmx:
        return _error(request, message)
    # A plain form keeps what was typed, with the reason above it.
    context = {**_detail_context(request, memory, form), "edit_error": message}
    return render(request, "memories/memory_detail.html", context, status=400)


def _edited(request, memory: Memory, message: str):
    if not request.htmx:
        messages.success(request, message)
        return redirect("memories:detail", memory.pk)
    memory = Memory.objects.get(pk=memory.pk)
    context = {**_detail_context(request, memory), "flash": [("success", message)]}
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
    events = services.memory_history(owner=request.user, memory_id=memory_id)
    memory = Memory.all_objects.filter(owner=request.user, pk=memory_id).first()
    if memory is None and not events.exists():
        raise Http404("No memory of yours with that id.")
    context = {"memory": memory, "memory_id": memory_id, "events": events}
    if request.htmx:
        return render(request, "memories/history.html#history", context)
    return render(request, "memories/history.html", context)


def _preview_kind(memory: Memory) -> str:
    mime = memory.mime_type or ""
    if not memory.original:
        return ""
    # SVG can carry script: offered as a download only.
    if mime.startswith("image/") and mime != "image/svg+xml":
        return "image"
    if mime.startswith("audio/"):
        return "audio"
    if mime.startswith("video/"):
        return "video"
    if mime == "application/pdf":
        return "pdf"
    return ""


@login_required
@require_GET
@xframe_options_sameorigin
def memory_file(request, memory_id: int):
    """The original upload, only to its owner; previewable types inline, the rest as a download."""
    memory = _owned_memory(request, memory_id)
    if not memory.original:
        raise Http404("This memory has no original file.")
    try:
        handle = memory.original.open("rb")
    except FileNotFoundError:
        raise Http404("The original file is missing from storage.") from None
    inline = bool(_preview_kind(memory)) and request.GET.get("download") != "1"
    response = FileResponse(handle, as_attachment=not inline, filename=memory.file_name,
                            content_type=memory.mime_type or "application/octet-stream")
    response["X-Content-Type-Options"] = "nosniff"
    if _preview_kind(memory) != "pdf":
        # Nothing in a stored file runs as this site (Chromium's PDF viewer refuses a sandbox).
        response["Content-Security-Policy"] = "sandbox; default-src 'none'; img-src 'self'; media-src 'self'"
    return response


# --- consolidations --------------------------------------------------------------------------


REQUEST_KEY = "consolidation_requested_at"
# A request not picked up by a worker within this long is no longer shown as queued.
QUEUED_FOR = timedelta(minutes=10)


def _run_state(request) -> dict:
    latest = ConsolidationRun.objects.filter(owner=request.user).first()
    requested = request.session.get(REQUEST_KEY)
    requested_at = datetime.fromisoformat(requested) if requested else None
    if requested_at and timezone.now() - requested_at > QUEUED_FOR:
        requested_at = None
    if latest is not None and latest.finished_at is None:
        state = "running"
    elif requested_at and (latest is None or latest.started_at < requested_at):
        state = "queued"
    else:
        state = "idle"
    just_finished = bool(requested_at and state == "idle")
    if just_finished or (requested and not requested_at):
        request.session.pop(REQUEST_KEY, None)
    return {"latest": latest, "state": state, "just_finished": just_finished, "next_run": next_consolidation_run()}


@login_required
@require_GET
def consolidations(request):
    page = Paginator(
        # Deleted sources too, so a stale insight can show which source left.
        Consolidation.objects.filter(owner=request.user)
        .prefetch_related(Prefetch("sources", queryset=Memory.all_objects.order_by("pk")))
        .order_by("-created_at", "-id"), 20
    ).get_page(request.GET.get("page"))
    context = {"page": page, "waiting": unconsolidated(request.user).count(), "updates": services.recent_updates(owner=request.user),
               **_run_state(request)}
    if request.htmx and request.htmx.target == "insights":
        return render(request, "memories/consolidations.html#insights", context)
    return render(request, "memories/consolidations.html", context)


@login_required
@require_POST
def consolidate_now(request):
    request.session[REQUEST_KEY] = timezone.now().isoformat()
    if not services.queue_consolidation(owner=request.user):
        return _error(request, "A consolidation is already running; its result will appear here.", status=409)
    if not request.htmx:
        messages.success(request, "Consolidation queued.")
        return redirect("memories:consolidations")
    return consolidation_status(request)


@login_required
@require_http_methods(["GET", "POST"])
def consolidation_status(request):
    state = _run_state(request)
    response = render(request, "memories/consolidations.html#run_status", state)
    if state["just_finished"]:
        trigger_client_event(response, "consolidated")
        trigger_client_event(response, CHANGED)
    return response


# --- sidebar and danger zone -----------------------------------------------------------------


@login_required
@require_GET
def status(request):
    return render(request, "memories/status.html", status_context(request.user))


@login_required
@require_http_methods(["GET", "POST"])
def clear(request):
    form = ClearForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        counts = services.clear_owner(owner=request.user, actor=Actor.for_user(request.user))
        messages.success(request, f"Deleted {counts['memories']} memories, {counts['consolidations']} consolidations "
                                  f"and {counts['processed_files']} inbox records.")
        return redirect("memories:ingest")
    owned = Memory.objects.filter(owner=request.user)
    context = {
        "form": form,
        "memory_count": owned.count(),
        "file_count": owned.exclude(original="").count(),
        "consolidation_count": Consolidation.objects.filter(owner=request.user).count(),
        "processed_count": ProcessedFile.objects.filter(owner=request.user).count(),
    }
    return render(request, "memories/clear.html", context, status=400 if request.method == "POST" else 200)

