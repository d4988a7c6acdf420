"""Memories in the admin: every state, the lifecycle actions (retry, delete, restore, purge,
consolidate) through the services, and the edits update_memory checks and records."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import ActionLocation
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.safestring import mark_safe

from .. import services
from ..models import LIVE, Memory
from ..services.browse import FACT_STATES
from ..services.history import EDITABLE_FIELDS, Actor
from .common import admin_link, choice_filter, event_changes, null_filter, short

# How many events the memory page shows inline; the rest are one click away.
HISTORY_ON_PAGE = 20

ConsolidatedFilter = null_filter("consolidated_at", "consolidated", "Yes", "Not yet")
DuplicateFilter = null_filter("duplicate_of", "near-duplicate", "Near-duplicate of another", "Not a duplicate")

# The admin sees every memory, not only the live ones.
StateFilter = choice_filter(
    "state",
    {
        "live": ("Live", LIVE),
        "deleted": ("Deleted", Q(deleted_at__isnull=False)),
        "superseded": ("Superseded (replaced version)", Q(superseded_by__isnull=False)),
    },
)
FactFilter = choice_filter(
    "fact",
    {
        # The same conditions as the bank's "fact" filter.
        "current": ("Current", FACT_STATES["current"]),
        "outdated": ("Superseded by a newer fact", FACT_STATES["superseded"]),
        "expired": ("Expired", FACT_STATES["expired"]),
        "faded": ("Importance faded", Q(base_importance__isnull=False)),
    },
)
FactFilter.parameter_name = "fact"


class MemoryAdminForm(forms.ModelForm):
    """Only the correctable fields are editable; the checks mirror `update_memory`, which
    saves them (and records the edit), so a bad value is a form error, not a crash."""

    importance = forms.FloatField(min_value=0, max_value=1)

    class Meta:
        model = Memory
        fields = "__all__"

    def clean_summary(self):
        summary = self.cleaned_data.get("summary", "")
        if not summary.strip():
            raise forms.ValidationError("The summary cannot be empty.")
        return summary

    def _clean_list(self, name):
        value = self.cleaned_data.get(name)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise forms.ValidationError(f'{name} must be a JSON list of strings, e.g. ["Alice", "Lisbon"].')
        return value

    def clean_entities(self):
        return self._clean_list("entities")

    def clean_topics(self):
        return self._clean_list("topics")


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    form = MemoryAdminForm
    list_display = ["id", "summary_short", "owner", "source", "status", "state", "importance", "occurred_at", "created_at"]
    list_display_links = ["id", "summary_short"]
    list_filter = ["status", StateFilter, FactFilter, DuplicateFilter, ConsolidatedFilter, "provider", "owner"]
    search_fields = ["summary", "raw_text", "source", "owner__username"]
    list_select_related = ["owner"]
    date_hierarchy = "created_at"
    # A full COUNT over 100,000 filtered rows on every change-list page is wasted time.
    show_full_result_count = False
    raw_id_fields = ["owner"]
    # Everything but the correctable fields is a record of what came in and what happened to
    # it: changing raw text or status by hand would bypass the flows that keep them honest.
    readonly_fields = [
        "owner",
        "status",
        "source",
        "raw_text",
        "mime_type",
        "metadata",
        "content_hash",
        "created_at",
        "updated_at",
        "attempts",
        "provider",
        "consolidated_at",
        "error",
        "original_link",
        "connections",
        "in_consolidations",
        "lifecycle",
        "history",
        "outdated_by",
        "valid_until",
        "last_recalled_at",
        "base_importance",
    ]
    fieldsets = [
        (None, {"fields": ["owner", "status", "lifecycle", "error", "source", "occurred_at", "importance"]}),
        ("Extracted", {"fields": ["summary", "entities", "topics"]}),
        (
            "Facts change and forgetting",
            {"fields": ["outdated_by", "valid_until", "expires_at", "last_recalled_at", "base_importance"]},
        ),
        ("Input", {"fields": ["raw_text", "original_link", "mime_type", "metadata"]}),
        ("Graph", {"fields": ["connections", "in_consolidations"]}),
        ("History", {"fields": ["history"]}),
        ("Audit", {"fields": ["provider", "attempts", "content_hash", "consolidated_at", "created_at", "updated_at"]}),
    ]
    actions = [
        "retry_extraction",
        "reextract",
        "delete_with_service",
        "restore_memories",
        "purge_memories",
        "consolidate_owners",
        "not_an_update",
    ]

    def get_queryset(self, request):
        # Staff see every memory, deleted and superseded ones included, so they can be
        # inspected, restored or purged; the app's own pages only ever see live ones.
        qs = Memory.all_objects.select_related("owner")
        ordering = self.get_ordering(request)
        return qs.order_by(*ordering) if ordering else qs

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and not obj.is_live:
            # A tombstone is not corrected in place: restore it first.
            fields += [f for f in EDITABLE_FIELDS if f not in fields]
        return fields

    def has_add_permission(self, request):
        # Memories come in through ingest (which fingerprints, dedups and refuses deleted content).
        return False

    def save_model(self, request, obj, form, change):
        changes = {name: form.cleaned_data[name] for name in form.changed_data if name in EDITABLE_FIELDS}
        # The admin's date and time inputs drop microseconds; that is not a correction.
        when = changes.get("occurred_at")
        if when is not None and when.replace(microsecond=0) == form.initial["occurred_at"].replace(microsecond=0):
            del changes["occurred_at"]
        if not changes:
            return
        try:
            services.update_memory(owner=obj.owner, memory_id=obj.pk, changes=changes, actor=Actor.for_user(request.user))
        except services.EditError as exc:
            self.message_user(request, f"Not saved: {exc}", messages.ERROR)
        except Memory.DoesNotExist:
            self.message_user(request, f"Not saved: memory {obj.pk} is deleted or superseded; restore it first.", messages.ERROR)

    @admin.display(description="state")
    def state(self, obj):
        return obj.state.label

    @admin.display(description="state")
    def lifecycle(self, obj):
        parts = []
        if obj.deleted_at:
            parts.append(
                format_html("Deleted {} (restorable with the “Restore” action)", obj.deleted_at.strftime("%Y-%m-%d %H:%M"))
            )
        if obj.superseded_by_id:
            parts.append(format_html("Superseded by {}", admin_link(obj.superseded_by, f"Memory {obj.superseded_by_id}")))
        if obj.duplicate_of_id:
            parts.append(format_html("Near-duplicate of {}", admin_link(obj.duplicate_of, f"Memory {obj.duplicate_of_id}")))
        if obj.outdated_by_id:
            parts.append(
                format_html(
                    "Superseded by the newer fact in {} (true until {}; the “Not an update” action undoes it)",
                    admin_link(obj.outdated_by, f"Memory {obj.outdated_by_id}"),
                    obj.valid_until.strftime("%Y-%m-%d"),
                )
            )
        if obj.is_expired:
            parts.append(format_html("Expired {} (out of recall)", obj.expires_at.strftime("%Y-%m-%d %H:%M")))
        return format_html_join(mark_safe("<br>"), "{}", ((p,) for p in parts)) if parts else "live"

    @admin.display(description="history")
    def history(self, obj):
        events = list(services.memory_history(owner=obj.owner, memory_id=obj.pk)[: HISTORY_ON_PAGE + 1])
        more = len(events) > HISTORY_ON_PAGE
        all_url = (
            reverse("admin:memories_event_changelist") + "?" + urlencode({"subject_type__exact": "memory", "subject_id": obj.pk})
        )
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    e.created_at.strftime("%Y-%m-%d %H:%M:%S"),
                    admin_link(e, e.get_action_display()),
                    e.actor,
                    short(event_changes(e), 200),
                )
                for e in events[:HISTORY_ON_PAGE]
            ),
        )
        table = (
            format_html(
                "<table><thead><tr><th>when</th><th>action</th><th>by</th><th>changes</th></tr></thead><tbody>{}</tbody></table>",
                rows,
            )
            if events
            else "—"
        )
        return format_html(
            '{}<p><a href="{}">{}</a></p>', table, all_url, "All events of this memory" + (" (more than shown)" if more else "")
        )

    @admin.display(description="summary")
    def summary_short(self, obj):
        return short(obj.summary or obj.raw_text or obj.file_name)

    @admin.display(description="original file")
    def original_link(self, obj):
        if not obj.original:
            return "—"
        return format_html('<a href="{}">{}</a>', reverse("memories:file", args=[obj.pk]) + "?download=1", obj.file_name)

    @admin.display(description="connections")
    def connections(self, obj):
        rows = [
            (reverse("admin:memories_memorylink_change", args=[link.pk]), f"→ {link.to_memory_id}: {link.relationship}")
            for link in obj.links_out.all()
        ]
        rows += [
            (reverse("admin:memories_memorylink_change", args=[link.pk]), f"← {link.from_memory_id}: {link.relationship}")
            for link in obj.links_in.all()
        ]
        return format_html_join("", '<div><a href="{}">{}</a></div>', rows) or "—"

    @admin.display(description="in consolidations")
    def in_consolidations(self, obj):
        return format_html_join(", ", "{}", ((admin_link(c, f"Consolidation {c.pk}"),) for c in obj.consolidations.all())) or "—"

    def get_actions(self, request, action_location=ActionLocation.CHANGE_LIST):
        actions = super().get_actions(request, action_location=action_location)
        # Deleting goes through the service (which records the decision), not a bare SQL delete.
        actions.pop("delete_selected", None)
        return actions

    def delete_model(self, request, obj):
        services.delete_memory(owner=obj.owner, memory_id=obj.pk, actor=Actor.for_user(request.user))

    def delete_queryset(self, request, queryset):
        deleted = 0
        for memory in queryset.select_related("owner"):
            deleted += (
                services.delete_memory(owner=memory.owner, memory_id=memory.pk, actor=Actor.for_user(request.user)) is not None
            )
        return deleted

    # Each action that changes memories names the permission it needs: an action that names
    # none is offered to anyone who may open the list, view-only staff included.
    @admin.action(description="Retry extraction of failed memories", permissions=["change"])
    def retry_extraction(self, request, queryset):
        retried = 0
        for memory in queryset.filter(status=Memory.Status.FAILED).select_related("owner"):
            services.retry_memory(owner=memory.owner, memory_id=memory.pk, actor=Actor.for_user(request.user))
            retried += 1
        skipped = queryset.count() - retried
        self.message_user(
            request,
            f"Queued {retried} failed memories for extraction"
            + (f"; {skipped} were not failed and were left alone." if skipped else "."),
        )

    @admin.action(description="Re-extract with the current provider (runs now; select a few)", permissions=["change"])
    def reextract(self, request, queryset):
        done = failed = 0
        for memory in queryset.select_related("owner"):
            result = services.reextract_memory(owner=memory.owner, memory_id=memory.pk, actor=Actor.for_user(request.user))
            if result is not None and result.is_extracted and not result.error:
                done += 1
            else:
                failed += 1
        self.message_user(request, f"Re-extracted {done} memories" + (f"; {failed} failed (see their error)." if failed else "."))

    @admin.action(description="Delete selected memories", permissions=["delete"])
    def delete_with_service(self, request, queryset):
        count = self.delete_queryset(request, queryset)
        self.message_user(request, f"Deleted {count} memories.")

    @admin.action(
        description="Not an update: make the selected superseded memories current again",
        permissions=["change"],
        location=[ActionLocation.CHANGE_LIST, ActionLocation.CHANGE_FORM],
    )
    def not_an_update(self, request, queryset):
        undone = 0
        for memory in queryset.filter(outdated_by__isnull=False).select_related("owner"):
            undone += (
                services.undo_update(owner=memory.owner, memory_id=memory.pk, actor=Actor.for_user(request.user)) is not None
            )
        self.message_user(request, f"{undone} memories are current again.", messages.SUCCESS if undone else messages.WARNING)

    @admin.action(
        description="Restore selected deleted memories",
        permissions=["change"],
        location=[ActionLocation.CHANGE_LIST, ActionLocation.CHANGE_FORM],
    )
    def restore_memories(self, request, queryset):
        restored, refused = 0, []
        for memory in queryset.filter(deleted_at__isnull=False).select_related("owner"):
            try:
                services.restore_memory(owner=memory.owner, memory_id=memory.pk, actor=Actor.for_user(request.user))
            except services.RestoreError as exc:
                refused.append(f"memory {memory.pk}: {exc}")
            else:
                restored += 1
        self.message_user(request, f"Restored {restored} memories.", messages.SUCCESS if restored else messages.WARNING)
        if refused:
            self.message_user(request, "Not restored: " + "; ".join(refused), messages.ERROR)

    @admin.action(
        description="Purge selected memories for good (erases content)…",
        permissions=["delete"],
        location=[ActionLocation.CHANGE_LIST, ActionLocation.CHANGE_FORM],
    )
    def purge_memories(self, request, queryset):
        """A privacy request: asks on a confirmation page first, like Django's own delete."""
        if request.POST.get("post") != "yes":
            context = {
                **self.admin_site.each_context(request),
                "title": "Purge memories for good?",
                "opts": self.model._meta,
                "memories": queryset.select_related("owner"),
                # The same action, selection and form location (change list or change form) again, plus "yes".
                "repost": [
                    (k, v) for k in request.POST if k not in ("csrfmiddlewaretoken", "post") for v in request.POST.getlist(k)
                ],
                "media": self.media,
            }
            return TemplateResponse(request, "admin/memories/memory/purge_confirmation.html", context)
        purged = 0
        for memory in queryset.select_related("owner"):
            purged += services.purge_memory(owner=memory.owner, memory_id=memory.pk, actor=Actor.for_user(request.user))
        self.message_user(
            request, f"Purged {purged} memories: their content is erased; the content hashes and events remain.", messages.SUCCESS
        )
        # From a memory's own page there is no page left to go back to.
        return HttpResponseRedirect(reverse("admin:memories_memory_changelist"))

    @admin.action(description="Consolidate now for the owners of these memories", permissions=["change"])
    def consolidate_owners(self, request, queryset):
        owners = get_user_model().objects.filter(pk__in=queryset.values("owner_id"))
        queued = sum(services.queue_consolidation(owner=owner) for owner in owners)
        busy = len(owners) - queued
        self.message_user(
            request,
            f"Queued consolidation for {queued} owner(s)." + (f" {busy} already had one running." if busy else ""),
            messages.SUCCESS,
        )
