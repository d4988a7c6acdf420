from django.contrib import admin

from .models import ApiToken, Consolidation, ConsolidationRun, Memory, MemoryLink, ProcessedFile


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = ["id", "owner", "source", "status", "importance", "occurred_at", "created_at"]
    list_filter = ["status", "owner"]
    search_fields = ["summary", "raw_text", "source"]
    readonly_fields = ["content_hash", "created_at", "updated_at", "attempts", "provider"]


@admin.register(Consolidation)
class ConsolidationAdmin(admin.ModelAdmin):
    list_display = ["id", "owner", "insight", "created_at"]
    filter_horizontal = ["sources"]


admin.site.register(MemoryLink)
admin.site.register(ConsolidationRun)
admin.site.register(ProcessedFile)
admin.site.register(ApiToken)
