"""Pages and the HTMX fragments they swap, one module per page or resource. Thin: validate,
call a service, render."""

from .system import healthz, readyz, not_found
from .welcome import welcome_link, set_password
from .ingest import ingest, ingest_text, ingest_files
from .history_import import ingest_history, ingest_history_status
from .cards import memory_card, memory_retry, memory_delete, memory_restore, memory_purge, deleted, restore_all
from .review import review, memory_approve, memory_reject
from .ask import query
from .bank import memory_list, memory_facets, memory_bulk_delete
from .detail import memory_detail, memory_edit, memory_not_update, memory_history, memory_file
from .consolidations import consolidations, consolidate_now, consolidation_status
from .status import status, clear
from .tokens import settings_page, tokens, token_revoke
from .pictures import graph, timeline, stats

__all__ = [
    "healthz",
    "readyz",
    "not_found",
    "welcome_link",
    "set_password",
    "ingest",
    "ingest_text",
    "ingest_files",
    "ingest_history",
    "ingest_history_status",
    "memory_card",
    "memory_retry",
    "memory_delete",
    "memory_restore",
    "memory_purge",
    "deleted",
    "restore_all",
    "review",
    "memory_approve",
    "memory_reject",
    "query",
    "memory_list",
    "memory_facets",
    "memory_bulk_delete",
    "memory_detail",
    "memory_edit",
    "memory_not_update",
    "memory_history",
    "memory_file",
    "consolidations",
    "consolidate_now",
    "consolidation_status",
    "status",
    "clear",
    "settings_page",
    "tokens",
    "token_revoke",
    "graph",
    "timeline",
    "stats",
]
