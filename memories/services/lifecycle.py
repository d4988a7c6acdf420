"""Delete and clear."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import transaction

from ..models import Consolidation, Memory, ProcessedFile


def delete_memory(*, owner, memory_id: int) -> bool:
    """Delete one of the owner's memories; False when there is no such memory of theirs."""
    memory = Memory.objects.filter(owner=owner, pk=memory_id).first()
    if memory is None:
        return False
    original = memory.original.name if memory.original else ""
    memory.delete()
    if original:
        transaction.on_commit(lambda: memory.original.storage.delete(original))
    return True


def clear_owner(*, owner, inbox_files: bool = False) -> dict[str, int]:
    """Remove everything the owner holds; the inbox files too only when asked."""
    memories = Memory.objects.filter(owner=owner)
    originals = [name for name in memories.exclude(original="").values_list("original", flat=True)]
    paths = list(ProcessedFile.objects.filter(owner=owner).values_list("path", flat=True)) if inbox_files else []
    with transaction.atomic():
        counts = {
            "consolidations": Consolidation.objects.filter(owner=owner).delete()[1].get("memories.Consolidation", 0),
            "processed_files": ProcessedFile.objects.filter(owner=owner).delete()[0],
            "memories": memories.delete()[1].get("memories.Memory", 0),
        }
    storage = Memory._meta.get_field("original").storage
    for name in originals:
        storage.delete(name)
    inbox = Path(settings.MEMORY_INBOX_DIR).resolve()
    removed = 0
    for path in paths:
        file = Path(path).resolve()
        if file.is_relative_to(inbox) and file.is_file():
            file.unlink()
            removed += 1
    counts["inbox_files"] = removed
    return counts
