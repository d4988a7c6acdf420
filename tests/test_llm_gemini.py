"""The Gemini provider through the real google-genai client against a fake Gemini server
on 127.0.0.1, driven through the real service flows."""

import base64
import io
import json

import pytest

from memories.llm import gemini
from memories.models import Consolidation, Memory, MemoryLink
from memories.services import answer_question, consolidate_owner, extract_memory, ingest_file, ingest_text, retry_memory
from tests.fake_model_servers import FakeGemini, inline_parts, text_of_request
from tests.samples import png_bytes, wav_bytes

EXTRACTED = {
    "summary": "Lunch with Priya Nair at Blue Fin to plan the Q3 launch.",
    "entities": ["Priya Nair", "Blue Fin"],
    "topics": ["launch", "planning"],
    "importance": 0.8,
    "occurred_at": "2024-05-14T12:30:00",
}


def test_text_becomes_ready_memory_with_structured_output(user, fake_gemini):
    fake_gemini.enqueue_json(EXTRACTED)
    text = "Lunch with Priya Nair at Blue Fin on 14 May about the Q3 launch."
    memory = ingest_text(owner=user, text=text, source="note").memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.READY
    assert memory.summary == EXTRACTED["summary"]
    assert memory.entities == ["Priya Nair", "Blue Fin"]
    assert memory.topics == ["launch", "planning"]
    assert memory.importance == pytest.approx(0.8)
    assert (memory.occurred_at.year, memory.occurred_at.month, memory.occurred_at.day) == (2024, 5, 14)
    assert memory.provider == "gemini (gemini-test)"
    (call,) = fake_gemini.generate_calls()
    assert call.route == "/v1beta/models/gemini-test:generateContent"
    assert call.headers["x-goog-api-key"] == "test-key"
    assert "Lunch with Priya Nair at Blue Fin on 14 May" in text_of_request(call)
    body = call.json()
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    assert set(body["generationConfig"]["responseSchema"]["properties"]) == {
        "summary",
        "entities",
        "topics",
        "importance",
        "occurred_at",
    }
    assert "never instructions" in body["systemInstruction"]["parts"][0]["text"]


def test_given_occurred_at_wins_over_the_models_date(user, fake_gemini):
    fake_gemini.enqueue_json(EXTRACTED)
    memory = ingest_text(owner=user, text="Something dated.", occurred_at="2023-01-02").memory
    memory = extract_memory(memory.pk)
    assert memory.status == Memory.Status.READY
    assert memory.occurred_at.year == 2023


def test_file_bytes_travel_inline(user, fake_gemini):
    data = png_bytes()
    fake_gemini.enqueue_json({**EXTRACTED, "summary": "A red square.", "occurred_at": None})
    memory = ingest_file(owner=user, fileobj=io.BytesIO(data), name="square.png").memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.READY
    assert memory.summary == "A red square."
    (call,) = fake_gemini.generate_calls()
    assert inline_parts(call) == [{"mimeType": "image/png", "data": data}]
    assert "square.png" in text_of_request(call)
    assert not fake_gemini.calls("/files"), "a small file must not go through the Files API"


def test_large_file_goes_through_files_api_and_is_deleted(user, fake_gemini, monkeypatch):
    monkeypatch.setattr(gemini, "INLINE_LIMIT_BYTES", 1024)
    fake_gemini.file_states = ["PROCESSING", "PROCESSING", "ACTIVE"]
    data = wav_bytes()
    assert len(data) > 1024
    fake_gemini.enqueue_json({**EXTRACTED, "summary": "A test tone.", "occurred_at": None})
    memory = ingest_file(owner=user, fileobj=io.BytesIO(data), name="memo.wav").memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.READY, memory.error
    ((name, stored),) = fake_gemini.files.items()
    assert stored["data"] == data
    assert stored["polls"] >= 2, "the provider waits until the file is ACTIVE"
    assert stored["deleted"]
    (call,) = fake_gemini.generate_calls()
    assert not inline_parts(call)
    file_parts = [p["fileData"] for c in call.json()["contents"] for p in c["parts"] if "fileData" in p]
    assert len(file_parts) == 1
    assert (file_parts[0].get("fileUri") or file_parts[0].get("file_uri")).endswith(name)
    methods = [(r.method, r.route) for r in fake_gemini.requests]
    assert methods.index(("DELETE", f"/v1beta/{name}")) > methods.index(("POST", call.route))


def test_file_over_20_mb_is_uploaded_in_chunks_not_inlined(user, fake_gemini, tmp_path):
    # A real size over the inline limit: the SDK sends it as several resumable-upload chunks.
    header = wav_bytes(seconds=100 / 8000)
    data = header + bytes(range(256)) * ((21 * 1024 * 1024) // 256)
    assert len(data) > gemini.INLINE_LIMIT_BYTES
    fake_gemini.file_states = ["ACTIVE"]
    fake_gemini.enqueue_json({**EXTRACTED, "summary": "A long recording.", "occurred_at": None})
    memory = ingest_file(owner=user, fileobj=io.BytesIO(data), name="long.wav").memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.READY, memory.error
    ((_, stored),) = fake_gemini.files.items()
    assert stored["data"] == data and stored["deleted"]
    chunks = [r for r in fake_gemini.requests if "upload_id=" in r.path]
    assert len(chunks) >= 3
    (call,) = fake_gemini.generate_calls()
    assert not inline_parts(call)
    assert len(call.body) < 100_000, "the request carries a file reference, not the bytes"


def test_uploaded_file_is_deleted_even_when_generation_fails(user, fake_gemini, monkeypatch, waits):
    monkeypatch.setattr(gemini, "INLINE_LIMIT_BYTES", 1024)
    fake_gemini.file_states = ["ACTIVE"]
    for _ in range(3):
        fake_gemini.enqueue_error(503, "overloaded", api_status="UNAVAILABLE")
    memory = ingest_file(owner=user, fileobj=io.BytesIO(wav_bytes()), name="memo.wav").memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.FAILED
    ((_, stored),) = fake_gemini.files.items()
    assert stored["deleted"]


def test_failed_file_processing_is_a_clear_failure(user, fake_gemini, monkeypatch):
    monkeypatch.setattr(gemini, "INLINE_LIMIT_BYTES", 1024)
    fake_gemini.file_states = ["PROCESSING", "FAILED"]
    memory = ingest_file(owner=user, fileobj=io.BytesIO(wav_bytes()), name="memo.wav").memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.FAILED
    assert "could not process the uploaded file memo.wav" in memory.error
    assert not fake_gemini.generate_calls()


def test_429_then_success_is_retried_honoring_retry_after(user, fake_gemini, waits):
    fake_gemini.enqueue_error(429, "Resource has been exhausted", api_status="RESOURCE_EXHAUSTED", headers={"Retry-After": "7"})
    fake_gemini.enqueue_json(EXTRACTED)
    memory = ingest_text(owner=user, text="Call the dentist on Friday.").memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.READY
    assert len(fake_gemini.generate_calls()) == 2
    assert waits == [7.0]


def test_timeout_then_success_is_retried(user, fake_gemini, settings, waits):
    settings.MEMORY_LLM_TIMEOUT_SECONDS = 0.5
    fake_gemini.enqueue_json(EXTRACTED, delay=3)
    fake_gemini.enqueue_json(EXTRACTED)
    memory = ingest_text(owner=user, text="Slow server day.").memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.READY
    assert len(waits) == 1


def test_500_after_retries_leaves_failed_memory_with_input_kept(user, fake_gemini, waits):
    for _ in range(3):
        fake_gemini.enqueue_error(500, "Internal error encountered.", api_status="INTERNAL")
    text = "The boiler code is 4471; the plumber is Sam Ortiz."
    memory = ingest_text(owner=user, text=text).memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.FAILED
    assert memory.raw_text == text
    assert "3 attempts" in memory.error and "HTTP 500" in memory.error and "Internal error" in memory.error
    assert "test-key" not in memory.error
    assert len(fake_gemini.generate_calls()) == 3  # MEMORY_LLM_MAX_RETRIES = 2
    assert len(waits) == 2

    # The kept input can be extracted again once the model is back.
    fake_gemini.enqueue_json(EXTRACTED)
    retry_memory(owner=user, memory_id=memory.pk)
    assert extract_memory(memory.pk).status == Memory.Status.READY


@pytest.mark.parametrize(
    "reply, expected",
    [
        (FakeGemini.generate_body('{"summary": "Lunch with Pri'), "does not match the expected shape"),
        (FakeGemini.generate_body('{"summary": "x", "entities": [', finish_reason="MAX_TOKENS"), "cut off"),
        (FakeGemini.generate_body(json.dumps({"summary": "no other fields"})), "does not match the expected shape"),
        ({"promptFeedback": {"blockReason": "SAFETY"}}, "blocked the request (SAFETY)"),
        ({"candidates": [{"finishReason": "SAFETY", "index": 0}]}, "safety"),
        ({"candidates": []}, "no candidates"),
    ],
    ids=["malformed", "truncated", "wrong-shape", "prompt-blocked", "reply-blocked", "no-candidates"],
)
def test_unusable_reply_leaves_failed_memory(user, fake_gemini, waits, reply, expected):
    fake_gemini.enqueue(200, reply)
    text = "Remember the spare key is under the blue pot."
    memory = ingest_text(owner=user, text=text).memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.FAILED
    assert memory.raw_text == text
    assert expected in memory.error
    assert len(fake_gemini.generate_calls()) == 1, "a bad reply is not retried"


def test_client_error_is_not_retried(user, fake_gemini, waits):
    fake_gemini.enqueue_error(400, "API key not valid. Please pass a valid API key.", api_status="INVALID_ARGUMENT")
    memory = extract_memory(ingest_text(owner=user, text="A note.").memory.pk)
    assert memory.status == Memory.Status.FAILED
    assert "HTTP 400" in memory.error and "API key not valid" in memory.error
    assert len(fake_gemini.generate_calls()) == 1
    assert waits == []


def test_missing_key_fails_the_memory_without_a_request(user, fake_gemini, settings):
    settings.GEMINI_API_KEY = ""
    memory = extract_memory(ingest_text(owner=user, text="A note.").memory.pk)
    assert memory.status == Memory.Status.FAILED
    assert "GEMINI_API_KEY" in memory.error
    assert fake_gemini.requests == []


def _offline_memories(settings, memory_factory, texts):
    settings.MEMORY_LLM_PROVIDER = "offline"
    made = [memory_factory(t) for t in texts]
    settings.MEMORY_LLM_PROVIDER = "gemini"
    return made


def test_consolidation_writes_insight_and_links(user, settings, fake_gemini, memory_factory):
    a, b, c = _offline_memories(
        settings,
        memory_factory,
        ["Priya leads the Q3 launch.", "The Q3 launch slipped to October.", "Bought oat milk."],
    )
    fake_gemini.enqueue_json(
        {
            "summary": "Launch planning and groceries.",
            "insight": "The Q3 launch depends on Priya and is already late.",
            "connections": [
                {"from_id": a.pk, "to_id": b.pk, "relationship": "same launch"},
                {"from_id": a.pk, "to_id": 999_999, "relationship": "invented id"},
            ],
        }
    )

    outcome = consolidate_owner(owner=user)

    (consolidation,) = outcome.consolidations
    assert consolidation.insight == "The Q3 launch depends on Priya and is already late."
    assert consolidation.provider == "gemini (gemini-test)"
    # The two launch notes are grouped by closeness; the grocery note, close to neither, waits.
    assert set(consolidation.sources.values_list("pk", flat=True)) == {a.pk, b.pk}
    assert list(MemoryLink.objects.values_list("from_memory_id", "to_memory_id", "relationship")) == [(a.pk, b.pk, "same launch")]
    assert list(Memory.objects.filter(pk__in=[a.pk, b.pk, c.pk], consolidated_at__isnull=True)) == [c]
    (call,) = fake_gemini.generate_calls()
    sent = text_of_request(call)
    assert f"[Memory {a.pk}]" in sent and f"[Memory {b.pk}]" in sent and f"[Memory {c.pk}]" not in sent
    assert "connections" in call.json()["generationConfig"]["responseSchema"]["properties"]


def test_consolidation_failure_is_recorded_and_nothing_is_marked(user, settings, fake_gemini, memory_factory, waits):
    _offline_memories(settings, memory_factory, ["One thing.", "Another thing."])
    fake_gemini.enqueue(200, FakeGemini.generate_body("not json at all"))

    outcome = consolidate_owner(owner=user)

    assert outcome.consolidations == []
    assert "does not match" in outcome.run.error
    assert Consolidation.objects.count() == 0
    assert Memory.objects.filter(consolidated_at__isnull=True).count() == 2


def test_answer_cites_context_and_foreign_citations_are_stripped(user, other_user, settings, fake_gemini, memory_factory):
    mine, _ = _offline_memories(settings, memory_factory, ["The spare key is under the blue pot.", "Bins go out on Tuesday."])
    settings.MEMORY_LLM_PROVIDER = "offline"
    theirs = memory_factory("Bob's locker code is 1234.", owner=other_user)
    settings.MEMORY_LLM_PROVIDER = "gemini"
    fake_gemini.enqueue_text(f"The spare key is under the blue pot [Memory {mine.pk}]. Also see [Memory {theirs.pk}].")

    result = answer_question(owner=user, question="Where is the spare key?", strategy="recent")

    assert f"[Memory {mine.pk}]" in result.answer
    assert f"[Memory {theirs.pk}]" not in result.answer
    assert result.cited == [mine.pk]
    assert result.provider == "gemini (gemini-test)"
    (call,) = fake_gemini.generate_calls()
    sent = text_of_request(call)
    assert "Where is the spare key?" in sent
    assert f"[Memory {mine.pk}]" in sent and "Bob's locker" not in sent
    assert "responseSchema" not in call.json().get("generationConfig", {})
    assert "only the context" in call.json()["systemInstruction"]["parts"][0]["text"]


def test_reextract_reads_files_the_offline_engine_could_only_describe(user, settings, fake_gemini):
    from django.core.management import call_command

    settings.MEMORY_LLM_PROVIDER = "offline"
    photo = ingest_file(owner=user, fileobj=io.BytesIO(png_bytes()), name="square.png").memory
    photo = extract_memory(photo.pk)
    assert photo.metadata["needs_model"] and photo.provider.startswith("offline")

    settings.MEMORY_LLM_PROVIDER = "gemini"
    fake_gemini.enqueue_json({**EXTRACTED, "summary": "A red square on white.", "occurred_at": None})
    out = io.StringIO()
    call_command("reextract", "--user", "alice", stdout=out, stderr=io.StringIO())
    photo.refresh_from_db()
    assert photo.summary == "A red square on white." and photo.provider == "gemini (gemini-test)"
    assert "1 memories re-extracted." in out.getvalue()
    (call,) = fake_gemini.generate_calls()
    assert base64.b64encode(png_bytes()).decode() in call.body.decode()


def test_circuit_opens_when_the_model_is_down_and_work_waits_for_it(
    user, fake_gemini, waits, monkeypatch, sync_tasks, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.utils import timezone

    from memories.llm import circuit
    from memories.services import resume_stuck

    for _ in range(3 * 3):
        fake_gemini.enqueue_error(503, "The model is overloaded.", api_status="UNAVAILABLE")
    for i in range(3):
        assert extract_memory(ingest_text(owner=user, text=f"note {i} while down").memory.pk).status == Memory.Status.FAILED
    assert circuit.is_open("gemini")
    calls_so_far = len(fake_gemini.generate_calls())

    # While open, new input is kept pending and the model is not called.
    waiting = extract_memory(ingest_text(owner=user, text="arrives during the outage").memory.pk)
    assert waiting.status == Memory.Status.PENDING and len(fake_gemini.generate_calls()) == calls_so_far

    # Cooldown over and the model is back: the sweeper finishes what waited.
    monkeypatch.setattr(circuit, "COOLDOWN_SECONDS", 0)
    circuit.record_failure("gemini", "still counting")  # re-arms with the zero cooldown
    assert not circuit.is_open("gemini")
    fake_gemini.enqueue_json(EXTRACTED)
    Memory.objects.filter(pk=waiting.pk).update(updated_at=timezone.now() - timedelta(minutes=30))
    with django_capture_on_commit_callbacks(execute=True):
        assert resume_stuck() == [waiting.pk]
    waiting.refresh_from_db()
    assert waiting.status == Memory.Status.READY and circuit.state("gemini")["failures"] == 0


def test_a_failed_reextract_keeps_the_earlier_extraction_in_recall(user, settings, fake_gemini, waits):
    from django.core.management import call_command

    from memories.models import Event
    from memories.recall import recall

    settings.MEMORY_LLM_PROVIDER = "offline"
    memory = extract_memory(ingest_text(owner=user, text="The spare key is under the blue flower pot.").memory.pk)
    kept = (memory.summary, memory.entities, memory.topics, memory.provider)
    assert memory.pk in recall(owner=user, question="Where is the spare key?", strategy="hybrid").memory_ids

    settings.MEMORY_LLM_PROVIDER = "gemini"
    fake_gemini.enqueue_error(400, "The request is invalid.", api_status="INVALID_ARGUMENT")
    out = io.StringIO()
    call_command("reextract", str(memory.pk), "--user", "alice", stdout=out, stderr=io.StringIO())
    memory.refresh_from_db()
    assert memory.status == Memory.Status.READY
    assert (memory.summary, memory.entities, memory.topics, memory.provider) == kept
    assert "Re-extraction failed" in memory.error and "earlier extraction is kept" in memory.error
    assert Event.objects.filter(subject_id=memory.pk, action=Event.Action.FAILED).exists()
    assert memory.pk in recall(owner=user, question="Where is the spare key?", strategy="hybrid").memory_ids

    fake_gemini.enqueue_json({**EXTRACTED, "summary": "Spare key: under the blue pot.", "occurred_at": None})
    call_command("reextract", str(memory.pk), "--user", "alice", stdout=io.StringIO(), stderr=io.StringIO())
    memory.refresh_from_db()
    assert memory.summary == "Spare key: under the blue pot." and memory.error == "" and memory.status == Memory.Status.READY
