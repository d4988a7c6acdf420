"""Export and import of a memory space: the round trip recreates everything, a damaged
export imports nothing, and an import never reaches past the space it is imported into."""

from __future__ import annotations

import hashlib
import io
import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from memories.models import Consolidation, Event, Memory, MemoryLink, RejectedContent
from memories.recall import recall
from memories.services import (
    RejectedContentError,
    consolidate_owner,
    delete_memory,
    extract_memory,
    ingest_file,
    ingest_text,
    purge_memory,
    supersede_memory,
    update_memory,
)
from memories.services import export
from memories.services.export import export_space
from memories.services.history import Actor
from memories.services.import_check import ImportRefused
from memories.services.importer import import_space
from memories.services.tokens import create_token

FALCON = [
    "Project Falcon kickoff with Sarah Chen: the launch is set for March 15.",
    "Sarah Chen moved the Project Falcon budget review to Friday afternoon.",
    "The Project Falcon launch checklist was drafted by Sarah Chen and Priya.",
    "Priya from Acme said the pricing launch moved to October.",
]
NEAR = "Project Falcon kickoff with Sarah Chen: the launch is set for March 15!!"
GONE = "A note about the old office wifi password, deleted later."
PURGED = "Something private, purged for good."
OLD, NEW = "The team offsite is in Lisbon in May.", "The team offsite moved to Porto in June."
PDF_TEXT = b"Quarterly notes: Falcon is on track. " * 40


@pytest.fixture
def small_chunks(monkeypatch):
    # Several file pieces for a small file: the chunking is exercised without big files.
    monkeypatch.setattr(export, "FILE_CHUNK", 256)


def build_space(owner) -> dict:
    """A space with something of everything: ready, pending and failed memories, a file,
    a near-duplicate, insights and links, an edit, a delete, a purge, a supersede."""
    actor = Actor.for_user(owner)
    made = [
        extract_memory(
            ingest_text(owner=owner, text=t, source="notes", occurred_at="2026-01-0%d" % (i + 1), actor=actor).memory.pk
        )
        for i, t in enumerate(FALCON)
    ]
    near = extract_memory(ingest_text(owner=owner, text=NEAR, actor=actor).memory.pk)
    upload = extract_memory(
        ingest_file(owner=owner, fileobj=io.BytesIO(PDF_TEXT), name="q1 notes.txt", source="drive", actor=actor).memory.pk
    )
    pending = ingest_text(owner=owner, text="Call the dentist about the Falcon-shaped crown.", actor=actor).memory
    failed = ingest_text(owner=owner, text="Failed extraction, input kept.", actor=actor).memory
    Memory.objects.filter(pk=failed.pk).update(status=Memory.Status.FAILED, error="provider said no")
    consolidate_owner(owner=owner, actor=actor)
    update_memory(owner=owner, memory_id=made[0].pk, changes={"importance": 0.95, "topics": ["falcon", "launch"]}, actor=actor)
    gone = extract_memory(ingest_text(owner=owner, text=GONE, actor=actor).memory.pk)
    delete_memory(owner=owner, memory_id=gone.pk, actor=actor)
    delete_memory(owner=owner, memory_id=made[1].pk, actor=actor)  # an insight's source: it turns stale
    purged = ingest_text(owner=owner, text=PURGED, actor=actor).memory
    purge_memory(owner=owner, memory_id=purged.pk, actor=actor)
    old = extract_memory(ingest_text(owner=owner, text=OLD, actor=actor).memory.pk)
    new = extract_memory(ingest_text(owner=owner, text=NEW, actor=actor).memory.pk)
    supersede_memory(old=old, new=new, actor=actor)
    # A fact that changed (marked by the update check) and one set to expire.
    paris = extract_memory(ingest_text(owner=owner, text="I live in Paris.", occurred_at="2024-03-10", actor=actor).memory.pk)
    extract_memory(ingest_text(owner=owner, text="I moved to Berlin.", occurred_at="2025-06-12", actor=actor).memory.pk)
    assert Memory.all_objects.get(pk=paris.pk).outdated_by_id is not None
    Memory.all_objects.filter(pk=made[0].pk).update(expires_at=timezone.now() + timedelta(days=30), base_importance=0.9)
    return {"made": made, "near": near, "upload": upload, "pending": pending, "failed": failed, "gone": gone}


def canonical(owner) -> dict:
    """Everything the space holds, with ids replaced by positions so two spaces compare."""
    rows = list(Memory.all_objects.filter(owner=owner).order_by("pk"))
    position = {m.pk: i for i, m in enumerate(rows)}
    referenced = set(Event.objects.filter(owner=owner, subject_type="memory").values_list("subject_id", flat=True))
    referenced |= set(RejectedContent.objects.filter(owner=owner).values_list("memory_ref", flat=True)) - {None}
    gone = {pk: f"gone{i}" for i, pk in enumerate(sorted(referenced - set(position)))}

    def ref(pk):
        return None if pk is None else position.get(pk, gone.get(pk, ("unknown", pk)))

    consolidations = list(Consolidation.all_objects.filter(owner=owner).order_by("pk"))
    c_position = {c.pk: i for i, c in enumerate(consolidations)}
    through = Consolidation.sources.through.objects

    def remap(values: dict) -> dict:
        out = dict(values)
        for key in ("duplicate_of", "superseded_by", "outdated_by"):
            if key in out:
                out[key] = ref(out[key])
        if isinstance(out.get("sources"), list):
            out["sources"] = [ref(v) for v in out["sources"]]
        return out

    def file_of(m):
        return (m.file_name, hashlib.sha256(m.original.read()).hexdigest()) if m.original else None

    return {
        "memories": [
            (
                {name: getattr(m, name) for name in (*export.MEMORY_FIELDS, *export.FACT_FIELDS)},
                ref(m.duplicate_of_id),
                ref(m.superseded_by_id),
                ref(m.outdated_by_id),
                file_of(m),
                (m.sim_band0, m.sim_band1, m.sim_band2, m.sim_band3),
            )
            for m in rows
        ],
        "consolidations": [
            (
                c.summary,
                c.insight,
                c.provider,
                c.created_at,
                c.updated_at,
                c.stale_at,
                c.retired_at,
                sorted(ref(pk) for pk in through.filter(consolidation_id=c.pk).values_list("memory_id", flat=True)),
            )
            for c in consolidations
        ],
        "links": sorted(
            (
                ref(link.from_memory_id),
                ref(link.to_memory_id),
                link.relationship,
                c_position.get(link.consolidation_id),
                link.created_at,
            )
            for link in MemoryLink.objects.filter(from_memory__owner=owner)
        ),
        "tombstones": sorted(
            (t.content_hash, t.reason, t.rejected_at, ref(t.memory_ref)) for t in RejectedContent.objects.filter(owner=owner)
        ),
        "events": [
            (
                e.subject_type,
                ref(e.subject_id) if e.subject_type == "memory" else c_position[e.subject_id],
                e.action,
                e.actor,
                e.actor_user_id == owner.pk,
                remap(e.before),
                remap(e.after),
                e.note,
                e.created_at,
            )
            for e in Event.objects.filter(owner=owner).order_by("pk")
        ],
    }


def exported(owner) -> bytes:
    return b"".join(export_space(owner=owner))


def lines_of(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def reseal(lines: list[bytes]) -> bytes:
    """Rewrite the end line so counts and checksum match the (tampered) lines before it."""
    body = lines[:-1]
    counts: dict[str, int] = {}
    for line in body:
        kind = json.loads(line)["type"]
        counts[kind] = counts.get(kind, 0) + 1
    end = {"type": "end", "counts": counts, "sha256": hashlib.sha256(b"".join(body)).hexdigest()}
    return b"".join(body) + json.dumps(end).encode() + b"\n"


def holds_nothing(owner) -> bool:
    return not (
        Memory.all_objects.filter(owner=owner).exists()
        or Event.objects.filter(owner=owner).exists()
        or RejectedContent.objects.filter(owner=owner).exists()
        or Consolidation.all_objects.filter(owner=owner).exists()
    )


def test_round_trip_into_a_fresh_space_recreates_everything(user, user_factory, settings, small_chunks):
    build_space(user)
    before = canonical(user)
    assert before["consolidations"] and before["links"] and len(before["tombstones"]) == 3  # deleted x2, purged
    assert any(m[2] is not None for m in before["memories"]) and any(m[1] is not None for m in before["memories"])
    data = exported(user)
    kinds = [json.loads(line)["type"] for line in lines_of(data)]
    assert kinds[0] == "header" and kinds[-1] == "end" and kinds.count("file_chunk") == len(PDF_TEXT) // 256 + 1

    # The exporting installation goes away entirely: its user, rows and files.
    user.delete()
    assert not Memory.all_objects.exists() and not Event.objects.exists()
    carol = user_factory("carol")
    result = import_space(owner=carol, lines=io.BytesIO(data), actor=Actor.for_command("import"))
    assert result.memories == len(before["memories"]) and result.files == 1 and result.source_user == "alice"
    assert result.events == len(before["events"]) and result.duplicates == result.refused == 0

    after = canonical(carol)
    for part in ("memories", "consolidations", "links", "tombstones"):
        assert after[part] == before[part], part
    # The history is all there, each event marked as imported and credited to no user here.
    assert after["events"] == [(*e[:3], f"imported: {e[3]}", False, *e[5:]) for e in before["events"]]
    # The copy works like the original: recall finds, tombstones refuse, the purged stays purged.
    assert recall(owner=carol, question="Who drafted the Falcon launch checklist?").memories[0].memory.raw_text == FALCON[2]
    for text in (GONE, FALCON[1], PURGED):
        with pytest.raises(RejectedContentError):
            ingest_text(owner=carol, text=text)
    # The pending memory is owed its extraction: queued after the import committed.
    assert [Memory.objects.get(pk=pk).raw_text for pk in result.pending] == ["Call the dentist about the Falcon-shaped crown."]


def test_a_damaged_or_cut_off_export_is_refused_and_imports_nothing(user, user_factory, settings, small_chunks):
    build_space(user)
    data = exported(user)
    lines = lines_of(data)
    carol = user_factory("carol")
    files_before = sorted(p.name for p in settings.MEDIA_ROOT.rglob("*") if p.is_file())
    memory_line = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "memory")
    chunk_line = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "file_chunk")
    tampered_text = lines[memory_line].replace(b"Project Falcon", b"Project Eagle", 1)
    bad_chunk = json.loads(lines[chunk_line])
    bad_chunk["data"] = "QUJD"  # valid base64, the wrong bytes
    cases = {
        "cut at a line end": (b"".join(lines[:-1]), "without its end marker"),
        "cut mid-line": (data[: len(data) // 2], "not valid JSON"),
        "a line dropped": (b"".join(lines[:3] + lines[4:]), "records"),
        "text changed": (b"".join(lines[:memory_line] + [tampered_text] + lines[memory_line + 1 :]), "checksum"),
        "file damaged, checksum redone": (
            reseal(lines[:chunk_line] + [json.dumps(bad_chunk).encode() + b"\n"] + lines[chunk_line + 1 :]),
            "incomplete or damaged",
        ),
        "not an export": (b'{"text": "some info"}\n', "not an export record"),
        "another format": (b'{"type": "header", "format": "mem0", "version": 1}\n', "not a memory export"),
        "newer version": (
            reseal([json.dumps({**json.loads(lines[0]), "version": 99}).encode() + b"\n", lines[-1]]),
            "version 99",
        ),
        "empty": (b"", "empty"),
        "garbage": (b"\x00\xff\xfe binary", "not valid JSON"),
    }
    for name, (blob, message) in cases.items():
        with pytest.raises(ImportRefused) as refused:
            import_space(owner=carol, lines=io.BytesIO(blob))
        assert message in str(refused.value), name
        assert holds_nothing(carol), name
    assert sorted(p.name for p in settings.MEDIA_ROOT.rglob("*") if p.is_file()) == files_before
    assert not list(settings.MEMORY_DATA_DIR.glob(".import-*"))


def test_importing_another_users_export_never_touches_their_space(user, other_user):
    build_space(user)
    alice_before = canonical(user)
    data = exported(user)
    result = import_space(owner=other_user, lines=io.BytesIO(data))
    assert result.memories > 0
    assert canonical(user) == alice_before
    alice_ids = set(Memory.all_objects.filter(owner=user).values_list("pk", flat=True))
    bobs = Memory.all_objects.filter(owner=other_user)
    assert not alice_ids & set(bobs.values_list("pk", flat=True))
    # Nothing of bob's points into alice's space.
    assert not MemoryLink.objects.filter(from_memory__owner=other_user, to_memory__owner=user).exists()
    assert not Consolidation.sources.through.objects.filter(consolidation__owner=other_user, memory__owner=user).exists()
    assert not Event.objects.filter(owner=other_user, subject_type="memory", subject_id__in=alice_ids).exists()


def test_into_a_space_with_memories_it_deduplicates_as_ingest_does(user, other_user):
    build_space(user)
    data = exported(user)
    # Bob already has one of these memories, and deleted another.
    kept = ingest_text(owner=other_user, text=FALCON[0]).memory
    deleted = ingest_text(owner=other_user, text=FALCON[3]).memory
    delete_memory(owner=other_user, memory_id=deleted.pk)
    kept_history = list(Event.objects.filter(subject_id=kept.pk).values_list("pk", flat=True))

    first = import_space(owner=other_user, lines=io.BytesIO(data))
    assert first.duplicates == 1 and first.refused == 1
    assert Memory.objects.filter(owner=other_user, content_hash=kept.content_hash).count() == 1
    assert not Memory.objects.filter(owner=other_user, raw_text=FALCON[3]).exists()  # bob deleted it: stays out
    assert list(Event.objects.filter(subject_id=kept.pk).values_list("pk", flat=True)) == kept_history
    # The insight over alice's Falcon memories points at bob's own copy where he had one.
    assert Consolidation.sources.through.objects.filter(consolidation__owner=other_user, memory=kept).exists()

    counts = Memory.all_objects.filter(owner=other_user).count(), Consolidation.all_objects.filter(owner=other_user).count()
    second = import_space(owner=other_user, lines=io.BytesIO(data))
    assert second.memories == second.consolidations == 0
    assert (
        Memory.all_objects.filter(owner=other_user).count(),
        Consolidation.all_objects.filter(owner=other_user).count(),
    ) == counts


def test_the_api_the_bank_page_and_the_commands(user, other_user, user_factory, signed_in, tmp_path):
    build_space(user)
    ingest_text(owner=other_user, text="Bob's only note.")
    api = Client(headers={"Authorization": f"Bearer {create_token(owner=user, name='backup')[1]}"})
    response = api.get("/api/export")
    assert response.status_code == 200 and response["Content-Type"] == "application/x-ndjson"
    assert response["Content-Disposition"].startswith('attachment; filename="memory-alice-')
    body = b"".join(response.streaming_content)
    assert body.count(b'"type":"memory"') == Memory.all_objects.filter(owner=user).count()
    assert b"Bob's only note." not in body
    assert Client().get("/api/export").status_code == 401
    # The bank page offers the same download, with the browser session.
    page = signed_in.get("/memories/").content.decode()
    assert 'href="/api/export"' in page
    assert b"".join(signed_in.get("/api/export").streaming_content).count(b'"type":"memory"') == body.count(b'"type":"memory"')

    path = tmp_path / "alice.jsonl"
    said = io.StringIO()
    call_command("export", "--user", "alice", "--output", str(path), stdout=said)
    assert "Exported alice's memory" in said.getvalue() and path.read_bytes().count(b"\n") == body.count(b"\n")
    dave = user_factory("dave")
    out = io.StringIO()
    call_command("import", str(path), "--user", "dave", stdout=out)
    assert "Imported" in out.getvalue() and "Into dave's space" in out.getvalue()
    assert Memory.all_objects.filter(owner=dave).count() == Memory.all_objects.filter(owner=user).count()

    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(path.read_bytes()[:-200])
    erin = user_factory("erin")
    with pytest.raises(CommandError, match="not valid JSON|end marker"):
        call_command("import", str(cut), "--user", "erin")
    assert holds_nothing(erin)
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("import", str(tmp_path / "missing.jsonl"), "--user", "erin")


@pytest.mark.slow
def test_a_space_moves_between_two_installations(tmp_path):
    """Two real installations, each its own database and file store: export with the command
    on one, import with the command on the other, compare what their databases hold."""
    from .procs import Service

    first, second = Service(tmp_path / "a").migrate(), Service(tmp_path / "b").migrate()
    first.make_users("alice")
    second.make_users("alice")
    note = tmp_path / "q1 notes.txt"
    note.write_bytes(PDF_TEXT)
    batch = tmp_path / "notes.jsonl"
    batch.write_text("".join(json.dumps({"text": text, "source": "notes"}) + "\n" for text in FALCON))
    first.manage("ingest", str(note), "--jsonl", str(batch), "--user", "alice")
    first.manage("consolidate", "--user", "alice")
    first.shell(
        "from memories.models import Memory\nfrom memories.services import delete_memory\n"
        f"m = Memory.objects.get(raw_text={FALCON[3]!r})\ndelete_memory(owner=m.owner, memory_id=m.pk)\n"
    )
    export = tmp_path / "alice.jsonl"
    first.manage("export", "--user", "alice", "--output", str(export))
    moved = second.manage("import", str(export), "--user", "alice")
    # No progress bar off a terminal (stderr may hold the start-up permission check: the
    # test's copied database is not 0600).
    assert "Imported 5 memories, 1 file," in moved.stdout and "\r" not in moved.stderr and "it/s" not in moved.stderr

    def holdings(service):
        return {
            "memories": service.sql(
                "select raw_text, summary, status, importance, occurred_at, created_at, deleted_at is not null, "
                "consolidated_at from memories_memory order by id"
            ),
            "links": service.sql(
                "select f.raw_text, t.raw_text, l.relationship from memories_memorylink l join memories_memory f "
                "on f.id = l.from_memory_id join memories_memory t on t.id = l.to_memory_id order by 1, 2"
            ),
            "insights": service.sql("select summary, insight, stale_at is not null from memories_consolidation order by id"),
            "tombstones": service.sql("select content_hash, reason from memories_rejectedcontent order by id"),
            "events": service.sql("select subject_type, action, actor, created_at from memories_event order by id"),
        }

    moved_in, original = holdings(second), holdings(first)
    # The history arrives marked as imported.
    original["events"] = [(kind, action, f"imported: {actor}", at) for kind, action, actor, at in original["events"]]
    assert moved_in == original
    stored = second.sql("select original from memories_memory where original != ''")[0][0]
    assert (second.data_dir / "files" / stored).read_bytes() == PDF_TEXT
    answer = second.manage("query", "Who drafted the Falcon launch checklist?", "--json", "--user", "alice").stdout
    assert json.loads(answer)["cited"]
    refused = second.manage("ingest", "--text", FALCON[3], "--user", "alice", check=False)
    assert "deleted" in refused.stdout + refused.stderr
