"""A space's other rows in the admin: processed inbox files, API tokens, retention settings."""

from django.contrib import admin

from ..models import ApiToken, ProcessedFile, SpaceSettings
from .common import admin_link


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
    list_display = ["name", "owner", "prefix", "scope", "created_at", "last_used_at", "expires_at", "revoked_at"]
    list_filter = ["scope", "owner"]
    search_fields = ["name", "prefix", "owner__username"]
    readonly_fields = ["owner", "prefix", "token_hash", "created_at", "last_used_at"]

    # Tokens are made where the secret can be shown once; the admin only revokes them.
    def has_add_permission(self, request):
        return False


@admin.register(SpaceSettings)
class SpaceSettingsAdmin(admin.ModelAdmin):
    """Per-space retention: what the daily maintenance task forgets (through delete, recorded)."""

    list_display = ["owner", "retention_days", "retention_sources", "keep_importance", "updated_at"]
    raw_id_fields = ["owner"]
