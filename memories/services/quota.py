"""How much disk one user's original files may take (MEMORY_MAX_STORAGE_MB): uploads, inbox
files and imports are refused past it, so one account (or a leaked token) cannot fill a
disk the whole installation shares. Text is not counted: it is capped per memory
(ingest.MAX_TEXT_CHARS) and its ingest is rate-limited; files are what fill a disk."""

from __future__ import annotations

from django.conf import settings
from django.db.models import BigIntegerField, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from ..models import Memory
from .errors import IngestError


def used_bytes(owner) -> int:
    """The sizes of the owner's stored originals, deleted memories' too (their files stay until purged)."""
    files = Memory.all_objects.owned_by(owner).exclude(original="")
    return files.aggregate(total=Sum(Cast(KT("metadata__size"), BigIntegerField())))["total"] or 0


def room(owner) -> int | None:
    """Bytes the owner may still store; None when there is no quota."""
    if not settings.MEMORY_MAX_STORAGE_MB:
        return None
    return max(0, settings.MEMORY_MAX_STORAGE_MB * 1024 * 1024 - used_bytes(owner))


def refusal(*, what: str) -> IngestError:
    return IngestError(
        f"{what} would pass your storage quota of {settings.MEMORY_MAX_STORAGE_MB:,} MB of files "
        "(MEMORY_MAX_STORAGE_MB): delete and purge files you no longer need, or ask the administrator for more."
    )
