"""Pages and the HTMX fragments they swap. Thin: validate, call a service, render."""

from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import SetPasswordForm
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import redirect, render
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
from .models import Memory
from .services import browse, health, status as space_status, visual
from .services.history import Actor
from .services.setup import SetupError, user_for_sign_in_token
from .services.tokens import TokenError, create_token, revoke_token, tokens_of

log = logging.getLogger(__name__)

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
    memory = browse.get_memory(owner=request.user, memory_id=memory_id)
    if memory is None:
        raise Http404("No memory of yours with that id.")
    return memory


def _owned_any(request, memory_id: int) -> Memory:
    """One of the owner's memories in any state (its page says what happened to it)."""
    memory = browse.find_memory(owner=request.user, memory_id=memory_id)
    if memory is None:
        raise Http404("No memory of yours with that id.")
    return memory


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
        purged = browse.purge_record(owner=request.user, memory_id=memory_id)
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
    return render(request, "memories/ingest.html", {
        "form": TextIngestForm(), "samples": SAMPLE_INPUTS, **_upload_context(), **browse.ingest_page(owner=request.user),
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
        return _rejected(request, [str(exc)], browse.restorable(owner=request.user, memory_ids=[exc.memory_ref]))
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
    restorable = browse.restorable(owner=request.user, memory_ids=rejected)
    if not results:
        return _rejected(request, errors, restorable)
    return _ingested(request, results, errors, restorable)


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
    memories = browse.current_memories(owner=request.user, memory_ids=[r.memory.pk for r in results if r.created])
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
    memory = browse.get_memory(owner=request.user, memory_id=memory.pk) or memory
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
    page = Paginator(services.deleted_memories(owner=request.user), browse.PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "memories/deleted.html", {"page": page})


# --- review queue ----------------------------------------------------------------------------


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
    context = {"memory": memory, "done": done, "review_count": space_status.waiting_review(owner=request.user)}
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


@login_required
@require_GET
def memory_list(request):
    form = MemoryFilterForm(request.GET)
    if not form.is_valid():
        return _error(request, "Those filters are not valid: " + "; ".join(f"{k}: {v[0]}" if k != "__all__" else v[0] for k, v in form.errors.items()))
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


def _detail_context(request, memory_id: int, form=None) -> dict:
    page = browse.memory_page(owner=request.user, memory_id=memory_id)
    if page is None:
        raise Http404("No memory of yours with that id.")
    memory = page.memory
    return {**page.context(), "form": form if form is not None else (MemoryEditForm.for_memory(memory) if memory.is_editable else None)}


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
    events = services.memory_history(owner=request.user, memory_id=memory_id)
    memory = browse.find_memory(owner=request.user, memory_id=memory_id)
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
    memory = browse.original_file(user=request.user, memory_id=memory_id)
    if memory is None:
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


# When the owner last asked for a run: until a worker starts it, the page shows it queued.
REQUEST_KEY = "consolidation_requested_at"


def _requested_at(request) -> datetime | None:
    requested = request.session.get(REQUEST_KEY)
    return datetime.fromisoformat(requested) if requested else None


def _run_seen(request, run: space_status.RunState) -> space_status.RunState:
    if run.request_done:
        request.session.pop(REQUEST_KEY, None)
    return run


@login_required
@require_GET
def consolidations(request):
    insights = browse.insights_page(owner=request.user, page=request.GET.get("page"), requested_at=_requested_at(request))
    context = {"page": insights.page, "updates": insights.updates, "run": _run_seen(request, insights.run)}
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
    run = _run_seen(request, space_status.consolidation_run(owner=request.user, requested_at=_requested_at(request)))
    response = render(request, "memories/consolidations.html#run_status", {"run": run})
    if run.just_finished:
        trigger_client_event(response, "consolidated")
        trigger_client_event(response, CHANGED)
    return response


# --- sidebar and danger zone -----------------------------------------------------------------


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
        messages.success(request, f"Cleared {counts['memories']} memories and {counts['consolidations']} consolidations, "
                                  f"and removed {counts['inbox_files']} inbox file{'s' * (counts['inbox_files'] != 1)}. "
                                  "The same content can be added again.")
        return redirect("memories:ingest")
    context = {"form": form, **space_status.space_totals(owner=request.user)}
    return render(request, "memories/clear.html", context, status=400 if request.method == "POST" else 200)



# --- API tokens ------------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request):
    """Make a token (shown once), see and revoke your tokens."""
    context = {"new_token": None, "error": "", "name": ""}
    status = 200
    if request.method == "POST":
        context["name"] = request.POST.get("name", "")
        try:
            token, plaintext = create_token(owner=request.user, name=context["name"])
        except TokenError as exc:
            context["error"], status = str(exc), 400
        else:
            # Rendered straight into this response, not redirected: the plaintext must not be
            # stored anywhere (a session or message cookie) to survive a redirect.
            context["new_token"], context["new_token_obj"], context["name"] = plaintext, token, ""
    context["tokens"] = tokens_of(request.user)
    response = render(request, "memories/tokens.html", context, status=status)
    if context["new_token"]:
        response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def token_revoke(request, token_id: int):
    if revoke_token(owner=request.user, token_id=token_id):
        messages.success(request, "Token revoked; requests that use it now get 401.")
    else:
        messages.error(request, "No such active token of yours.")
    return redirect("memories:tokens")


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
