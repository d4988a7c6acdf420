"""The flows of the design as plain functions. Views, tasks, commands, the API and admin
actions call these, never each other."""

from .browse import search_memories
from .consolidate import ConsolidationBusy, consolidate_all, consolidate_owner
from .ingest import IngestError, IngestResult, extract_memory, ingest_file, ingest_text, queue_extraction, retry_memory
from .lifecycle import clear_owner, delete_memory
from .owners import default_owner, resolve_owner
from .query import QueryResult, answer_question

__all__ = [
    "ConsolidationBusy", "IngestError", "IngestResult", "QueryResult", "answer_question", "clear_owner",
    "consolidate_all", "consolidate_owner", "default_owner", "delete_memory", "extract_memory", "ingest_file",
    "ingest_text", "queue_extraction", "resolve_owner", "retry_memory", "search_memories",
]
