"""People's existing history: ChatGPT and Claude data exports, Markdown and Obsidian folders.

Parsing only, no database: each reader yields plain records that services/history_import.py
stores: chat_exports.py reads ChatGPT and Claude exports (a Conversation with its Turns),
vaults.py Markdown and Obsidian notes (NotePart parts); this module holds what both share.
An export is read as a stream, one conversation at a time (ijson), so a 200 MB export needs
the memory of its largest conversation, not of the file. Anything the reader cannot make
sense of raises DamagedExport saying where; what it understands but leaves out (system and
tool messages, images, branches the person did not keep) is counted in `skipped`, by reason.
"""

from __future__ import annotations

from datetime import date, datetime, time

KINDS = ("chatgpt", "claude", "markdown")
# One message longer than this is cut: the text limit of a memory (services/ingest.py).
MAX_TURN_CHARS = 1_000_000


class DamagedExport(ValueError):
    """The export cannot be read as what it claims to be; the message says where."""


def iso_time(value) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime.combine(value, time())
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return datetime.fromisoformat(value.strip())
    except ValueError:
        return None
