"""The records in the admin, read-only: the audit trail (events) and tombstones."""

from django.contrib import admin
from django.db.models import Exists, OuterRef
from django.urls import reverse
from django.utils.html import format_html

from ..models import Consolidation, Event, Memory, RejectedContent
from .common import RecordAdmin, event_changes, short


class ActorKindFilter(admin.SimpleListFilter):
    """Actors are labels ("user:alice", "api token 'x' (…)", "inbox watcher"); filter by kind."""

    title = "actor"
    parameter_name = "actor_kind"
    KINDS = {
        "user": ("A person (web or admin)", {"actor__startswith": "user:"}),
        "token": ("An API token", {"actor__startswith": "api token"}),
        "watcher": ("The inbox watcher", {"actor": "inbox watcher"}),
        "scheduler": ("The scheduler", {"actor": "scheduler"}),
        "command": ("A management command", {"actor__startswith": "command:"}),
        "system": ("The system", {"actor": "system"}),
    }

    def lookups(self, request, model_admin):
        return [(key, label) for key, (label, _) in self.KINDS.items()]

    def queryset(self, request, queryset):
        if self.value() in self.KINDS:
            return queryset.filter(**self.KINDS[self.value()][1])
        return queryset


@admin.register(Event)
class EventAdmin(RecordAdmin):
    """The audit trail, read-only: nobody edits history, not even staff."""

    list_display = ["created_at", "subject", "action", "actor", "owner", "changes_short"]
    list_filter = ["action", ActorKindFilter, "subject_type", "owner"]
    search_fields = ["actor", "note", "=subject_id", "owner__username"]
    list_select_related = ["owner"]
    date_hierarchy = "created_at"
    show_full_result_count = False
    fields = ["created_at", "owner", "subject", "action", "actor", "actor_user", "before", "after", "note"]
    readonly_fields = fields

    def get_queryset(self, request):
        # Whether the subject still exists, in the page's one query rather than one per row.
        return (
            super()
            .get_queryset(request)
            .annotate(
                memory_exists=Exists(Memory.all_objects.filter(pk=OuterRef("subject_id"))),
                consolidation_exists=Exists(Consolidation.all_objects.filter(pk=OuterRef("subject_id"))),
            )
        )

    @admin.display(description="subject")
    def subject(self, obj):
        label = f"{obj.get_subject_type_display()} {obj.subject_id}"
        is_memory = obj.subject_type == Event.Subject.MEMORY
        model = Memory if is_memory else Consolidation
        if not (obj.memory_exists if is_memory else obj.consolidation_exists):
            return f"{label} (purged)"
        return format_html(
            '<a href="{}">{}</a>', reverse(f"admin:memories_{model._meta.model_name}_change", args=[obj.subject_id]), label
        )

    @admin.display(description="changes")
    def changes_short(self, obj):
        return short(event_changes(obj), 120)


@admin.register(RejectedContent)
class RejectedContentAdmin(RecordAdmin):
    """Tombstones, read-only: lifting one is a restore, done on the memory (it is recorded)."""

    list_display = ["content_hash_short", "owner", "memory", "reason", "rejected_at"]
    list_filter = ["reason", "owner"]
    search_fields = ["content_hash", "=memory_ref", "owner__username"]
    list_select_related = ["owner"]
    date_hierarchy = "rejected_at"
    fields = ["owner", "content_hash", "memory", "reason", "rejected_at"]
    readonly_fields = fields

    @admin.display(description="content hash")
    def content_hash_short(self, obj):
        return f"{obj.content_hash[:16]}…"

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(memory_exists=Exists(Memory.all_objects.filter(pk=OuterRef("memory_ref"))))

    @admin.display(description="memory")
    def memory(self, obj):
        if obj.memory_ref is None:
            return "—"
        if not obj.memory_exists:
            return f"Memory {obj.memory_ref} (purged)"
        return format_html(
            '<a href="{}">Memory {}</a>', reverse("admin:memories_memory_change", args=[obj.memory_ref]), obj.memory_ref
        )
