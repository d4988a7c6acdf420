"""History imports in the background, for the page and the API: the upload kept in the data
folder, the import run by a worker (history_import.import_history), its progress and result
kept in the cache for the page to read."""

from __future__ import annotations

import logging
import re
import shutil
import uuid
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache

from .history import SYSTEM, Actor
from .history_import import KINDS, HistoryImportError, import_history

log = logging.getLogger(__name__)

# How long a background import's progress and result stay to be read.
JOB_SECONDS = 7 * 24 * 3600
# Progress is written every this many conversations or notes: a cache write each, not a row.
PROGRESS_EVERY = 25


def _job_key(job_id: str) -> str:
    return f"history-import:{job_id}"


def start_import(*, owner, fileobj: BinaryIO, name: str, kind: str = "", actor: Actor = SYSTEM) -> dict:
    """Keep an uploaded export in the data folder and import it in a worker: an export of
    thousands of conversations takes longer than a request may (gunicorn's 120 s). Returns
    the job as import_status gives it; with inline tasks (MEMORY_TASKS_SYNC, tests) it has
    run already. The file is removed once the import is over, whatever its outcome."""
    from django_q.tasks import async_task

    if kind and kind not in KINDS:
        raise HistoryImportError(f"Unknown history kind {kind!r}; use one of {', '.join(KINDS)}.")
    job_id = uuid.uuid4().hex
    folder = Path(settings.MEMORY_DATA_DIR) / "imports" / str(owner.pk)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    # The person's file name is shown, never used as a path.
    path = folder / f"{job_id}{''.join(PurePosixPath(name).suffixes[-1:])[:10]}"
    fileobj.seek(0)
    with path.open("wb") as out:
        shutil.copyfileobj(fileobj, out, 1024 * 1024)
    job = {
        "id": job_id,
        "owner": owner.pk,
        "name": PurePosixPath(name.replace("\\", "/")).name[:200] or "export",
        "kind": kind,
        "path": str(path),
        "actor": actor.label,
        "actor_user": getattr(actor.user, "pk", None),
        "state": "queued",
        "done": 0,
        "total": None,
        "result": None,
        "error": "",
    }
    cache.set(_job_key(job_id), job, JOB_SECONDS)
    # As long as a task may run before the broker hands it out again (Q_CLUSTER "retry"):
    # a large export takes minutes. One that takes longer still is stopped and run again,
    # and the second run skips what the first stored.
    timeout = max(int(settings.Q_CLUSTER.get("timeout", 600)), int(settings.Q_CLUSTER.get("retry", 900)) - 60)
    async_task("memories.tasks.import_history", job_id, task_name=f"import-{job_id}", timeout=timeout)
    return import_status(owner=owner, job_id=job_id) or job


def run_import(job_id: str) -> str:
    """The worker's part of start_import: import the kept file, writing progress and then
    the result (or why it failed) where import_status reads them."""
    job = cache.get(_job_key(job_id))
    if job is None or job["state"] not in ("queued", "importing"):
        return "gone or already done"
    User = get_user_model()
    owner = User.objects.filter(pk=job["owner"]).first()
    path = Path(job["path"])
    if owner is None or not path.is_file():
        job.update(state="failed", error="The uploaded export is no longer there; upload it again.")
        cache.set(_job_key(job_id), job, JOB_SECONDS)
        return job["error"]
    actor = Actor(job["actor"], User.objects.filter(pk=job["actor_user"]).first() if job["actor_user"] else None)
    job.update(state="importing")
    cache.set(_job_key(job_id), job, JOB_SECONDS)

    def progress(done: int, total: int | None, _name: str) -> None:
        if done % PROGRESS_EVERY == 0 or done == total:
            job.update(done=done, total=total)
            cache.set(_job_key(job_id), job, JOB_SECONDS)

    try:
        result = import_history(
            owner=owner, kind=job["kind"], path=path, name=job["name"], actor=actor, queue=True, progress=progress
        )
        job.update(state="done", result=result.as_dict())
    except HistoryImportError as exc:
        job.update(state="failed", error=str(exc))
    except Exception as exc:  # a bug must not leave the card saying "importing" forever
        log.exception("history import %s crashed", job_id)
        job.update(state="failed", error=f"The import stopped on an error ({type(exc).__name__}); importing again resumes it.")
    finally:
        path.unlink(missing_ok=True)
    cache.set(_job_key(job_id), job, JOB_SECONDS)
    return f"{job['state']}: {job['result']['summary'] if job['result'] else job['error']}"


def import_status(*, owner, job_id: str) -> dict | None:
    """A background import of the owner's: state (queued, importing, done, failed), progress
    (done of total conversations, or notes so far), and the result or the error. None for
    an unknown id or another owner's."""
    if not re.fullmatch(r"[0-9a-f]{32}", str(job_id)):
        return None
    job = cache.get(_job_key(job_id))
    if not job or job.get("owner") != owner.pk:
        return None
    return {k: v for k, v in job.items() if k not in ("path", "actor", "actor_user", "owner")}
