"""Import of a whole memory space from an export (the format: services/export.py).

Import streams, holding only the id maps. It reads and checks the whole file first (the end
line's counts and checksum, and every field the way the app checks what it writes,
services/fields.py: import_check.py), so a corrupt, cut-off or tampered export imports
nothing; then it writes in short transactions.
Content hashes are recomputed, history is marked as imported, and vectors are made anew by
this installation's backend.

Into an empty space an import recreates it: ids are new, every reference is mapped to them,
timestamps, states, links, insights, history and tombstones are the exported ones. Into a
space that already holds memories it deduplicates as ingest does: content already there is
not added again (its history stays the space's own), content the space deleted stays
refused, and new memories are checked for near-duplicates.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from django.core.files import File
from django.db import connection, transaction
from django.db.models import F, Max

from ..models import Consolidation, Event, Memory, MemoryLink, RejectedContent
from . import quota
from .history import SYSTEM, Actor
from .embed import queue_vectors
from .duplicates import fingerprint, link_near_duplicate
from .extraction import queue_extraction
from .import_check import CheckedExport, ImportRefused, IncomingFile

QUEUE_AT_ONCE = 100
# How the history of an imported space names who acted: what the file says, marked as such.
IMPORTED = "imported: "
# Keys of an event's before/after that hold memory ids.
MEMORY_REF_KEYS = ("duplicate_of", "superseded_by", "outdated_by", "sources")

# Records one write transaction holds. On SQLite every write transaction locks out every
# other writer: a batch of 200 links or events takes tens of milliseconds, a memory row
# (a dozen indexes) about a millisecond, so memories go 100 at a time (scripts/bench_import.py).
BATCH = 200
MEMORY_BATCH = 100


class ImportStopped(ImportRefused):
    """The export was whole and valid, but writing it failed part-way (the database went away,
    the disk filled): the message says what was stored before the failure."""

    def __init__(self, message: str, result: ImportResult):
        super().__init__(message)
        self.result = result


@dataclass
class ImportResult:
    memories: int = 0
    files: int = 0
    consolidations: int = 0
    links: int = 0
    tombstones: int = 0
    events: int = 0
    duplicates: int = 0  # already in the space: not added again
    refused: int = 0  # deleted in the space: stays out
    near_duplicates: int = 0
    source_user: str = ""
    pending: list[int] = field(default_factory=list, repr=False)

    def summary(self, verb: str = "Imported") -> str:
        parts = [
            _count(self.memories, "memory", "memories"),
            _count(self.files, "file"),
            _count(self.consolidations, "insight"),
            _count(self.links, "link"),
            _count(self.tombstones, "tombstone"),
            _count(self.events, "history event"),
        ]
        skipped = [f"{self.duplicates} already there"] if self.duplicates else []
        skipped += [f"{self.refused} deleted here before, left out"] if self.refused else []
        skipped += [f"{self.near_duplicates} linked as near-duplicates"] if self.near_duplicates else []
        return f"{verb} " + ", ".join(parts) + (f" ({'; '.join(skipped)})" if skipped else "") + "."


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def import_space(
    *, owner, lines: Iterable[bytes], actor: Actor = SYSTEM, progress: Callable[[Counter], None] | None = None
) -> ImportResult:
    """Import an export into the owner's space.

    The whole file is read and checked first, with nothing written and no transaction open:
    a damaged, cut-off or tampered file, or one holding a value the app would never write,
    is refused (ImportRefused) and nothing is imported. Only then is it written, BATCH
    records a transaction, so the web server, the workers and the watcher keep writing
    while a big import runs. Should a write fail part-way, ImportStopped says what was stored."""
    with CheckedExport(progress) as checked:
        checked.read(lines)
        if (left := quota.room(owner)) is not None and checked.file_bytes > left:
            raise ImportRefused(f"{quota.refusal(what='The files in this export')} Nothing was imported.")
        result = _Writer(owner, actor, checked).run()
    # Extraction still owed: the first few are queued now; the sweeper (resume_stuck) picks up
    # the rest, which keeps a big import from spending minutes filling the queue.
    for pk in result.pending[:QUEUE_AT_ONCE]:
        queue_extraction(Memory(pk=pk))
    if result.memories:
        # Vectors are not part of an export (another installation may run another model):
        # the imported memories are embedded in a worker by whatever backend this one runs.
        queue_vectors(owner_id=owner.pk)
    return result


# -- writing: short transactions -----------------------------------------------------------------


# SQLite keeps no queue for its write lock: a writer that finds it taken polls, its busy
# handler sleeping up to 100 ms between tries, so transactions run back to back can keep it
# out far longer than any one of them. A pause after each lets a waiting writer in: with
# it, a writer meanwhile waited about as long as the longest batch (340-450 ms on a loaded
# 2-core machine), without it up to 1.3 s (scripts/bench_import.py --pause 0 0.05).
SQLITE_PAUSE = 0.05


@contextlib.contextmanager
def _write_batch() -> Iterator[None]:
    with transaction.atomic():
        yield
    if connection.vendor == "sqlite":
        time.sleep(SQLITE_PAUSE)


class _Writer:
    """Writes a checked export, BATCH records a transaction, mapping every exported id to
    the one it gets here. Into an empty space it recreates it; into one that holds memories
    it deduplicates as ingest does."""

    def __init__(self, owner, actor: Actor, checked: CheckedExport):
        self.owner = owner
        self.actor = actor
        self.checked = checked
        self.result = ImportResult(source_user=checked.source_user)
        self.memories: dict[int, int | None] = {}  # exported id -> id here (None: left out)
        self.created: set[int] = set()  # exported ids this import created
        self.consolidations: dict[int, int | None] = {}
        self.made_consolidations: set[int] = set()
        self.reserved: dict[int, int] = {}  # purged memories: ids no memory here will ever get
        self.deferred: list[tuple[int, str, int]] = []
        self.stored_files: list[tuple] = []
        self.memories_done = False
        self.line_no = 0
        self.empty = not (
            Memory.all_objects.owned_by(owner).exists()
            or RejectedContent.objects.owned_by(owner).exists()
            or Consolidation.all_objects.owned_by(owner).exists()
        )
        self.before_max = Memory.all_objects.aggregate(top=Max("pk"))["top"] or 0
        # Each kind of checked record and what writes a batch of them.
        self.writers: dict[str, Callable[[list[dict]], None]] = {
            "memory": self._memory_batch,
            "consolidation": self._consolidation_batch,
            "link": self._link_batch,
            "tombstone": self._tombstone_batch,
            "event": self._event_batch,
        }

    def run(self) -> ImportResult:
        batch: list[tuple[int, dict]] = []
        kind = ""
        for line_no, record_kind, record in self.checked.records():
            if batch and (record_kind != kind or len(batch) >= (MEMORY_BATCH if kind == "memory" else BATCH)):
                self._write(kind, batch)
                batch = []
            kind = record_kind
            batch.append((line_no, record))
        if batch:
            self._write(kind, batch)
        if not self.memories_done:
            self._step("memory references", self._resolve_references)
        return self.result

    def _write(self, kind: str, batch: list[tuple[int, dict]]) -> None:
        if kind != "memory" and not self.memories_done:
            self._step("memory references", self._resolve_references)
        self.line_no = batch[0][0]
        self._step(f"{kind} records", lambda: self.writers[kind]([record for _, record in batch]))

    def _step(self, what: str, write: Callable[[], None]) -> None:
        """One step of the import; a failure stops the import and says what is stored."""
        before = dataclasses.replace(self.result, pending=list(self.result.pending))
        try:
            write()
        except Exception as exc:
            for storage, name in self.stored_files:
                storage.delete(name)
            stored = before.summary("Stored before it:")
            raise ImportStopped(
                f"The import stopped writing {what} at line {self.line_no}: {type(exc).__name__}: {exc}. {stored} "
                "The rest of the file was not imported; importing it again adds what is missing "
                "(the memories already stored keep only the history stored with them).",
                before,
            ) from exc
        finally:
            self.stored_files = []

    # -- memories

    def _memory_batch(self, records: list[dict]) -> None:
        hashes = {r["values"]["content_hash"] for r in records}
        known = self._known(hashes)
        # Files are copied into the store before the transaction (copying one can take
        # seconds), and deleted again if the batch is not written.
        made: list[tuple[dict, Memory]] = []
        for r in records:
            if r["values"]["content_hash"] in known:
                continue
            memory = Memory(owner=self.owner, **r["values"])
            fingerprint(memory)  # MinHash of the text: computed here, not while holding the lock
            if r["has_file"]:
                self._store_file(memory, self.checked.files.pop(r["id"]))
            made.append((r, memory))
        made_for = {r["id"]: memory for r, memory in made}
        with _write_batch():
            # Asked again inside the transaction: the space may have taken the same content since.
            known = self._known(hashes)
            for r in records:
                if not self._memory(r, known):
                    # (Known before the transaction and purged since: it comes back without its file.)
                    self._save_memory(r, made_for.get(r["id"]) or Memory(owner=self.owner, **r["values"]))
        for r, memory in made:
            if memory.pk is None and memory.original:
                memory.original.storage.delete(memory.original.name)
        self.stored_files = []

    def _known(self, hashes: set[str]) -> dict[str, tuple[str, int | None]]:
        """What the space already says about these hashes: ("refused", ref) or ("have", pk)."""
        if self.empty:
            return {}
        known: dict[str, tuple[str, int | None]] = {}
        for digest, pk in (
            Memory.all_objects.owned_by(self.owner)
            .filter(content_hash__in=hashes, pk__lte=self.before_max)
            .order_by(F("deleted_at").desc(nulls_last=True), "pk")
            .values_list("content_hash", "pk")
        ):
            known[digest] = ("have", pk)  # the last wins: a live one, the newest
        for digest in (
            RejectedContent.objects.owned_by(self.owner).filter(content_hash__in=hashes).values_list("content_hash", flat=True)
        ):
            known.setdefault(digest, ("refused", None))
            if known[digest][0] == "have":
                known[digest] = ("have_refused", known[digest][1])
        return known

    def _memory(self, r: dict, known: dict) -> bool:
        """Whether the space already decided about this content (holds or refuses it)."""
        values = r["values"]
        state, pk = known.get(values["content_hash"], ("", None))
        live = values["deleted_at"] is None and r["refs"]["superseded_by"] is None
        # As ingest does: content the space deleted stays out, content it holds is not added twice.
        if live and state in ("refused", "have_refused"):
            self.memories[r["id"]] = None
            self.result.refused += 1
            return True
        if state in ("have", "have_refused"):
            self.memories[r["id"]] = pk
            self.result.duplicates += 1
            return True
        return False

    def _save_memory(self, r: dict, memory: Memory) -> None:
        if memory.sim_band0 is None:
            fingerprint(memory)
        # raw: as loaddata saves, with the exported created_at/updated_at instead of the clock's.
        memory.save_base(raw=True)
        self.memories[r["id"]] = memory.pk
        self.created.add(r["id"])
        self.result.memories += 1
        self.result.files += bool(memory.original)
        for name, old in r["refs"].items():
            if old is not None:
                self.deferred.append((memory.pk, name, old))
        if memory.status == Memory.Status.PENDING and memory.deleted_at is None:
            self.result.pending.append(memory.pk)

    def _store_file(self, memory: Memory, incoming: IncomingFile) -> None:
        try:
            with open(incoming.path, "rb") as fh:
                memory.original.save(incoming.description["name"], File(fh), save=False)
        finally:
            incoming.discard()
        self.stored_files.append((memory.original.storage, memory.original.name))

    def _resolve_references(self) -> None:
        """Once every memory is in: their references to each other, then near-duplicates."""
        self.memories_done = True
        pending = [(pk, name, self.memories.get(old)) for pk, name, old in self.deferred]
        pending = [item for item in pending if item[2] is not None]
        for start in range(0, len(pending), BATCH):
            with _write_batch():
                for pk, name, target in pending[start : start + BATCH]:
                    Memory.all_objects.filter(pk=pk).update(**{f"{name}_id": target})
        self.deferred = []
        if self.empty:
            return
        # New content next to what was there: linked as a near-duplicate as ingest would.
        fresh = Memory.objects.filter(
            pk__gt=self.before_max, owner=self.owner, duplicate_of__isnull=True, near_duplicates__isnull=True
        )
        ids = list(fresh.order_by("pk").values_list("pk", flat=True))
        for start in range(0, len(ids), BATCH // 4):  # each compares with up to 50 candidates
            with _write_batch():
                for memory in Memory.objects.filter(pk__in=ids[start : start + BATCH // 4]).order_by("pk"):
                    link_near_duplicate(memory, self.actor)
                    self.result.near_duplicates += memory.duplicate_of_id is not None

    # -- the rest

    def _consolidation_batch(self, records: list[dict]) -> None:
        with _write_batch():
            for r in records:
                self._consolidation(r)

    def _consolidation(self, r: dict) -> None:
        sources = [self.memories[s] for s in r["sources"] if self.memories.get(s) is not None]
        if not self.empty:
            same = Consolidation.all_objects.owned_by(self.owner).filter(summary=r["summary"], insight=r["insight"]).first()
            if same is not None:
                self.consolidations[r["id"]] = same.pk
                return
        consolidation = Consolidation(
            owner=self.owner,
            **{
                name: r[name] for name in ("summary", "insight", "provider", "stale_at", "retired_at", "created_at", "updated_at")
            },
        )
        consolidation.save_base(raw=True)
        through = Consolidation.sources.through
        through.objects.bulk_create([through(consolidation_id=consolidation.pk, memory_id=pk) for pk in dict.fromkeys(sources)])
        self.consolidations[r["id"]] = consolidation.pk
        self.made_consolidations.add(r["id"])
        self.result.consolidations += 1

    def _link_batch(self, records: list[dict]) -> None:
        wanted = []
        for r in records:
            source, target = self.memories.get(r["from"]), self.memories.get(r["to"])
            made_in = r["consolidation"]
            consolidation = self.consolidations.get(made_in) if made_in is not None else None
            if source is None or target is None or source == target or (made_in is not None and consolidation is None):
                continue
            wanted.append(((source, target, consolidation), r))
        with _write_batch():
            there = set()
            if not self.empty:
                there = set(
                    MemoryLink.objects.filter(from_memory_id__in={key[0] for key, _ in wanted}).values_list(
                        "from_memory_id", "to_memory_id", "consolidation_id"
                    )
                )
            for key, r in wanted:
                if key in there:
                    continue
                there.add(key)
                MemoryLink(
                    from_memory_id=key[0],
                    to_memory_id=key[1],
                    relationship=r["relationship"],
                    consolidation_id=key[2],
                    created_at=r["created_at"],
                ).save_base(raw=True)
                self.result.links += 1

    def _tombstone_batch(self, records: list[dict]) -> None:
        with _write_batch():
            for r in records:
                self._tombstone(r)

    def _tombstone(self, r: dict) -> None:
        if not self.empty and Memory.objects.owned_by(self.owner).filter(content_hash=r["content_hash"]).exists():
            return  # the space holds this content and keeps it: its decision, not the export's
        ref = r["memory_ref"]
        _, created = RejectedContent.objects.get_or_create(
            owner=self.owner,
            content_hash=r["content_hash"],
            defaults={
                "memory_ref": self._memory_ref(ref) if ref is not None else None,
                "reason": r["reason"],
                "rejected_at": r["rejected_at"],
            },
        )
        self.result.tombstones += created

    def _event_batch(self, records: list[dict]) -> None:
        with _write_batch():
            rows = [row for r in records if (row := self._event(r)) is not None]
            Event.objects.bulk_create(rows)
        self.result.events += len(rows)

    def _event(self, r: dict) -> Event | None:
        old = r["subject_id"]
        if r["subject_type"] == Event.Subject.MEMORY:
            if old in self.memories and old not in self.created:
                return None  # content the space already had (or refused): its history is the space's own
            subject = self._memory_ref(old)
        else:
            if old not in self.made_consolidations:
                return None
            subject = self.consolidations[old]
        return Event(
            owner=self.owner,
            subject_type=r["subject_type"],
            subject_id=subject,
            action=r["action"],
            # What another account (or installation) did is shown as imported, never as if
            # a user or token of this space had done it: nothing in a file proves who acted.
            actor=(r["actor"] if r["actor"].startswith(IMPORTED) else f"{IMPORTED}{r['actor']}")[:200],
            actor_user=None,
            before=self._remap(r["before"]),
            after=self._remap(r["after"]),
            note=r["note"],
            created_at=r["created_at"],
        )

    # -- ids

    def _memory_ref(self, old: int) -> int:
        """The id here of an exported memory id; a purged memory (no row, only its history and
        tombstone) gets an id that no memory here will ever have, so its history stays its own."""
        if (pk := self.memories.get(old)) is not None:
            return pk
        if old not in self.reserved:
            ghost = Memory.all_objects.create(owner=self.owner, content_hash="", status=Memory.Status.FAILED)
            Memory.all_objects.filter(pk=ghost.pk).delete()  # ids are never reused (AUTOINCREMENT, sequences)
            self.reserved[old] = ghost.pk
        return self.reserved[old]

    def _remap(self, values: dict) -> dict:
        out = dict(values)
        for key in MEMORY_REF_KEYS:
            if isinstance(out.get(key), int) and not isinstance(out[key], bool):
                out[key] = self._memory_ref(out[key])
            elif isinstance(out.get(key), list):
                out[key] = [self._memory_ref(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in out[key]]
        return out
