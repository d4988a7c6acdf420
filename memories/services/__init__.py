"""The flows of the design as plain functions. Views, tasks, commands, the API and admin
actions call these, never each other."""

from .browse import filter_memories
from .bulk import bulk_remember
from .consolidate import ConsolidationBusy, consolidate_all, consolidate_owner, queue_consolidation
from .errors import EditError, IngestError, QuestionError, RefusedError, RestoreError, RetryError
from .history import INBOX_WATCHER, SCHEDULER, SYSTEM, Actor, consolidation_history, memory_history
from .extraction import (
    extract_memory,
    needs_model_memories,
    queue_extraction,
    reextract_memory,
    resume_stuck,
    retry_failed,
    retry_memory,
    should_yield,
)
from .ingest import IngestResult, RejectedContentError, ingest_file, ingest_text
from .lifecycle import (
    approve_memory,
    clear_owner,
    clearable_inbox_files,
    delete_memories,
    delete_memory,
    deleted_memories,
    purge_memory,
    reject_memory,
    restore_all,
    restore_memory,
    supersede_memory,
    update_memory,
)
from .forgetting import apply_retention, fade_importance, maintain, mark_used
from .owners import access_memory, default_owner, may_fetch_original, resolve_owner
from .query import QueryResult, answer_question
from .updates import detect_updates, mark_superseded, recent_updates, undo_update

__all__ = [
    "INBOX_WATCHER",
    "SCHEDULER",
    "SYSTEM",
    "Actor",
    "ConsolidationBusy",
    "EditError",
    "IngestError",
    "IngestResult",
    "RefusedError",
    "RestoreError",
    "RetryError",
    "QuestionError",
    "QueryResult",
    "RejectedContentError",
    "answer_question",
    "access_memory",
    "approve_memory",
    "bulk_remember",
    "clear_owner",
    "clearable_inbox_files",
    "consolidate_all",
    "consolidate_owner",
    "consolidation_history",
    "default_owner",
    "may_fetch_original",
    "delete_memories",
    "delete_memory",
    "deleted_memories",
    "extract_memory",
    "filter_memories",
    "ingest_file",
    "ingest_text",
    "needs_model_memories",
    "reextract_memory",
    "memory_history",
    "purge_memory",
    "queue_consolidation",
    "queue_extraction",
    "reject_memory",
    "resolve_owner",
    "restore_all",
    "restore_memory",
    "resume_stuck",
    "retry_failed",
    "retry_memory",
    "should_yield",
    "supersede_memory",
    "update_memory",
    "apply_retention",
    "fade_importance",
    "maintain",
    "mark_used",
    "detect_updates",
    "mark_superseded",
    "recent_updates",
    "undo_update",
]
