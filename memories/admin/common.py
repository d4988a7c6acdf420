"""What the admin's pages share: links to a row, short text, list filter factories, and the
read-only base for records."""

from django.contrib import admin
from django.db.models import Q
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator


def admin_link(obj, label=None):
    if obj is None:
        return "—"
    url = reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, label or str(obj))


def short(text, n=80):
    return Truncator(text or "").chars(n)


def null_filter(field: str, title: str, yes: str, no: str) -> type[admin.SimpleListFilter]:
    """A yes/no list filter on whether a nullable field is set."""

    class Filter(admin.SimpleListFilter):
        parameter_name = field.removesuffix("_at").removesuffix("_of")

        def lookups(self, request, model_admin):
            return [("yes", yes), ("no", no)]

        def queryset(self, request, queryset):
            if self.value() in ("yes", "no"):
                return queryset.filter(**{f"{field}__isnull": self.value() == "no"})
            return queryset

    Filter.title = title
    return Filter


ConsolidatedFilter = null_filter("consolidated_at", "consolidated", "Yes", "Not yet")
DuplicateFilter = null_filter("duplicate_of", "near-duplicate", "Near-duplicate of another", "Not a duplicate")


def choice_filter(title: str, choices: dict[str, tuple[str, Q]]) -> type[admin.SimpleListFilter]:
    """A list filter whose options each stand for a condition: {value: (label, Q)}."""

    class Filter(admin.SimpleListFilter):
        parameter_name = "state"

        def lookups(self, request, model_admin):
            return [(value, label) for value, (label, _) in choices.items()]

        def queryset(self, request, queryset):
            if self.value() in choices:
                return queryset.filter(choices[self.value()][1])
            return queryset

    Filter.title = title
    return Filter


class RecordAdmin(admin.ModelAdmin):
    """Rows that are the record itself (history, tombstones): shown, never edited here."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def event_changes(event) -> str:
    fields = list(dict.fromkeys([*(event.before or {}), *(event.after or {})]))
    parts = [f"{name}: {event.before.get(name, '—')} → {event.after.get(name, '—')}" for name in fields]
    return "; ".join(parts + ([event.note] if event.note else []))
