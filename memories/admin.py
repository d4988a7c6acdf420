"""The admin: a row-level console for staff. Actions call the same services as the app."""

from django.contrib import admin, messages
from django.db.models import Count
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator

from . import services
from .services.history import Actor
from .models import ApiToken, Consolidation, ConsolidationRun, Memory, MemoryLink, ProcessedFile


def admin_link(obj, label=None):
    if obj is None:
        return "—"
    url = reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, label or str(obj))


def short(text, n=80):
    return Truncator(text or "").chars(n)


class ConsolidatedFilter(admin.SimpleListFilter):
    title = "consolidated"
    parameter_name = "consolidated"

    def lookups(self, request, model_admin):
        return [("yes", "Yes"), ("no", "Not yet")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(consolidated_at__isnull=False)
        if self.value() == "no":
            return queryset.filter(consolidated_at__isnull=True)
        return queryset


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = ["id", "summary_short", "owner", "source", "status", "importance", "occurred_at", "created_at"]
    list_display_links = ["id", "summary_short"]
    list_filter = ["status", ConsolidatedFilter, "provider", "owner"]
    search_fields = ["summary", "raw_text", "source", "owner__username"]
    list_select_related = ["owner"]
    date_hierarchy = "created_at"
    # A full COUNT over 100,000 filtered rows on every change-list page is wasted time.
    show_full_result_count = False
    raw_id_fields = ["owner"]
    readonly_fields = [
        "content_hash", "created_at", "updated_at", "attempts", "provider", "consolidated_at", "error",
        "original_link", "connections", "in_consolidations",
    ]
    fieldsets = [
        (None, {"fields": ["owner", "status", "error", "source", "occurred_at", "importance"]}),
        ("Extracted", {"fields": ["summary", "entities", "topics"]}),
        ("Input", {"fields": ["raw_text", "original_link", "mime_type", "metadata"]}),
        ("Graph", {"fields": ["connections", "in_consolidations"]}),
        ("Audit", {"fields": ["provider", "attempts", "content_hash", "consolidated_at", "created_at", "updated_at"]}),
    ]
    actions = ["retry_extraction", "reextract", "delete_with_service", "consolidate_owners"]

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
        rows = [(reverse("admin:memories_memorylink_change", args=[link.pk]), f"→ {link.to_memory_id}: {link.relationship}")
                for link in obj.links_out.all()]
        rows += [(reverse("admin:memories_memorylink_change", args=[link.pk]), f"← {link.from_memory_id}: {link.relationship}")
                 for link in obj.links_in.all()]
        return format_html_join("", '<div><a href="{}">{}</a></div>', rows) or "—"

    @admin.display(description="in consolidations")
    def in_consolidations(self, obj):
        return format_html_join(", ", "{}", ((admin_link(c, f"Consolidation {c.pk}"),) for c in obj.consolidations.all())) or "—"

    def get_actions(self, request):
        actions = super().get_actions(request)
        # Deleting goes through the service (which records the decision), not a bare SQL delete.
        actions.pop("delete_selected", None)
        return actions

    def delete_model(self, request, obj):
        services.delete_memory(owner=obj.owner, memory_id=obj.pk, actor=Actor.for_user(request.user))

    def delete_queryset(self, request, queryset):
        for memory in queryset.select_related("owner"):
            services.delete_memory(owner=memory.owner, memory_id=memory.pk, actor=Actor.for_user(request.user))

    @admin.action(description="Retry extraction of failed memories")
    def retry_extraction(self, request, queryset):
        retried = 0
        for memory in queryset.filter(status=Memory.Status.FAILED).select_related("owner"):
            services.queue_extraction(services.retry_memory(owner=memory.owner, memory_id=memory.pk))
            retried += 1
        skipped = queryset.count() - retried
        self.message_user(request, f"Queued {retried} failed memories for extraction" + (f"; {skipped} were not failed and were left alone." if skipped else "."))

    @admin.action(description="Re-extract with the current provider (runs now; select a few)")
    def reextract(self, request, queryset):
        done = failed = 0
        for memory in queryset.select_related("owner"):
            result = services.reextract_memory(owner=memory.owner, memory_id=memory.pk, actor=Actor.for_user(request.user))
            if result is not None and result.status == Memory.Status.READY:
                done += 1
            else:
                failed += 1
        self.message_user(request, f"Re-extracted {done} memories" + (f"; {failed} failed (see their error)." if failed else "."))

    @admin.action(description="Delete selected memories", permissions=["delete"])
    def delete_with_service(self, request, queryset):
        count = queryset.count()
        self.delete_queryset(request, queryset)
        self.message_user(request, f"Deleted {count} memories.")

    @admin.action(description="Consolidate now for the owners of these memories")
    def consolidate_owners(self, request, queryset):
        from django_q.tasks import async_task

        owners = sorted(set(queryset.values_list("owner_id", flat=True)))
        for owner_id in owners:
            async_task("memories.tasks.consolidate_owner", owner_id, task_name=f"consolidate-{owner_id}")
        self.message_user(request, f"Queued consolidation for {len(owners)} owner(s).", messages.SUCCESS)


@admin.register(Consolidation)
class ConsolidationAdmin(admin.ModelAdmin):
    list_display = ["id", "insight_short", "owner", "source_count", "provider", "created_at"]
    list_filter = ["provider", "owner"]
    search_fields = ["insight", "summary", "owner__username"]
    list_select_related = ["owner"]
    raw_id_fields = ["owner", "sources"]
    readonly_fields = ["created_at", "provider", "source_links"]
    show_full_result_count = False

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_sources=Count("sources"))

    @admin.display(description="insight")
    def insight_short(self, obj):
        return short(obj.insight, 100)

    @admin.display(description="sources", ordering="n_sources")
    def source_count(self, obj):
        return obj.n_sources

    @admin.display(description="source memories")
    def source_links(self, obj):
        return format_html_join(", ", "{}", ((admin_link(m, f"Memory {m.pk}"),) for m in obj.sources.all())) or "—"


@admin.register(MemoryLink)
class MemoryLinkAdmin(admin.ModelAdmin):
    list_display = ["id", "from_link", "to_link", "relationship", "consolidation_link", "created_at"]
    search_fields = ["relationship"]
    list_select_related = ["from_memory", "to_memory", "consolidation"]
    raw_id_fields = ["from_memory", "to_memory", "consolidation"]
    readonly_fields = ["created_at"]
    show_full_result_count = False

    @admin.display(description="from")
    def from_link(self, obj):
        return admin_link(obj.from_memory, f"Memory {obj.from_memory_id}")

    @admin.display(description="to")
    def to_link(self, obj):
        return admin_link(obj.to_memory, f"Memory {obj.to_memory_id}")

    @admin.display(description="consolidation")
    def consolidation_link(self, obj):
        return admin_link(obj.consolidation, f"Consolidation {obj.consolidation_id}") if obj.consolidation_id else "—"


@admin.register(ConsolidationRun)
class ConsolidationRunAdmin(admin.ModelAdmin):
    list_display = ["id", "owner", "started_at", "finished_at", "consolidations_made", "memories_consolidated", "error_short"]
    list_filter = ["owner"]
    list_select_related = ["owner"]

    @admin.display(description="error")
    def error_short(self, obj):
        return short(obj.error, 60)

    # A run is a record of what happened; nobody edits history.
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ProcessedFile)
class ProcessedFileAdmin(admin.ModelAdmin):
    list_display = ["id", "path", "owner", "status", "size", "processed_at", "memory_link"]
    list_filter = ["status", "owner"]
    search_fields = ["path", "sha256", "error"]
    list_select_related = ["owner", "memory"]
    readonly_fields = ["owner", "path", "size", "mtime", "sha256", "status", "error", "memory", "processed_at"]

    @admin.display(description="memory")
    def memory_link(self, obj):
        return admin_link(obj.memory, f"Memory {obj.memory_id}") if obj.memory_id else "—"

    def has_add_permission(self, request):
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["owner"]
    search_fields = ["name", "prefix", "owner__username"]
    readonly_fields = ["owner", "prefix", "token_hash", "created_at", "last_used_at"]

    # Tokens are made where the secret can be shown once; the admin only revokes them.
    def has_add_permission(self, request):
        return False
