"""Pages and the HTMX fragments they swap. Thin: validate, call a service, render."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import SetPasswordForm
from django.core.paginator import Paginator
from django.db.models import Count, Prefetch, Q
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.csp import csp_override
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import reswap, retarget, trigger_client_event

from . import ratelimit, services, signin
from .extract import SUPPORTED_TYPES
from .forms import (
    SAMPLE_INPUTS,
    SAMPLE_QUESTIONS,
    BulkDeleteForm,
    ClearForm,
    MemoryEditForm,
    MemoryFilterForm,
    PurgeForm,
    QuestionForm,
    StatsForm,
    TextIngestForm,
    TimelineForm,
)
from .llm import ProviderError
from .models import Consolidation, ConsolidationRun, Event, Memory, MemoryLink, ProcessedFile
from .schedule import next_consolidation_run
from .services import browse, health, visual
from .services.consolidate import planned_batches, unconsolidated
from .services.inbox import refused_files
from .services.history import Actor
from .services.setup import SetupError, user_for_sign_in_token
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


def _over_limit(request, scope: str):
    """The same per-user limits as the API (memories/ratelimit.py), or None when allowed."""
    verdict = ratelimit.hit(scope, str(request.user.pk))
    if verdict.allowed:
        return None
    response = _error(request, f"Too many {scope} requests; try again in {verdict.retry_after} s.", status=429)
    response["Retry-After"] = str(verdict.retry_after)
    return response


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


@require_GET
def healthz(request):
    """Liveness: the process answers. No sign-in, no database."""
    return JsonResponse({"status": "ok"})


@require_GET
def readyz(request):
    """Readiness: database, task broker and task cluster, each with what was found. 503
    when one is not ready, so a load balancer holds traffic back. No sign-in: it says only
    which part is down, nothing of anyone's memories."""
    checks = health.readiness()
    ready = all(c.ok for c in checks)
    body = {"status": "ready" if ready else "not ready", "checks": {c.name: {"ok": c.ok, "detail": c.detail} for c in checks}}
    return JsonResponse(body, status=200 if ready else 503)


def not_found(request, exception=None):
    """The site's own 404 page. A memory page that is gone says whether it was purged (its
    history remains) rather than leaving the owner to wonder."""
    purged = None
    match = getattr(request, "resolver_match", None)
    memory_id = match.kwargs.get("memory_id") if match else None
    if memory_id and request.user.is_authenticated:
        purged = Event.objects.filter(owner=request.user, subject_type=Event.Subject.MEMORY, subject_id=memory_id,
                                      action=Event.Action.PURGED).first()
    context = {"memory_id": memory_id, "purged": purged}
    return render(request, "404.html", context, status=404)


# --- first run and sign-in ---------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
def welcome_link(request, token: str):
    """GET shows a button and POST signs in, so a link previewer fetching the URL cannot use it up."""
    if wait := signin.refused_for(request):
        return render(request, "memories/error.html", {"message": signin.wait_message(wait), "anonymous": True}, status=429)
    try:
        user = user_for_sign_in_token(token=token)
    except SetupError as exc:
        signin.record_failure(request)  # guessing links counts like guessing passwords
        return render(request, "memories/error.html", {"message": str(exc), "anonymous": True}, status=400)
    if request.method == "GET":
        response = render(request, "registration/welcome.html", {"welcome_user": user})
        # The link is a password: not in the Referer of the next request, not in any cache.
        response["Referrer-Policy"] = "no-referrer"
        response["Cache-Control"] = "no-store"
        return response
    login(request, user, backend=signin.BACKEND)
    response = redirect("memories:set_password")
    response["Referrer-Policy"] = "no-referrer"
    return response


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


# --- ingest ----------------------------------------------------------------------------------


@login_required
@require_GET
def ingest(request):
    recent = Memory.objects.filter(owner=request.user).order_by("-created_at", "-id")[:RECENT_ON_INGEST]
    return render(request, "memories/ingest.html", {
        "form": TextIngestForm(), "samples": SAMPLE_INPUTS, "recent": recent, **_upload_context(),
        "refused": refused_files(owner=request.user),
    })


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
    if limited := _over_limit(request, "ingest"):
        return limited
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
    if not memory.is_pending:
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
        if limited := _over_limit(request, "query"):
            return limited
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
        return _error(request, "Those filters are not valid: " + "; ".join(f"{k}: {v[0]}" if k != "__all__" else v[0] for k, v in form.errors.items()))
    f = form.cleaned_data
    sort = f["sort"] or "new"
    order = browse.SORTS.get(sort, browse.SORTS["new"])
    # No link-count aggregate here (it would GROUP BY every row); links are counted for the shown page only.
    memories = browse.filter_memories(owner=request.user, q=f["q"], topic=f["topic"], entity=f["entity"], status=f["status"], sort=sort,
                                      source=f["source"], date_by=f["date_by"] or "occurred", date_from=f["date_from"], date_to=f["date_to"],
                                      fact=f["fact"])
    filtered = any(f[k] for k in ("q", "topic", "entity", "status", "source", "date_from", "date_to", "fact"))
    # Counting every match of a common word costs a scan, so searches count to "1,000+";
    # the whole bank (or one status) is counted from an index, exactly.
    total, more = browse.count_matches(memories) if any(f[k] for k in ("q", "topic", "entity")) else (memories.count(), False)
    if request.htmx and request.htmx.target == "result-count":
        # A delete, undo or extraction changed what the count says; the cards stay as they are.
        return render(request, "memories/memory_list.html#result_count", {"total": total, "more": more, "filtered": filtered})
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
        "total": total,
        "more": more,
        "filtered": filtered,
        "count_url": f"?{base_query}",
        "next_url": f"?{base_query}&after={rows[-1].pk}" if has_next and rows else "",
        "prev_url": f"?{base_query}&before={rows[0].pk}" if has_prev and rows else "",
        "first_url": f"?{base_query}" if has_prev else "",
        "lost_cursor": bool(anchor_id and anchor is None),
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
    context = {"items": items, "sampled": sampled, "selected": selected, "column": column,
               "selected_missing": bool(selected) and selected not in {value for value, _ in items}}
    return render(request, "memories/memory_list.html#facet_options", context)


@login_required
@require_POST
def memory_bulk_delete(request):
    """Delete the memories ticked on the bank page, each a recorded delete (restorable)."""
    form = BulkDeleteForm(request.POST)
    if not form.is_valid():
        return _error(request, form.errors["ids"][0])
    deleted = services.delete_memories(owner=request.user, memory_ids=form.cleaned_data["ids"], actor=Actor.for_user(request.user))
    message = f"Deleted {len(deleted)} memor{'y' if len(deleted) == 1 else 'ies'}; restore {'it' if len(deleted) == 1 else 'them'} from Deleted memories."
    if not request.htmx:
        messages.success(request, message)
        return redirect("memories:list")
    response = render(request, "memories/memory_list.html#bulk_deleted", {"deleted": deleted, "flash": [("success", message)]})
    return trigger_client_event(response, CHANGED)


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
        "inbox_files": ProcessedFile.objects.filter(owner=request.user, memory=memory),
        "form": form if form is not None else (MemoryEditForm.for_memory(memory) if memory.is_editable else None),
        "events": services.memory_history(owner=request.user, memory_id=memory.pk),
        # The live managers hide these (they are out of the record), but the page should say they exist.
        "older_versions": Memory.all_objects.filter(owner=request.user, superseded_by=memory).order_by("-created_at"),
        "near_duplicates": Memory.objects.filter(owner=request.user, duplicate_of=memory).order_by("pk"),
        # Facts change: the older facts this memory superseded.
        "outdates": Memory.objects.filter(owner=request.user, outdated_by=memory).order_by("-occurred_at"),
    }


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
        return _error(request, f"Memory {memory.pk} is {memory.state.label.lower()}; restore it before editing.", status=409)
    if not memory.is_editable:
        # An extraction still to come would overwrite the correction.
        return _error(request, f"Memory {memory.pk} has not been extracted yet ({memory.get_status_display().lower()}); correct it once it is ready.", status=409)
    form = MemoryEditForm.for_memory(memory, request.POST)
    if not form.is_valid():
        return _edit_refused(request, memory, form)
    changes = form.changes()
    if not changes:
        return _edited(request, memory, "Nothing changed.")
    try:
        memory = services.update_memory(owner=request.user, memory_id=memory.pk, changes=changes, actor=Actor.for_user(request.user))
    except services.IngestError as exc:
        # The service's words, shown at the field they are about.
        form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        return _edit_refused(request, memory, form)
    except Memory.DoesNotExist:
        raise Http404("No memory of yours with that id.") from None
    return _edited(request, memory, f"Memory {memory.pk} corrected: {', '.join(f.replace('_', ' ') for f in changes)}.")


def _edit_refused(request, memory: Memory, form):
    """The form comes back with what was typed and each error under its field, where the
    person is looking (the flash area is a screen away on a long memory page)."""
    if request.htmx:
        return render(request, "memories/memory_detail.html#edit_form", {"memory": memory, "form": form}, status=400)
    return render(request, "memories/memory_detail.html", _detail_context(request, memory, form), status=400)


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


@login_required
@require_GET
@xframe_options_sameorigin
# Not the pages' policy: its frame-ancestors 'none' and object-src 'none' would stop the PDF
# preview (framed by the memory page, shown by the browser's viewer); the view sets its own.
@csp_override({})
def memory_file(request, memory_id: int):
    """The original upload (services.may_fetch_original says to whom); previewable types
    inline, the rest as a download."""
    memory = Memory.all_objects.filter(pk=memory_id).first()
    if memory is None or not services.may_fetch_original(user=request.user, memory=memory):
        raise Http404("No original file of yours with that id.")
    try:
        handle = memory.original.open("rb")
    except FileNotFoundError:
        raise Http404("The original file is missing from storage.") from None
    inline = bool(memory.preview_kind) and request.GET.get("download") != "1"
    response = FileResponse(handle, as_attachment=not inline, filename=memory.file_name,
                            content_type=memory.mime_type or "application/octet-stream")
    response["X-Content-Type-Options"] = "nosniff"
    if memory.preview_kind != "pdf":
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
    progress = None
    if state == "running":
        # Batches are saved as they finish; what is still waiting says how many may follow.
        done = latest.consolidations_made
        total = min(done + planned_batches(owner=request.user), settings.MEMORY_CONSOLIDATE_MAX_BATCHES)
        progress = {"done": done, "total": max(total, done, 1), "memories": latest.memories_consolidated}
    return {"latest": latest, "state": state, "just_finished": just_finished, "next_run": next_consolidation_run(),
            "progress": progress, "waiting": unconsolidated(request.user).count()}


@login_required
@require_GET
def consolidations(request):
    page = Paginator(
        # Deleted sources too, so a stale insight can show which source left.
        Consolidation.objects.filter(owner=request.user)
        .prefetch_related(Prefetch("sources", queryset=Memory.all_objects.order_by("pk")))
        .order_by("-created_at", "-id"), 20
    ).get_page(request.GET.get("page"))
    context = {"page": page, "updates": services.recent_updates(owner=request.user), **_run_state(request)}
    if request.htmx and request.htmx.target == "insights":
        return render(request, "memories/consolidations.html#insights", context)
    return render(request, "memories/consolidations.html", context)


@login_required
@require_POST
def consolidate_now(request):
    if limited := _over_limit(request, "consolidate"):
        return limited
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
        messages.success(request, f"Cleared {counts['memories']} memories and {counts['consolidations']} consolidations, "
                                  f"and removed {counts['inbox_files']} inbox file{'s' * (counts['inbox_files'] != 1)}. "
                                  "The same content can be added again.")
        return redirect("memories:ingest")
    owned = Memory.objects.filter(owner=request.user)
    context = {
        "form": form,
        "memory_count": owned.count(),
        "file_count": owned.exclude(original="").count(),
        "consolidation_count": Consolidation.objects.filter(owner=request.user).count(),
        "processed_count": ProcessedFile.objects.filter(owner=request.user).count(),
        "inbox_file_count": services.clearable_inbox_files(owner=request.user),
    }
    return render(request, "memories/clear.html", context, status=400 if request.method == "POST" else 200)



# --- pictures: graph, timeline, stats ----------------------------------------------------------


@login_required
@require_GET
def graph(request):
    """The page; the browser fetches the nodes from /api/graph (the same data the API gives)."""
    return render(request, "memories/graph.html", {"facets": visual.graph_facets(owner=request.user),
                                                   "limit": visual.GRAPH_DEFAULT_LIMIT, "max_limit": visual.GRAPH_MAX_LIMIT})


@login_required
@require_GET
def timeline(request):
    form = TimelineForm(request.GET)
    if not form.is_valid():
        return _error(request, "That timeline range is not valid: " + "; ".join(v[0] for v in form.errors.values()))
    f = form.cleaned_data
    zoom = f["zoom"] or "month"
    data = visual.timeline_data(owner=request.user, zoom=zoom, date_from=f["date_from"], date_to=f["date_to"])
    return render(request, "memories/timeline.html", {"form": form, "zoom": zoom, "timeline": data, "zooms": list(visual.ZOOMS),
                                                      "range_query": _without(request, "zoom")})


@login_required
@require_GET
def stats(request):
    form = StatsForm(request.GET or None, initial={"days": 30})
    if request.GET and not form.is_valid():
        return _error(request, "Choose 7, 30, 90 or 365 days.")
    days = (form.cleaned_data["days"] if form.is_bound else None) or 30
    data = visual.stats_data(owner=request.user, days=days)
    return render(request, "memories/stats.html", {
        "form": form, "stats": data, "days": days,
        "status_rows": [{"status": Memory.Status(k).label, "count": v} for k, v in data["by_status"].items()],
        "usage_totals": {k: sum(d[k] for d in data["provider_per_day"]) for k in ("calls", "failures", "breaker_trips")},
        "usage_series": USAGE_SERIES, "backlog_series": BACKLOG_SERIES,
    })


USAGE_SERIES = [("calls", "s0", "calls"), ("failures", "bad", "failures"), ("breaker_trips", "warn", "breaker trips")]
BACKLOG_SERIES = [("backlog", "s2", "waiting")]


def _without(request, *keys: str) -> str:
    params = request.GET.copy()
    for key in keys:
        params.pop(key, None)
    return params.urlencode()
