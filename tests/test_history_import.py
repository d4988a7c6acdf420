"""Bring your history: ChatGPT and Claude exports and Markdown vaults, written here in the
real formats (made-up people, no one's data)."""

import io
import json
import zipfile
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memories.models import Event, Memory, MemoryLink
from memories.services import answer_question, delete_memory, extract_memory
from memories.services.history_import import HistoryImportError, import_history
from memories.recall import recall

pytestmark = pytest.mark.django_db

T0 = 1_714_000_000.0  # 2024-04-24


def node(node_id, parent, children, *, role=None, parts=None, content_type="text", t=None, recipient="all", **metadata):
    """One node of a ChatGPT export's `mapping`."""
    message = None
    if role is not None:
        message = {
            "id": node_id,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": t,
            "update_time": None,
            "content": {"content_type": content_type, "parts": parts if parts is not None else []},
            "status": "finished_successfully",
            "end_turn": True,
            "weight": 1.0,
            "metadata": metadata,
            "recipient": recipient,
        }
    return {"id": node_id, "message": message, "parent": parent, "children": children}


def lisbon_conversation(*, extra_turn=False):
    """A ChatGPT conversation with a system prompt, a regenerated reply (two branches), an
    image part, a tool call and its output, and an empty reply."""
    mapping = {
        "root": node("root", None, ["sys"]),
        "sys": node("sys", "root", ["u1"], role="system", parts=[""], is_visually_hidden_from_conversation=True),
        "u1": node(
            "u1", "sys", ["a1-old", "a1"], role="user", parts=["I am planning a trip to Lisbon in May with my sister Ana."], t=T0
        ),
        "a1-old": node("a1-old", "u1", [], role="assistant", parts=["A reply the person regenerated away."], t=T0 + 5),
        "a1": node(
            "a1",
            "u1",
            ["u2"],
            role="assistant",
            parts=["Lisbon in May is warm. You should visit Sintra and eat pasteis de nata in Belem."],
            t=T0 + 10,
        ),
        "u2": node(
            "u2",
            "a1",
            ["code"],
            role="user",
            content_type="multimodal_text",
            parts=[
                {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-abc", "width": 10, "height": 10},
                "We booked the Casa do Rio hotel from 12 to 16 May.",
            ],
            t=T0 + 60,
        ),
        "code": node("code", "u2", ["tool"], role="assistant", content_type="code", parts=None, recipient="python", t=T0 + 61),
        "tool": node("tool", "code", ["empty"], role="tool", content_type="execution_output", parts=None, t=T0 + 62),
        "empty": node("empty", "tool", ["u3"], role="assistant", parts=[""], t=T0 + 63),
        "u3": node("u3", "empty", [], role="user", parts=["My knee surgery is scheduled for the third of June."], t=T0 + 120),
    }
    mapping["code"]["message"]["content"] = {"content_type": "code", "language": "python", "text": "print(1)"}
    mapping["tool"]["message"]["content"] = {"content_type": "execution_output", "text": "1"}
    current = "u3"
    if extra_turn:
        mapping["u3"]["children"] = ["a4"]
        mapping["a4"] = node("a4", "u3", [], role="assistant", parts=["Good luck with the surgery on June 3."], t=T0 + 130)
        current = "a4"
    return {
        "title": "Lisbon trip",
        "create_time": T0,
        "update_time": T0 + 200,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": current,
        "plugin_ids": None,
        "conversation_id": "conv-lisbon",
        "id": "conv-lisbon",
    }


def empty_conversation():
    return {
        "title": "New chat",
        "create_time": T0 + 500,
        "mapping": {"root": node("root", None, [])},
        "current_node": "root",
        "conversation_id": "conv-empty",
        "id": "conv-empty",
    }


def chatgpt_zip(tmp_path, conversations, name="export.zip"):
    path = tmp_path / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", json.dumps(conversations))
        zf.writestr("user.json", json.dumps({"id": "user-x"}))
        zf.writestr("chat.html", "<html></html>")
    return path


def claude_export():
    return [
        {
            "uuid": "c-bread",
            "name": "Sourdough starter",
            "created_at": "2024-03-01T10:00:00.000000Z",
            "updated_at": "2024-03-01T10:05:00.000000Z",
            "account": {"uuid": "acct-1"},
            "chat_messages": [
                {
                    "uuid": "m1",
                    "text": "My starter is called Bubbles and I feed it rye flour every morning.",
                    "content": [{"type": "text", "text": "My starter is called Bubbles and I feed it rye flour every morning."}],
                    "sender": "human",
                    "created_at": "2024-03-01T10:00:01.000000Z",
                    "attachments": [],
                    "files": [{"file_name": "jar.jpg"}],
                },
                {
                    "uuid": "m2",
                    "text": "",
                    "content": [
                        {"type": "text", "text": "Rye flour makes a lively starter; keep Bubbles at room temperature."},
                        {"type": "tool_use", "name": "web_search", "input": {"query": "rye starter"}},
                    ],
                    "sender": "assistant",
                    "created_at": "2024-03-01T10:00:09.000000Z",
                    "attachments": [],
                    "files": [],
                },
                {"uuid": "m3", "text": "   ", "content": [], "sender": "human", "created_at": "2024-03-01T10:01:00Z"},
            ],
        }
    ]


def write_json(tmp_path, data, name="conversations.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# --- ChatGPT --------------------------------------------------------------------------------


def test_chatgpt_export_follows_the_kept_branch_and_says_what_it_skipped(user, tmp_path):
    result = import_history(owner=user, kind="chatgpt", path=chatgpt_zip(tmp_path, [lisbon_conversation(), empty_conversation()]))

    turns = list(Memory.objects.filter(owner=user).order_by("pk"))
    assert [m.metadata["message_id"] for m in turns] == ["u1", "a1", "u2", "u3"]
    assert [m.source for m in turns] == [f"chatgpt:conv-lisbon:{n}" for n in (1, 2, 3, 4)]
    assert (result.conversations, result.conversations_new, result.messages) == (2, 1, 4)
    assert result.skipped == {
        "system message": 1,
        "on a branch that was not kept": 1,
        "image, file or other non-text part": 1,
        "call to a tool": 1,
        "tool output": 1,
        "empty message": 1,
        "conversation with nothing said in it": 1,
    }
    assert "4 messages from 1 conversation came in" in result.summary and "1 system message" in result.summary

    person, reply = turns[0], turns[1]
    assert person.raw_text == "I am planning a trip to Lisbon in May with my sister Ana."
    assert person.occurred_at == datetime.fromtimestamp(T0, tz=UTC)
    assert person.metadata["conversation_title"] == "Lisbon trip" and person.metadata["role"] == "user"
    assert "said_by" not in person.metadata and person.status == Memory.Status.PENDING
    # The assistant's words are stored in its name, worth less than the person's.
    assert reply.raw_text.startswith("ChatGPT: Lisbon in May is warm.")
    assert reply.metadata["said_by"] == "ChatGPT" and reply.importance < person.importance
    assert turns[2].raw_text == "We booked the Casa do Rio hotel from 12 to 16 May."
    assert Event.objects.filter(subject_id=person.pk, action=Event.Action.CREATED).exists()


def test_reimport_adds_nothing_and_a_newer_export_adds_only_what_is_new(user, tmp_path):
    import_history(owner=user, kind="chatgpt", path=write_json(tmp_path, [lisbon_conversation()]))
    again = import_history(owner=user, kind="chatgpt", path=write_json(tmp_path, [lisbon_conversation()]))
    assert (again.messages, again.already) == (0, 4)
    assert Memory.objects.filter(owner=user).count() == 4

    newer = import_history(owner=user, path=chatgpt_zip(tmp_path, [lisbon_conversation(extra_turn=True)]))
    assert (newer.kind, newer.messages, newer.already) == ("chatgpt", 1, 4)
    added = Memory.objects.get(metadata__message_id="a4")
    assert added.source == "chatgpt:conv-lisbon:5" and added.metadata["said_by"] == "ChatGPT"


def test_a_deleted_message_stays_deleted_on_reimport(user, tmp_path):
    path = write_json(tmp_path, [lisbon_conversation()])
    import_history(owner=user, kind="chatgpt", path=path)
    knee = Memory.objects.get(metadata__message_id="u3")
    delete_memory(owner=user, memory_id=knee.pk)
    result = import_history(owner=user, kind="chatgpt", path=path)
    assert result.messages == 0 and result.skipped["deleted before (it stays deleted)"] == 1


def test_a_damaged_export_imports_nothing_and_says_where_it_broke(user, tmp_path):
    whole = json.dumps([lisbon_conversation(), lisbon_conversation() | {"id": "c2", "conversation_id": "c2"}])
    path = tmp_path / "conversations.json"
    path.write_text(whole[: len(whole) - 300], encoding="utf-8")  # cut short inside the second

    with pytest.raises(HistoryImportError) as caught:
        import_history(owner=user, kind="chatgpt", path=path)
    message = str(caught.value)
    assert "damaged near byte" in message and "after conversation 1 ('Lisbon trip')" in message
    assert "Nothing was imported" in message
    assert not Memory.all_objects.filter(owner=user).exists()


def test_a_conversation_of_the_wrong_shape_is_named(user, tmp_path):
    broken = lisbon_conversation()
    del broken["mapping"]
    path = write_json(tmp_path, [lisbon_conversation() | {"id": "ok", "conversation_id": "ok"}, broken])
    with pytest.raises(HistoryImportError, match="conversation 2 has no mapping"):
        import_history(owner=user, kind="chatgpt", path=path)
    assert not Memory.all_objects.filter(owner=user).exists()


def test_a_zip_with_a_damaged_member_imports_nothing(user, tmp_path):
    path = chatgpt_zip(tmp_path, [lisbon_conversation()] * 3)
    data = bytearray(path.read_bytes())
    start = data.find(b"PK\x03\x04") + 30 + len("conversations.json")
    data[start + 40 : start + 60] = b"\x00" * 20  # the deflated stream, garbled
    path.write_bytes(bytes(data))
    with pytest.raises(HistoryImportError, match="damaged"):
        import_history(owner=user, kind="chatgpt", path=path)
    assert not Memory.all_objects.filter(owner=user).exists()


def test_small_batches_keep_each_conversation_in_order(user, tmp_path):
    conversations = [lisbon_conversation() | {"id": f"c{i}", "conversation_id": f"c{i}"} for i in range(5)]
    result = import_history(owner=user, kind="chatgpt", path=write_json(tmp_path, conversations), batch_size=6)
    assert (result.conversations_new, result.messages) == (5, 20)
    for i in range(5):
        ids = list(Memory.objects.filter(source__startswith=f"chatgpt:c{i}:").order_by("pk").values_list("pk", flat=True))
        assert ids == list(range(ids[0], ids[0] + 4))  # consecutive: recall's neighbours find them


# --- Claude ---------------------------------------------------------------------------------


def test_claude_export(user, tmp_path):
    result = import_history(owner=user, path=write_json(tmp_path, claude_export()))
    assert result.kind == "claude" and result.messages == 2
    person, reply = Memory.objects.filter(owner=user).order_by("pk")
    assert person.source == "claude:c-bread:1" and person.metadata["message_id"] == "m1"
    assert person.occurred_at == datetime(2024, 3, 1, 10, 0, 1, tzinfo=UTC)
    assert person.metadata["conversation_title"] == "Sourdough starter"
    assert reply.raw_text == "Claude: Rye flour makes a lively starter; keep Bubbles at room temperature."
    assert reply.metadata["said_by"] == "Claude"
    assert result.skipped == {"attachment": 1, "image, file or other non-text part": 1, "empty message": 1}


# --- Markdown / Obsidian --------------------------------------------------------------------


def make_vault(root):
    (root / ".obsidian").mkdir(parents=True)
    (root / ".obsidian" / "app.json").write_text("{}")
    (root / "people").mkdir()
    (root / "people" / "Ana.md").write_text(
        "---\naliases: [Ana Costa, sis]\ntags: [family]\ndate: 2023-05-02\n---\nAna is my sister. She lives in Porto and teaches chemistry.\n",
        encoding="utf-8",
    )
    sections = "\n\n".join(f"## Day {n}\n\n" + f"On day {n} we walked around Alfama and saw the river. " * 50 for n in (1, 2, 3))
    (root / "Lisbon trip.md").write_text(
        f"---\ntags: travel, lisbon\ncreated: 2024-05-20T09:30:00\n---\n# Lisbon trip\n\nWent with [[Ana|my sister]] and [[sis]]."
        f" Photos: ![[lisbon.jpg]]. See also [[Packing list]] and [[Ana#Porto]].\n\n{sections}\n",
        encoding="utf-8",
    )
    (root / "lisbon.jpg").write_bytes(b"\xff\xd8\xff")
    (root / "Empty.md").write_text("---\ntags: [x]\n---\n\n", encoding="utf-8")


def test_markdown_vault(user, tmp_path):
    vault = tmp_path / "vault"
    make_vault(vault)
    result = import_history(owner=user, kind="markdown", path=vault)

    assert (result.notes, result.note_parts) == (2, 4)
    ana = Memory.objects.get(source="markdown:people/Ana.md")
    assert ana.raw_text.startswith("Ana\n\nAna is my sister.")
    assert ana.metadata["note_tags"] == ["family"] and ana.metadata["aliases"] == ["Ana Costa", "sis"]
    assert ana.occurred_at.date().isoformat() == "2023-05-02"

    parts = list(Memory.objects.filter(source__startswith="markdown:Lisbon trip.md:").order_by("pk"))
    assert [m.source for m in parts] == [f"markdown:Lisbon trip.md:{n}" for n in (1, 2, 3)]
    assert parts[0].raw_text.startswith("# Lisbon trip\n\nWent with my sister and sis.")
    assert parts[1].raw_text.startswith("Lisbon trip\n\n## Day 2")
    assert parts[0].metadata["note_tags"] == ["travel", "lisbon"]

    # [[Ana]], [[sis]] (an alias) and [[Ana#Porto]] all name Ana's note: one link.
    assert list(MemoryLink.objects.values_list("from_memory_id", "to_memory_id", "relationship")) == [
        (parts[0].pk, ana.pk, "links to [[Ana]]")
    ]
    assert result.links == 1
    assert result.skipped == {"not a Markdown note": 1, "empty note": 1, "link to a note that is not in the vault": 1}

    again = import_history(owner=user, kind="markdown", path=vault)
    assert (again.note_parts, again.links, again.already) == (0, 0, 4)

    # A changed note: the new version comes in, the old one is superseded.
    (vault / "people" / "Ana.md").write_text("Ana is my sister. She moved to Braga.\n", encoding="utf-8")
    changed = import_history(owner=user, kind="markdown", path=vault)
    assert (changed.note_parts, changed.replaced) == (1, 1)
    assert Memory.objects.get(source="markdown:people/Ana.md").raw_text.endswith("She moved to Braga.")
    assert Memory.all_objects.get(pk=ana.pk).superseded_by is not None


def test_zipped_vault_and_markdown_by_sniffing(user, tmp_path):
    vault = tmp_path / "vault"
    make_vault(vault)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for path in sorted(vault.rglob("*")):
            if path.is_file():
                zf.write(path, f"My Vault/{path.relative_to(vault).as_posix()}")
    buffer.seek(0)
    result = import_history(owner=user, fileobj=buffer, name="vault.zip")
    assert result.kind == "markdown" and result.notes == 2 and result.links == 1
    assert Memory.objects.filter(source="markdown:My Vault/people/Ana.md").exists()


# --- recall and answers ---------------------------------------------------------------------


def imported_and_extracted(user, tmp_path):
    result = import_history(owner=user, kind="chatgpt", path=write_json(tmp_path, [lisbon_conversation()]))
    for pk in result.new_ids:
        extract_memory(pk)
    return result


def test_a_question_about_an_imported_conversation_recalls_it(user, tmp_path):
    imported_and_extracted(user, tmp_path)
    found = recall(owner=user, question="When is my knee surgery?")
    assert found.memories[0].memory.metadata["message_id"] == "u3"
    hotel = recall(owner=user, question="Which hotel did we book in Lisbon?")
    assert hotel.memories[0].memory.raw_text.startswith("We booked the Casa do Rio hotel")
    # The turns are a source with positions: the ones around the hit come with it.
    hit = hotel.memories[0].memory.pk
    after = next(r for r in hotel.memories if r.memory.metadata["message_id"] == "u3")
    assert f"same conversation as #{hit}" in after.reasons


def test_an_assistant_reply_is_not_quoted_as_the_persons_fact(user, tmp_path):
    imported_and_extracted(user, tmp_path)
    reply = Memory.objects.get(metadata__message_id="a1")
    assert reply.status == Memory.Status.READY and reply.importance <= 0.3

    answer = answer_question(owner=user, question="What should I visit near Lisbon, Sintra?").answer
    assert f"[Memory {reply.pk}]" in answer
    quoted = [line for line in answer.splitlines() if f"[Memory {reply.pk}]" in line]
    assert all("ChatGPT said" in line for line in quoted), answer

    context = recall(owner=user, question="Sintra").to_context()
    assert "said by ChatGPT" in context.render()


# --- the command ----------------------------------------------------------------------------


def test_command_imports_and_extracts(user, tmp_path):
    out, err = StringIO(), StringIO()
    call_command(
        "ingest",
        "--from",
        "chatgpt",
        str(chatgpt_zip(tmp_path, [lisbon_conversation()])),
        "--user",
        "alice",
        stdout=out,
        stderr=err,
    )
    assert "4 messages from 1 conversation came in" in out.getvalue()
    assert set(Memory.objects.values_list("status", flat=True)) == {"ready"}

    with pytest.raises(CommandError, match="damaged"):
        (tmp_path / "broken.json").write_text('[{"id": "x", "mapping": {}', encoding="utf-8")
        call_command("ingest", "--from", "claude", str(tmp_path / "broken.json"), "--user", "alice", stdout=out, stderr=err)


# --- the ingest page and the API ------------------------------------------------------------


def upload(path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(path.name, path.read_bytes())


def test_ingest_page_imports_an_export_and_shows_what_came_in(
    signed_in, user, tmp_path, sync_tasks, django_capture_on_commit_callbacks, settings
):
    from tests.htmx import hx

    page = signed_in.get("/")
    assert b'id="history-form"' in page.content
    export = chatgpt_zip(tmp_path, [lisbon_conversation(), empty_conversation()])

    # A worker imports it (inline here) and queues the extraction of each memory.
    with django_capture_on_commit_callbacks(execute=True):
        response = hx(signed_in, "post", "/ingest/history/", {"export": upload(export)})
    assert response.status_code == 200
    card = response.content.decode()
    assert 'id="history-card" data-state="done"' in card and "hx-trigger" not in card
    assert "4 messages from 1 conversation came in" in card
    assert "1 call to a tool" in card and "1 image, file or other non-text part" in card
    assert set(Memory.objects.filter(owner=user).values_list("status", flat=True)) == {"ready"}
    assert not list((settings.MEMORY_DATA_DIR / "imports").rglob("*.zip"))  # the upload is not kept

    again = signed_in.post("/ingest/history/", {"export": upload(export)})
    assert again.status_code == 302
    status = signed_in.get(again["Location"])
    assert "4 already here from an earlier import" in status.content.decode()

    damaged = tmp_path / "conversations.json"
    damaged.write_text('[{"id": "c", "mapping": {}, "title": "x"}, {"id": ', encoding="utf-8")
    failed = hx(signed_in, "post", "/ingest/history/", {"export": upload(damaged)}).content.decode()
    assert 'data-state="failed"' in failed and "damaged near byte" in failed and "Nothing was imported" in failed


def test_ingest_page_follows_an_import_a_worker_has_not_run_yet(signed_in, user, tmp_path, bob_client):
    from tests.htmx import hx

    card = hx(signed_in, "post", "/ingest/history/", {"export": upload(write_json(tmp_path, claude_export()))})
    job_id = card.content.decode().split("/ingest/history/")[1].split("/")[0]
    assert 'data-state="queued"' in card.content.decode() and 'hx-trigger="every 2s"' in card.content.decode()
    # Another person cannot read it.
    assert bob_client.get(f"/ingest/history/{job_id}/").status_code == 404

    from memories.services.history_jobs import run_import

    run_import(job_id)
    done = hx(signed_in, "get", f"/ingest/history/{job_id}/").content.decode()
    assert 'data-state="done"' in done and "2 messages from 1 conversation came in" in done


def test_api_imports_an_export(user, tmp_path, client, sync_tasks):
    from memories.services.tokens import create_token

    token = create_token(owner=user, name="test")[1]
    headers = {"Authorization": f"Bearer {token}"}
    path = write_json(tmp_path, claude_export())
    first = client.post("/api/ingest/history", {"file": upload(path)}, headers=headers)
    assert first.status_code == 202, first.content
    job = first.json()
    assert job["state"] == "done"
    body = job["result"]
    assert (body["kind"], body["messages"], body["conversations"]) == ("claude", 2, 1)
    assert body["skipped"]["attachment"] == 1
    status = client.get(f"/api/ingest/history/{job['id']}", headers=headers)
    assert status.status_code == 200 and status.json()["result"] == body
    again = client.post("/api/ingest/history", {"file": upload(path), "kind": "claude"}, headers=headers).json()
    assert again["result"]["already"] == 2 and again["result"]["messages"] == 0

    wrong = client.post("/api/ingest/history", {"file": upload(path), "kind": "chatgpt"}, headers=headers).json()
    assert wrong["state"] == "failed" and "is this a ChatGPT export?" in wrong["error"]
    assert client.post("/api/ingest/history", {}, headers=headers).status_code == 422
    assert client.get("/api/ingest/history/nope", headers=headers).status_code == 404


def test_a_zipped_vault_damaged_in_its_last_note_imports_nothing(user, tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("vault/a.md", "The first note is fine.")
        zf.writestr("vault/z.md", "The last note gets a garbled byte.")
    data = bytearray(buffer.getvalue())
    at = data.find(b"garbled")
    data[at] ^= 0xFF  # the stored bytes no longer match the member's checksum
    with pytest.raises(HistoryImportError, match="z.md in vault.zip is damaged"):
        import_history(owner=user, fileobj=io.BytesIO(bytes(data)), name="vault.zip", kind="markdown")
    assert not Memory.all_objects.filter(owner=user).exists()

    with pytest.raises(HistoryImportError, match="not a zip file"):
        import_history(owner=user, fileobj=io.BytesIO(b"# just a note"), name="note.md", kind="markdown")


# --- odd shapes ------------------------------------------------------------------------------

ODD = [None, 0, -1, 1e308, True, "", "x", [], [1], {}, {"a": 1}, [{"content_type": "text"}]]


def mutations(value, rng, count):
    """`count` copies of `value`, each with one of its values (anywhere inside) replaced by an
    odd one: a field of the wrong type, missing or empty, as a damaged or future export has."""

    def paths(v, at=()):
        yield at
        if isinstance(v, dict):
            for k, child in v.items():
                yield from paths(child, (*at, k))
        elif isinstance(v, list):
            for i, child in enumerate(v):
                yield from paths(child, (*at, i))

    every = list(paths(value))[1:]
    for _ in range(count):
        copy = json.loads(json.dumps(value))
        *parent, last = rng.choice(every)
        target = copy
        for step in parent:
            target = target[step]
        target[last] = rng.choice(ODD)
        yield copy


@pytest.mark.parametrize("kind", ["chatgpt", "claude"])
def test_odd_shapes_are_read_or_refused_as_damaged_never_a_crash(user, kind):
    import random

    from memories.extract.chat_exports import conversations
    from memories.extract.history import DamagedExport

    rng = random.Random(30)
    base = [lisbon_conversation()] if kind == "chatgpt" else claude_export()
    read = 0
    for variant in mutations(base, rng, 400):
        try:
            read += len(list(conversations(kind, io.BytesIO(json.dumps(variant).encode()), "conversations.json")))
        except DamagedExport:
            pass
    assert read > 100  # most odd values are in fields that can be done without
    for variant in list(mutations(base, rng, 20)):
        try:
            import_history(owner=user, kind=kind, fileobj=io.BytesIO(json.dumps(variant).encode()), name="c.json")
        except HistoryImportError:
            pass
