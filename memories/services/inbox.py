"""The inbox watcher's flow: every file dropped into MEMORY_INBOX_DIR becomes a memory once."""

from __future__ import annotations

import hashlib
import logging
import stat
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError
from django.utils import timezone

from ..models import ProcessedFile
from .history import INBOX_WATCHER
from .errors import IngestError
from .extraction import extract_memory, queue_extraction
from .ingest import ingest_file
from .inboxfs import ensure_folders, move_aside, open_regular_file, printable, routes_by_folder
from .lifecycle import supersede_memory
from .owners import default_owner

log = logging.getLogger(__name__)

# A file modified this recently may still be being written; it is picked up next pass.
SETTLE_SECONDS = 1.0
# Refused files are moved here (inside the inbox; the scan skips dot-folders), each with a
# <name>.reason.txt beside it, so the inbox holds only what is still to come.
REFUSED_DIR = ".refused"


@dataclass
class ScanReport:
    ingested: list[int] = field(default_factory=list)
    duplicates: int = 0
    failed: int = 0
    seen: int = 0

    @property
    def found_work(self) -> bool:
        return bool(self.ingested or self.duplicates or self.failed)


def heartbeat_path() -> Path:
    return Path(settings.MEMORY_DATA_DIR) / "inbox-watcher.heartbeat"


def watcher_last_seen():
    try:
        return timezone.datetime.fromtimestamp(heartbeat_path().stat().st_mtime, tz=timezone.UTC)
    except OSError:
        return None


def _owner_for(rel: Path, fallback):
    """inbox/<username>/... belongs to that user (unless MEMORY_INBOX_USER_FOLDERS is off);
    anything else to the default owner."""
    if len(rel.parts) > 1 and routes_by_folder():
        User = get_user_model()
        user = User.objects.filter(**{User.USERNAME_FIELD: rel.parts[0]}).first()
        if user is None:
            raise IngestError(f"No user named {rel.parts[0]!r} for folder {rel.parts[0]}/.")
        return user
    return fallback


def _move_refused(root: Path, rel: Path, record: ProcessedFile) -> None:
    """Move a refused file out of the way, to .refused/ with its reason beside it, and say
    where in the record (the ingest page and the status panel show it)."""
    target = root / REFUSED_DIR / rel
    if target.exists():
        target = target.with_name(f"{target.stem}-{int(time.time())}{target.suffix}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        move_aside(root, rel, target)
        target.with_name(target.name + ".reason.txt").write_text(record.error + "\n", encoding="utf-8")
    except OSError as exc:
        log.warning("could not move refused inbox file %s aside: %s", rel, exc)
        return
    moved_to = target.relative_to(root)
    record.error = f"{record.error} Moved to {REFUSED_DIR}/{moved_to.relative_to(REFUSED_DIR)}."[:5000]
    record.save(update_fields=["error"])


# How far back the ingest page and the sidebar list refused inbox files.
REFUSALS_SHOWN_FOR = timedelta(days=7)


def refused_files(*, owner, limit: int = 5):
    """The owner's recent inbox refusals, newest first, for the ingest page and sidebar."""
    recent = ProcessedFile.objects.filter(
        owner=owner, status=ProcessedFile.Status.FAILED, processed_at__gte=timezone.now() - REFUSALS_SHOWN_FOR
    )
    return recent.order_by("-processed_at", "-pk")[:limit]


def scan_inbox(*, inbox_dir: Path | None = None, extract: str = "inline", settle_seconds: float = SETTLE_SECONDS) -> ScanReport:
    """One pass over the inbox. extract="inline" extracts each new file before going on
    (a one-off scan finishes its work); "queue" hands it to the task cluster, so a slow
    model never holds up the other files of an always-on watcher."""
    inbox = Path(inbox_dir or settings.MEMORY_INBOX_DIR)
    ensure_folders(inbox)
    report = ScanReport()
    # 0600 like everything in the data dir (the start-up check warns about wider files).
    heartbeat_path().touch(mode=0o600)
    fallback = default_owner()
    for path in sorted(inbox.rglob("*")):
        rel = path.relative_to(inbox)
        if any(part.startswith(".") for part in rel.parts):
            continue
        try:
            info = path.lstat()
        except OSError:
            continue  # vanished between listing and looking
        # Only regular files: a symlink could point outside the inbox, a FIFO would block.
        if not stat.S_ISREG(info.st_mode) or time.time() - info.st_mtime < settle_seconds:
            continue
        report.seen += 1
        _process(path, rel, info, fallback, report, extract, inbox)
    return report


def _process(path: Path, rel: Path, info, fallback, report: ScanReport, extract: str, inbox: Path) -> None:
    # Not path.resolve(): that would follow a link swapped in since the scan looked.
    key = str(inbox.resolve() / rel)
    try:
        owner = _owner_for(rel, fallback)
    except IngestError as exc:
        owner, error = fallback, str(exc)
    else:
        error = ""
    seen = ProcessedFile.objects.owned_by(owner).filter(path=key)
    # Same path, size and mtime as a recorded version: unchanged, no need to hash it again.
    if seen.filter(size=info.st_size, mtime=info.st_mtime).exists():
        return
    record = ProcessedFile(owner=owner, path=key, size=info.st_size, mtime=info.st_mtime, sha256="")
    try:
        if error:
            raise IngestError(error)
        # Opened through the inbox tree without following links, and checked to be the
        # very file the scan saw: a symlink swapped in meanwhile fails instead of being read.
        with open_regular_file(inbox, rel, expected=info) as fh:
            record.sha256 = hashlib.file_digest(fh, "sha256").hexdigest()
            if seen.filter(sha256=record.sha256).exclude(status=ProcessedFile.Status.FAILED).exists():
                seen.filter(sha256=record.sha256).update(size=info.st_size, mtime=info.st_mtime)
                return
            # Refused before and dropped in again: judged again (and moved aside again).
            seen.filter(sha256=record.sha256, status=ProcessedFile.Status.FAILED).delete()
            fh.seek(0)
            result = ingest_file(owner=owner, fileobj=fh, name=path.name, source=path.name, actor=INBOX_WATCHER)
    except (IngestError, OSError) as exc:
        record.status, record.error = ProcessedFile.Status.FAILED, str(exc)
        report.failed += 1
        log.warning("inbox file %s failed: %s", printable(rel), printable(exc))
    else:
        record.memory = result.memory
        if result.created:
            record.status = ProcessedFile.Status.INGESTED
            report.ingested.append(result.memory.pk)
            log.info("inbox file %s -> memory %s", printable(rel), result.memory.pk)
            # A changed file at the same path is a new version of what it said before.
            previous = seen.filter(status=ProcessedFile.Status.INGESTED, memory__isnull=False).order_by("-processed_at").first()
            if previous and previous.memory.is_live and previous.memory_id != result.memory.pk:
                supersede_memory(old=previous.memory, new=result.memory, actor=INBOX_WATCHER)
        else:
            record.status = ProcessedFile.Status.DUPLICATE
            record.error = result.message
            report.duplicates += 1
    try:
        record.save()
    except IntegrityError:
        return  # another watcher recorded this version first
    if record.status == ProcessedFile.Status.FAILED:
        _move_refused(inbox, rel, record)
    if record.status == ProcessedFile.Status.INGESTED:
        if extract == "queue":
            queue_extraction(record.memory)
        else:
            extract_memory(record.memory.pk, actor=INBOX_WATCHER)
