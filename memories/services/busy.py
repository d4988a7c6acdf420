"""A database too busy to take a write in time: the one answer every entry point gives.

On SQLite a writer waits its turn (the busy timeout in settings.py) while another holds
the write lock; background jobs hold it for a fraction of a second at a time, so a wait
that runs out means something held it far longer. The request then did not happen: it
answers 503 with Retry-After and says nothing was stored, never a 500, never "stored"."""

from __future__ import annotations

from django.db import OperationalError

RETRY_AFTER_SECONDS = 5
MESSAGE = (
    "The database is busy with other work and could not take this in time; nothing was changed. "
    f"Try again in {RETRY_AFTER_SECONDS} seconds."
)
# SQLite's "database is locked" / "database table is locked"; PostgreSQL's lock_timeout
# ("canceling statement due to lock timeout") and a deadlock's loser.
_BUSY = ("database is locked", "database table is locked", "lock timeout", "deadlock detected")


def is_busy(exc: BaseException) -> bool:
    return isinstance(exc, OperationalError) and any(words in str(exc).lower() for words in _BUSY)
