"""Insights (consolidations) in the admin, with the links between memories and the
consolidation runs."""

from django import forms
from django.contrib import admin
from django.contrib.admin.widgets import ManyToManyRawIdWidget
from django.db.models import Count, Q
from django.utils.html import format_html_join

from ..models import Consolidation, ConsolidationRun, Memory, MemoryLink
from .common import admin_link, choice_filter, short

InsightStateFilter = choice_filter(
    "state",
    {
        "current": ("Current", Q(stale_at__isnull=True, retired_at__isnull=True)),
        "stale": ("Stale (a source left)", Q(stale_at__isnull=False, retired_at__isnull=True)),
        "retired": ("Retired", Q(retired_at__isnull=False)),
    },
)


class OwnersMemoriesWidget(ManyToManyRawIdWidget):
    """The raw-id box for an insight's sources whose lookup lists only one owner's memories."""

    owner_id: int | None = None

    def url_parameters(self):
        params = super().url_parameters()
        if self.owner_id is not None:
            params["owner__id__exact"] = str(self.owner_id)  # the memory list's owner filter
        return params


class ConsolidationAdminForm(forms.ModelForm):
    """An insight is written over memories of one space, its owner's. Model.clean runs before
    the sources (a many-to-many) are set, so the check is here, as MemoryLink.clean is for links:
    one staff edit would otherwise show another owner's text in this owner's chips, API and
    re-derived insight."""

    class Meta:
        model = Consolidation
        fields = "__all__"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        sources = self.fields.get("sources")
        if sources is not None and self.instance.owner_id is not None:
            # Deleted ones too: a stale insight keeps the source that left, and saving must not drop it.
            sources.queryset = Memory.all_objects.owned_by(self.instance.owner_id)
            if isinstance(sources.widget, OwnersMemoriesWidget):
                sources.widget.owner_id = self.instance.owner_id

    def clean(self):
        cleaned = super().clean()
        owner, sources = cleaned.get("owner"), cleaned.get("sources")
        if owner is not None and sources is not None:
            others = sorted(m.pk for m in sources if m.owner_id != owner.pk)
            if others:
                raise forms.ValidationError(
                    "An insight's sources are memories of its owner; these belong to a different owner: "
                    + ", ".join(f"memory {pk}" for pk in others)
                    + "."
                )
        return cleaned


@admin.register(Consolidation)
class ConsolidationAdmin(admin.ModelAdmin):
    form = ConsolidationAdminForm
    list_display = ["id", "insight_short", "owner", "source_count", "state", "provider", "created_at"]
    list_filter = [InsightStateFilter, "provider", "owner"]
    search_fields = ["insight", "summary", "owner__username"]
    list_select_related = ["owner"]
    raw_id_fields = ["owner", "sources"]
    readonly_fields = ["created_at", "provider", "source_links"]
    show_full_result_count = False

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "sources":
            kwargs["widget"] = OwnersMemoriesWidget(db_field.remote_field, self.admin_site, using=kwargs.get("using"))
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def get_queryset(self, request):
        # Retired insights too: they are kept for history, and staff may need to see why.
        qs = Consolidation.all_objects.select_related("owner").annotate(n_sources=Count("sources"))
        ordering = self.get_ordering(request)
        return qs.order_by(*ordering) if ordering else qs

    @admin.display(description="state")
    def state(self, obj):
        return obj.state.label

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
