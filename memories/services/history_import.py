"""Bring your history: a ChatGPT or Claude export, or a Markdown/Obsidian vault, as memories.

One memory a message or note part, with its own date, a source that says where it came
from, and its conversation's title. What the person said is kept apart from what the
assistant said: the assistant's replies are stored in its name ("ChatGPT: ..."), with
`said_by` in their metadata (the answer context and the offline answer attribute them,
never quoting them as the person's own words), at a lower importance, and they never
mark one of the person's facts as outdated. The turns of a conversation share one source
with positions ("chatgpt:<conversation id>:<turn>", the message id in metadata), stored
in order, which is what recall's conversation neighbours and the embedder's context read.

An export is read twice, both times as a stream: first checked whole (a damaged file
imports nothing and says where it broke), then stored in small batches, each its own
short transaction, so a long import never holds the write lock for long. Memories are
stored pending: searchable by their words at once, extracted (and then embedded) by the
workers, or by the command after the import. The identity of a message is its export's
ids and its text: importing the same export again adds nothing, a newer one only what is
new; a changed note's new version supersedes the old one. The page and the API run an
import in the background (history_jobs.py).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from ..extract import chat_exports, vaults
from ..extract.history import KINDS, DamagedExport
from ..models import Event, Memory, MemoryLink, RejectedContent, content_hash
from . import history
from .errors import IngestError
from .history import SYSTEM, Actor
from .duplicates import fingerprint
from .extraction import queue_extraction
from .ingest import parse_occurred_at
from .lifecycle import supersede_memory

log = logging.getLogger(__name__)

# Memories written in one transaction: about 100 ms of write lock on SQLite on a busy
# machine (scripts/bench_history_import.py: 73 / 100 / 228 ms median at 50 / 100 / 200).
BATCH = 100
# What an assistant's reply is worth next to the person's own words (0.5 before extraction);
# extraction keeps it at most ASSISTANT_MAX_IMPORTANCE (extraction._apply_extraction).
ASSISTANT_IMPORTANCE = 0.2
DELETED_BEFORE = "deleted before (it stays deleted)"


class HistoryImportError(IngestError):
    """The export could not be imported; nothing of it was stored."""


@dataclass
class HistoryImportResult:
    kind: str
    conversations: int = 0  # read in the export
    conversations_new: int = 0  # with at least one message stored now
    messages: int = 0  # stored now
    notes: int = 0  # note files with a part stored now
    note_parts: int = 0  # memories stored now from notes
    already: int = 0  # messages or note parts stored by an earlier import
    links: int = 0  # wikilinks stored now as links between memories
    replaced: int = 0  # older versions of changed notes, superseded
    skipped: Counter = field(default_factory=Counter)
    new_ids: list[int] = field(default_factory=list)

    @property
    def added(self) -> int:
        return self.messages + self.note_parts

    @property
    def skipped_lines(self) -> list[str]:
        """What was left out and why, most first."""
        return [f"{n:,} {reason}" for reason, n in self.skipped.most_common()]

    def as_dict(self) -> dict:
        """What the API answers and a background import keeps for its card."""
        return {
            "kind": self.kind,
            "summary": self.summary,
            "headline": self.headline,
            "conversations": self.conversations,
            "conversations_new": self.conversations_new,
            "messages": self.messages,
            "notes": self.notes,
            "note_parts": self.note_parts,
            "already": self.already,
            "links": self.links,
            "replaced": self.replaced,
            "skipped": dict(self.skipped.most_common()),
            "skipped_lines": self.skipped_lines,
        }

    @property
    def headline(self) -> str:
        """What came in, without what was skipped (the card lists that apart)."""
        if self.kind == "markdown":
            came = f"{_count(self.notes, 'note')} came in as {_count(self.note_parts, 'memory', 'memories')}"
            if self.links:
                came += f", {_count(self.links, 'link')} between them"
        else:
            came = (
                f"{_count(self.messages, 'message')} from {_count(self.conversations_new, 'conversation')} came in"
                f" (the export holds {_count(self.conversations, 'conversation')})"
            )
        parts = [came]
        if self.already:
            parts.append(f"{self.already:,} already here from an earlier import")
        if self.replaced:
            parts.append(f"{_count(self.replaced, 'older version')} of changed notes superseded")
        return "; ".join(parts) + "."

    @property
    def summary(self) -> str:
        text = self.headline
        if self.skipped:
            text += " Skipped: " + ", ".join(self.skipped_lines) + "."
        return text


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


# Called as each conversation or note is stored: (how many so far, how many in all when
# the check has counted them, its name).
Progress = Callable[[int, int | None, str], None]


def import_history(
    *,
    owner,
    kind: str = "",
    path: Path | None = None,
    fileobj: BinaryIO | None = None,
    name: str = "",
    actor: Actor = SYSTEM,
    queue: bool = False,
    progress: Progress | None = None,
    batch_size: int = BATCH,
) -> HistoryImportResult:
    """Import an export: `path` (a .zip, a conversations.json, an unpacked export folder, or
    a vault folder) or an open, seekable `fileobj` named `name` (an upload). `kind`:
    chatgpt, claude or markdown; empty reads it from the contents. `queue`: extract in the
    workers (the page, the API); the command extracts the memories itself (`new_ids`).
    `progress` is called as each conversation or note is stored (see Progress).
    HistoryImportError when the export cannot be read; nothing is stored then."""
    if kind and kind not in KINDS:
        raise HistoryImportError(f"Unknown history kind {kind!r}; use one of {', '.join(KINDS)}.")
    writer = _Writer(owner=owner, actor=actor, queue=queue, batch_size=batch_size)
    try:
        if path is not None and Path(path).is_dir():
            folder = Path(path)
            if kind in ("chatgpt", "claude") or (not kind and (folder / "conversations.json").is_file()):
                with (folder / "conversations.json").open("rb") as fh:
                    return _import_chats(
                        writer, kind or chat_exports.sniff_kind(fh, "conversations.json"), fh, "conversations.json", progress
                    )
            return _import_vault(writer, vaults.vault_files(folder, writer.vault), progress)
        if path is not None:
            with Path(path).open("rb") as fh:
                return _import_file(writer, kind, fh, name or Path(path).name, progress)
        if fileobj is None:
            raise HistoryImportError("Give an export file or folder to import.")
        return _import_file(writer, kind, fileobj, name or "export", progress)
    except (DamagedExport, OSError) as exc:
        why = str(exc) if isinstance(exc, DamagedExport) else f"{name or path}: {exc.strerror or exc}."
        # Only a file that changed or failed on disk while it was stored breaks after the check.
        done = writer.result.added
        outcome = (
            f" {done:,} memories were stored before it; importing again adds the rest." if done else " Nothing was imported."
        )
        raise HistoryImportError(why + outcome) from None


def _import_file(writer: _Writer, kind: str, fh: BinaryIO, name: str, progress) -> HistoryImportResult:
    kind = kind or chat_exports.sniff_kind(fh, name)
    if kind == "markdown":
        # Every note is read once first (a zip checks each member's checksum as it reads
        # it), so a vault damaged in its last note imports nothing.
        with vaults.zipped_vault(fh, name, vaults.VaultSkips()) as files:
            for _path, read, _modified in files:
                read()
        with vaults.zipped_vault(fh, name, writer.vault) as files:
            return _import_vault(writer, files, progress)
    return _import_chats(writer, kind, fh, name, progress)


# --- conversations -------------------------------------------------------------------------


def _import_chats(writer: _Writer, kind: str, fh: BinaryIO, name: str, progress) -> HistoryImportResult:
    writer.result.kind = kind
    with chat_exports.conversation_files(fh, name) as files:
        # First the whole export is read and checked, storing nothing: a damaged one stops here.
        total = 0
        for label, opener in files:
            for _ in chat_exports.conversations(kind, opener(), label):
                total += 1
        done = 0
        for label, opener in files:
            for conversation in chat_exports.conversations(kind, opener(), label):
                writer.add_conversation(conversation)
                done += 1
                if progress:
                    progress(done, total, conversation.title or conversation.id)
    writer.flush()
    return writer.result


def _assistant_text(kind: str, text: str) -> str:
    return f"{chat_exports.ASSISTANT_NAMES[kind]}: {text}"


# --- notes ---------------------------------------------------------------------------------


def _import_vault(writer: _Writer, files: Iterable, progress) -> HistoryImportResult:
    writer.result.kind = "markdown"
    for done, (path, read, modified) in enumerate(files, 1):
        parts = vaults.read_note(path, read(), modified, writer.vault)
        if parts:
            writer.add_note(parts)
        if progress:
            progress(done, None, path)
    writer.flush()
    writer.link_notes()
    writer.result.skipped.update(writer.vault.skipped)
    return writer.result


# --- storing -------------------------------------------------------------------------------


@dataclass
class _Pending:
    memory: Memory
    group: str  # the conversation or note it belongs to
    key: str = ""  # note parts: the note's path
    part: tuple[int, str] = (0, "")  # note parts: number and heading
    links: tuple[tuple[str, str], ...] = ()  # note parts: the [[wikilinks]] in it


class _Writer:
    """Collects memories and stores them BATCH at a time, each batch one transaction."""

    def __init__(self, *, owner, actor: Actor, queue: bool, batch_size: int):
        self.owner, self.actor, self.queue, self.batch_size = owner, actor, queue, batch_size
        self.result = HistoryImportResult(kind="")
        self.vault = vaults.VaultSkips()
        self.pending: list[_Pending] = []
        self.new_groups: set[str] = set()
        # Vault: each note's stored parts (part, section, memory id), and the links to make.
        self.note_parts: dict[str, list[tuple[int, str, int]]] = {}
        self.note_names: dict[str, str] = {}  # a wikilink's key -> the note's path
        self.wanted_links: list[tuple[str, int, tuple[tuple[str, str], ...]]] = []
        self.earlier_notes: dict[str, list[tuple[int, int]]] | None = None  # path -> (memory id, part)

    def _memory(self, *, identity: str, text: str, source: str, when, metadata: dict, importance: float = 0.5) -> Memory:
        try:
            when = parse_occurred_at(when)  # made aware; a year out of what can be stored is no date
        except IngestError:
            when = None
        return Memory(
            owner=self.owner,
            source=source[:500],
            raw_text=text,
            content_hash=content_hash(f"{identity}\n{text}"),
            metadata={**metadata, **({"occurred_at_given": True} if when else {})},
            importance=importance,
            **({"occurred_at": when} if when else {}),
        )

    def add_conversation(self, conversation: chat_exports.Conversation) -> None:
        self.result.conversations += 1
        self.result.skipped.update(conversation.skipped)
        if not conversation.turns:
            self.result.skipped["conversation with nothing said in it"] += 1
            return
        kind = conversation.kind
        group = f"{kind}:{conversation.id}"
        # A conversation's turns stay in one batch when they fit: consecutive ids are how
        # recall and the embedder find a turn's neighbours.
        if len(self.pending) + len(conversation.turns) > self.batch_size:
            self.flush()
        for turn in conversation.turns:
            assistant = turn.role == "assistant"
            metadata = {
                "imported_from": kind,
                "conversation_id": conversation.id,
                "conversation_title": conversation.title,
                "message_id": turn.message_id,
                "position": turn.position,
                "role": turn.role,
            }
            if assistant:
                metadata["said_by"] = chat_exports.ASSISTANT_NAMES[kind]
            memory = self._memory(
                identity=f"{group}:{turn.message_id}",
                text=_assistant_text(kind, turn.text) if assistant else turn.text,
                source=f"{group}:{turn.position}",
                when=turn.occurred_at,
                metadata=metadata,
                importance=ASSISTANT_IMPORTANCE if assistant else 0.5,
            )
            self.pending.append(_Pending(memory, group))
            if len(self.pending) >= self.batch_size:
                self.flush()

    def add_note(self, parts: list[vaults.NotePart]) -> None:
        path = parts[0].path
        if self.earlier_notes is None:
            self._load_earlier_notes()
        if len(self.pending) + len(parts) > self.batch_size:
            self.flush()
        for name in (path, PurePosixPath(path).name, *parts[0].aliases):
            self.note_names.setdefault(vaults.note_key(name), path)
        for part in parts:
            memory = self._memory(
                identity=f"markdown:{path}#{part.part}",
                text=part.text,
                source=f"markdown:{path}" if part.parts == 1 else f"markdown:{path}:{part.part}",
                when=part.occurred_at,
                metadata={
                    "imported_from": "markdown",
                    "path": path,
                    "title": part.title,
                    "section": part.section,
                    "part": part.part,
                    "parts": part.parts,
                    "note_tags": list(part.tags),
                    "aliases": list(part.aliases),
                },
            )
            self.pending.append(_Pending(memory, f"markdown:{path}", path, (part.part, part.section), part.links))

    def flush(self) -> None:
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        hashes = [p.memory.content_hash for p in batch]
        # Notes get the near-duplicate fingerprint ingest gives a text (a note pasted into two
        # files), computed before the write transaction. Conversation turns do not, as with
        # bulk_remember: it was 40% of an import's time, and turns of different conversations
        # that say the same ("Thanks!") are not duplicates of each other.
        if any(item.key for item in batch):
            known = self._stored(hashes)
            for item in batch:
                if item.key and item.memory.content_hash not in known:
                    fingerprint(item.memory)
        with transaction.atomic():
            # As in ingest._create: one owner's writers queue here, so two imports of the
            # same export at once store it once.
            get_user_model().objects.select_for_update().filter(pk=self.owner.pk).first()
            stored = self._stored(hashes)
            refused = set(
                RejectedContent.objects.owned_by(self.owner)
                .filter(content_hash__in=hashes)
                .values_list("content_hash", flat=True)
            )
            fresh, seen = [], set()
            for item in batch:
                digest = item.memory.content_hash
                if digest in refused:
                    self.result.skipped[DELETED_BEFORE] += 1
                elif digest in stored or digest in seen:
                    self.result.already += 1
                    if item.key and digest in stored:
                        self._note_part_stored(item, stored[digest])
                else:
                    seen.add(digest)
                    fresh.append(item)
            created = Memory.objects.bulk_create([item.memory for item in fresh])
            now = timezone.now()
            Event.objects.bulk_create(
                history.event(
                    m,
                    Event.Action.CREATED,
                    self.actor,
                    after={"source": m.source, "content_hash": m.content_hash},
                    note="imported from history",
                    at=now,
                )
                for m in created
            )
            for item in fresh:
                memory = item.memory
                self.result.new_ids.append(memory.pk)
                if item.key:
                    self.result.note_parts += 1
                    if item.group not in self.new_groups:
                        self.result.notes += 1
                    self._note_part_stored(item, memory.pk)
                else:
                    self.result.messages += 1
                    if item.group not in self.new_groups:
                        self.result.conversations_new += 1
                self.new_groups.add(item.group)
                if self.queue:
                    queue_extraction(memory)
            self._supersede_old_versions(fresh)

    def _load_earlier_notes(self) -> None:
        """The note parts earlier imports stored, read once before this import stores any:
        what a changed note's new version supersedes (a query per note would walk all of
        the owner's rows each time)."""
        self.earlier_notes = {}
        earlier = Memory.objects.owned_by(self.owner).filter(source__startswith="markdown:").values_list("pk", "metadata")
        for pk, metadata in earlier.iterator():
            if isinstance(metadata, dict) and metadata.get("imported_from") == "markdown":
                self.earlier_notes.setdefault(str(metadata.get("path")), []).append((pk, metadata.get("part")))

    def _stored(self, hashes: list[str]) -> dict[str, int]:
        """The owner's memories, in any state, among these content hashes: looked up by the
        hash alone, then the owner. With the owner in the query SQLite walks an owner index,
        all of the owner's rows for every batch (a re-import of 40,000 messages took 103 s)."""
        rows = Memory.all_objects.filter(content_hash__in=hashes).order_by().values_list("content_hash", "pk", "owner_id")
        return {digest: pk for digest, pk, owner_id in rows if owner_id == self.owner.pk}

    def _note_part_stored(self, item: _Pending, pk: int) -> None:
        self.note_parts.setdefault(item.key, []).append((*item.part, pk))
        if item.links:
            self.wanted_links.append((item.key, pk, item.links))

    def _supersede_old_versions(self, fresh: list[_Pending]) -> None:
        """A note changed since the last import: its earlier parts that are not in this
        version are superseded (kept in history, out of recall) by the new part of the
        same number, or the note's first. A note's parts are all in one batch (add_note)."""
        paths = list(dict.fromkeys(item.key for item in fresh if item.key))
        if not paths:
            return
        for path in paths:
            parts = sorted(self.note_parts[path])
            current = {pk for _, _, pk in parts}
            by_number = {number: pk for number, _, pk in parts}
            old = [(pk, part) for pk, part in (self.earlier_notes or {}).get(path, []) if pk not in current]
            if not old:
                continue
            successors = Memory.objects.in_bulk(current)
            for memory in Memory.objects.filter(pk__in=[pk for pk, _ in old]):
                successor = successors[by_number.get(memory.metadata.get("part"), parts[0][2])]
                supersede_memory(old=memory, new=successor, actor=self.actor)
                self.result.replaced += 1

    def link_notes(self) -> None:
        """[[wikilinks]] as links between the memories of the notes they name: from the part
        that holds the link to the named note's first part (or its part under the named
        heading). Stored in batches, each its own transaction; links already there are kept."""
        rows: list[tuple[int, int, str]] = []
        for path, from_pk, targets in self.wanted_links:
            for target, heading in targets:
                key = vaults.note_key(target)
                to_path = self.note_names.get(key) or self.note_names.get(key.rsplit("/", 1)[-1])
                if to_path is None or to_path not in self.note_parts:
                    self.result.skipped["link to a note that is not in the vault"] += 1
                    continue
                parts = sorted(self.note_parts[to_path])
                to_pk = parts[0][2]
                if heading:
                    to_pk = next((pk for _, section, pk in parts if section.lower() == heading.lower()), to_pk)
                if to_pk != from_pk:
                    rows.append((from_pk, to_pk, f"links to [[{target}{'#' + heading if heading else ''}]]"[:500]))
        first: dict[tuple[int, int], tuple[int, int, str]] = {}
        for a, b, r in rows:
            first.setdefault((a, b), (a, b, r))  # the first wikilink between two names them
        rows = list(first.values())
        for start in range(0, len(rows), self.batch_size):
            chunk = rows[start : start + self.batch_size]
            with transaction.atomic():
                have = set(
                    MemoryLink.objects.filter(
                        from_memory_id__in={a for a, _, _ in chunk}, consolidation__isnull=True
                    ).values_list("from_memory_id", "to_memory_id")
                )
                new = [MemoryLink(from_memory_id=a, to_memory_id=b, relationship=r) for a, b, r in chunk if (a, b) not in have]
                MemoryLink.objects.bulk_create(new)
                Event.objects.bulk_create(
                    Event(
                        owner=self.owner,
                        subject_type=Event.Subject.MEMORY,
                        subject_id=link.from_memory_id,
                        action=Event.Action.LINKED,
                        actor=self.actor.label[:200],
                        actor_user=self.actor.user,
                        after={"to": link.to_memory_id, "relationship": link.relationship},
                        note="a wikilink in the note",
                    )
                    for link in new
                )
            self.result.links += len(new)
