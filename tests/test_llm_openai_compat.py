"""The OpenAI-compatible provider through its real HTTP client against a fake
chat-completions server on 127.0.0.1, driven through the real service flows."""

import base64
import io
import json

import pytest

from memories.llm.base import FilePart, MemoryNote, ProviderError
from memories.llm.openai_compat import OpenAICompatProvider
from memories.models import Consolidation, Memory, MemoryLink
from memories.services import answer_question, consolidate_owner, extract_memory, ingest_file, ingest_text, retry_memory
from tests.fake_model_servers import FakeOpenAI
from tests.samples import png_bytes, wav_bytes

EXTRACTED = {
    "summary": "Lunch with Priya Nair at Blue Fin to plan the Q3 launch.",
    "entities": ["Priya Nair", "Blue Fin"],
    "topics": ["launch", "planning"],
    "importance": 0.8,
    "occurred_at": "2024-05-14",
}


def user_content(call) -> str | list:
    return next(m["content"] for m in call.json()["messages"] if m["role"] == "user")


def test_text_becomes_ready_memory_with_json_schema_output(user, fake_openai):
    fake_openai.enqueue_json(EXTRACTED)
    memory = ingest_text(owner=user, text="Lunch with Priya Nair at Blue Fin on 14 May about the Q3 launch.").memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.READY
    assert memory.summary == EXTRACTED["summary"]
    assert memory.entities == ["Priya Nair", "Blue Fin"]
    assert memory.importance == pytest.approx(0.8)
    assert memory.occurred_at.date().isoformat() == "2024-05-14"
    assert memory.provider == "openai_compat (llama-test)"
    (call,) = fake_openai.completion_calls()
    assert call.headers["authorization"] == "Bearer sk-test-secret"
    body = call.json()
    assert body["model"] == "llama-test"
    assert "Lunch with Priya Nair at Blue Fin on 14 May" in user_content(call)
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"summary", "entities", "topics", "importance", "occurred_at"}


def test_image_travels_as_data_url(user, fake_openai):
    data = png_bytes()
    fake_openai.enqueue_json({**EXTRACTED, "summary": "A blue square.", "occurred_at": None})
    memory = ingest_file(owner=user, fileobj=io.BytesIO(data), name="square.png").memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.READY
    assert memory.summary == "A blue square."
    content = user_content(fake_openai.completion_calls()[0])
    (image,) = [p for p in content if p["type"] == "image_url"]
    prefix, encoded = image["image_url"]["url"].split(",", 1)
    assert prefix == "data:image/png;base64"
    assert base64.b64decode(encoded) == data
    assert any(p["type"] == "text" and "square.png" in p["text"] for p in content)


def test_unreadable_file_type_is_said_in_the_summary(user, fake_openai):
    fake_openai.enqueue_json({**EXTRACTED, "summary": "A voice memo.", "occurred_at": None})
    memory = ingest_file(owner=user, fileobj=io.BytesIO(wav_bytes()), name="memo.wav").memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.READY
    assert "audio/wav file memo.wav could not be read by this endpoint" in memory.summary


def test_binary_file_without_text_is_described_without_a_model_call(fake_openai, tmp_path):
    path = tmp_path / "memo.wav"
    path.write_bytes(wav_bytes())
    provider = OpenAICompatProvider()

    result = provider.extract(text="", files=[FilePart("memo.wav", "audio/wav", path, path.stat().st_size)], source="memo.wav")

    assert "could not be read by this endpoint" in result.summary
    assert result.entities == ["memo.wav"]
    assert fake_openai.requests == []


def test_binary_file_with_text_sends_the_text_but_not_the_bytes(fake_openai, tmp_path):
    path = tmp_path / "memo.wav"
    path.write_bytes(wav_bytes())
    fake_openai.enqueue_json({**EXTRACTED, "summary": "Notes from the car.", "occurred_at": None})
    provider = OpenAICompatProvider()

    memo = FilePart("memo.wav", "audio/wav", path, path.stat().st_size)
    result = provider.extract(text="Recorded in the car after the meeting.", files=[memo], source="x")

    assert result.summary.startswith("Notes from the car. The audio/wav file memo.wav could not be read")
    (call,) = fake_openai.completion_calls()
    assert "Recorded in the car after the meeting." in user_content(call)
    assert "memo.wav (audio/wav" in user_content(call)
    assert base64.b64encode(path.read_bytes()[:30]).decode()[:20] not in call.body.decode()


def test_429_then_success_is_retried_honoring_retry_after(user, fake_openai, waits):
    fake_openai.enqueue_error(429, "rate limited", headers={"Retry-After": "5"})
    fake_openai.enqueue_json(EXTRACTED)

    memory = extract_memory(ingest_text(owner=user, text="Call the dentist on Friday.").memory.pk)

    assert memory.status == Memory.Status.READY
    assert len(fake_openai.completion_calls()) == 2
    assert waits == [5.0]


def test_timeout_then_success_is_retried(user, fake_openai, settings, waits):
    settings.MEMORY_LLM_TIMEOUT_SECONDS = 0.5
    fake_openai.enqueue_json(EXTRACTED, delay=3)
    fake_openai.enqueue_json(EXTRACTED)

    memory = extract_memory(ingest_text(owner=user, text="Slow server day.").memory.pk)

    assert memory.status == Memory.Status.READY
    assert len(waits) == 1


def test_500_after_retries_leaves_failed_memory_with_input_kept(user, fake_openai, waits):
    for _ in range(3):
        fake_openai.enqueue_error(500, "model crashed while loading (key sk-test-secret)")
    text = "The boiler code is 4471; the plumber is Sam Ortiz."
    memory = ingest_text(owner=user, text=text).memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.FAILED
    assert memory.raw_text == text
    assert "3 attempts" in memory.error and "HTTP 500" in memory.error and "model crashed" in memory.error
    assert "sk-test-secret" not in memory.error
    assert len(fake_openai.completion_calls()) == 3
    assert len(waits) == 2

    fake_openai.enqueue_json(EXTRACTED)
    retry_memory(owner=user, memory_id=memory.pk)
    assert extract_memory(memory.pk).status == Memory.Status.READY


def test_unreachable_server_fails_with_a_readable_error(user, settings, waits):
    with FakeOpenAI() as gone:
        url = gone.base_url
    settings.MEMORY_LLM_PROVIDER = "openai_compat"
    settings.OPENAI_BASE_URL = url
    settings.OPENAI_MODEL = "llama-test"
    settings.MEMORY_LLM_MAX_RETRIES = 1

    memory = extract_memory(ingest_text(owner=user, text="A note.").memory.pk)

    assert memory.status == Memory.Status.FAILED
    assert "could not connect to" in memory.error and "2 attempts" in memory.error
    assert len(waits) == 1


@pytest.mark.parametrize(
    "status, body, expected",
    [
        (200, FakeOpenAI.completion_body('{"summary": "Lunch with Pri'), "does not match the expected shape"),
        (200, FakeOpenAI.completion_body('{"summary": "x", "entities": [', finish_reason="length"), "cut off"),
        (200, FakeOpenAI.completion_body(json.dumps({"summary": "only this"})), "does not match the expected shape"),
        (200, {"choices": [{"message": {"role": "assistant", "content": None, "refusal": "I can't help."}}]}, "refused"),
        (200, "<html>proxy login</html>", "something other than a chat completion"),
        (400, {"error": {"message": "response_format json_schema is not supported"}}, "HTTP 400"),
    ],
    ids=["malformed", "truncated", "wrong-shape", "refusal", "not-json", "client-error"],
)
def test_unusable_reply_leaves_failed_memory(user, fake_openai, waits, status, body, expected):
    fake_openai.enqueue(status, body)
    text = "Remember the spare key is under the blue pot."
    memory = ingest_text(owner=user, text=text).memory

    memory = extract_memory(memory.pk)

    assert memory.status == Memory.Status.FAILED
    assert memory.raw_text == text
    assert expected in memory.error
    assert len(fake_openai.completion_calls()) == 1, "not retried"
    assert waits == []


def test_missing_base_url_fails_the_memory_with_a_clear_message(user, fake_openai, settings):
    settings.OPENAI_BASE_URL = ""
    memory = extract_memory(ingest_text(owner=user, text="A note.").memory.pk)
    assert memory.status == Memory.Status.FAILED
    assert "OPENAI_BASE_URL" in memory.error


def _offline_memories(settings, memory_factory, texts, owner=None):
    settings.MEMORY_LLM_PROVIDER = "offline"
    made = [memory_factory(t, **({"owner": owner} if owner else {})) for t in texts]
    settings.MEMORY_LLM_PROVIDER = "openai_compat"
    return made


def test_consolidation_writes_insight_and_links(user, settings, fake_openai, memory_factory):
    a, b, c = _offline_memories(
        settings, memory_factory, ["Priya leads the Q3 launch.", "The Q3 launch slipped to October.", "Bought oat milk."]
    )
    fake_openai.enqueue_json(
        {
            "summary": "Launch planning and groceries.",
            "insight": "The Q3 launch depends on Priya and is already late.",
            "connections": [
                {"from_id": a.pk, "to_id": b.pk, "relationship": "same launch"},
                {"from_id": b.pk, "to_id": b.pk, "relationship": "itself"},
            ],
        }
    )

    outcome = consolidate_owner(owner=user)

    (consolidation,) = outcome.consolidations
    assert consolidation.insight == "The Q3 launch depends on Priya and is already late."
    assert consolidation.provider == "openai_compat (llama-test)"
    assert list(MemoryLink.objects.values_list("from_memory_id", "to_memory_id", "relationship")) == [(a.pk, b.pk, "same launch")]
    # The two launch notes are grouped by closeness; the grocery note, close to neither, waits.
    assert list(Memory.objects.filter(consolidated_at__isnull=True)) == [c]
    (call,) = fake_openai.completion_calls()
    assert f"[Memory {b.pk}]" in user_content(call) and f"[Memory {c.pk}]" not in user_content(call)
    schema = call.json()["response_format"]["json_schema"]["schema"]
    assert "connections" in schema["properties"]


def test_consolidation_failure_is_recorded_and_nothing_is_marked(user, settings, fake_openai, memory_factory):
    _offline_memories(settings, memory_factory, ["One thing.", "Another thing."])
    fake_openai.enqueue_text("Sure! Here are the connections you asked for.")

    outcome = consolidate_owner(owner=user)

    assert outcome.consolidations == [] and "does not match" in outcome.run.error
    assert Consolidation.objects.count() == 0


def test_answer_cites_context_and_foreign_citations_are_stripped(user, other_user, settings, fake_openai, memory_factory):
    mine, _ = _offline_memories(settings, memory_factory, ["The spare key is under the blue pot.", "Bins go out on Tuesday."])
    (theirs,) = _offline_memories(settings, memory_factory, ["Bob's locker code is 1234."], owner=other_user)
    fake_openai.enqueue_text(f"Under the blue pot [Memory {mine.pk}]; see also [Memory {theirs.pk}].")

    result = answer_question(owner=user, question="Where is the spare key?", strategy="recent")

    assert f"[Memory {mine.pk}]" in result.answer
    assert f"[Memory {theirs.pk}]" not in result.answer
    assert result.cited == [mine.pk]
    (call,) = fake_openai.completion_calls()
    assert "response_format" not in call.json()
    sent = user_content(call)
    assert "Where is the spare key?" in sent and f"[Memory {mine.pk}]" in sent and "Bob's locker" not in sent


def test_every_role_sends_its_own_output_cap_and_the_seed(user, settings, fake_openai, memory_factory):
    settings.OPENAI_MAX_TOKENS_EXTRACT = 300
    settings.OPENAI_MAX_TOKENS_ANSWER = 200
    settings.OPENAI_SEED = 7
    fake_openai.enqueue_json(EXTRACTED)
    memory = extract_memory(ingest_text(owner=user, text="Lunch with Priya at Blue Fin.").memory.pk)
    fake_openai.enqueue_text(f"At Blue Fin [Memory {memory.pk}].")
    answer_question(owner=user, question="Where was lunch?", strategy="recent")

    extract_call, answer_call = fake_openai.completion_calls()
    assert (extract_call.json()["max_tokens"], answer_call.json()["max_tokens"]) == (300, 200)
    assert extract_call.json()["seed"] == answer_call.json()["seed"] == 7
    properties = extract_call.json()["response_format"]["json_schema"]["schema"]["properties"]
    assert (properties["importance"]["minimum"], properties["importance"]["maximum"]) == (0.0, 1.0)
    assert (properties["topics"]["maxItems"], properties["entities"]["maxItems"]) == (6, 20)


def test_no_seed_and_no_cap_when_they_are_unset(user, settings, fake_openai):
    settings.OPENAI_MAX_TOKENS_EXTRACT = 0
    settings.OPENAI_SEED = None
    fake_openai.enqueue_json(EXTRACTED)
    extract_memory(ingest_text(owner=user, text="A note.").memory.pk)
    (call,) = fake_openai.completion_calls()
    assert "seed" not in call.json() and "max_tokens" not in call.json()


def test_an_answer_cut_off_at_its_limit_is_a_failure_not_an_answer(user, settings, fake_openai, memory_factory, waits):
    (note,) = _offline_memories(settings, memory_factory, ["The spare key is under the blue pot."])
    settings.OPENAI_MAX_TOKENS_ANSWER = 64
    looping = f"Under the blue pot [Memory {note.pk}]. " + "You can't live in a place that doesn't exist. " * 9 + "You can"
    fake_openai.enqueue_text(looping, finish_reason="length")

    with pytest.raises(ProviderError) as failed:
        answer_question(owner=user, question="Where is the spare key?", strategy="recent")

    assert "cut off" in str(failed.value) and "max_tokens 64" in str(failed.value)
    assert "OPENAI_MAX_TOKENS_ANSWER" in str(failed.value) and "doesn't exist" not in str(failed.value)
    assert len(fake_openai.completion_calls()) == 1 and waits == []


def test_importance_outside_the_bounds_is_clamped_not_failed(user, fake_openai):
    fake_openai.enqueue_json({**EXTRACTED, "importance": -7569})
    memory = extract_memory(ingest_text(owner=user, text="A note.").memory.pk)
    assert memory.status == Memory.Status.READY and memory.importance == 0.0


def test_lists_are_bounded_so_a_grammar_closes_a_repeated_one(fake_openai):
    notes = [MemoryNote(id=i, summary=f"Note {i}.") for i in (1, 2, 3, 4)]
    fake_openai.enqueue_json({"summary": "s", "insight": "i", "connections": []})
    fake_openai.enqueue_json({"updates": []})
    provider = OpenAICompatProvider()

    provider.consolidate(notes)
    provider.judge_updates(new=notes[0], candidates=notes[1:])

    consolidate_call, updates_call = fake_openai.completion_calls()
    # One connection a pair of the 4 memories shown; one verdict a candidate.
    assert consolidate_call.json()["response_format"]["json_schema"]["schema"]["properties"]["connections"]["maxItems"] == 6
    assert updates_call.json()["response_format"]["json_schema"]["schema"]["properties"]["updates"]["maxItems"] == 3


@pytest.mark.parametrize(
    "refusal, sent_instead",
    [
        (
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
            "max_completion_tokens",
        ),
        ("Unrecognized request argument supplied: seed", None),
    ],
    ids=["max_tokens", "seed"],
)
def test_a_field_the_server_refuses_is_sent_differently_and_then_no_more(user, settings, fake_openai, refusal, sent_instead):
    settings.OPENAI_SEED = 7
    settings.MEMORY_DETECT_UPDATES = False  # two extractions, no update check between them
    fake_openai.enqueue_error(400, refusal)
    fake_openai.enqueue_json(EXTRACTED)
    fake_openai.enqueue_json(EXTRACTED)

    first = extract_memory(ingest_text(owner=user, text="A note.").memory.pk)
    second = extract_memory(ingest_text(owner=user, text="Another note.").memory.pk)

    assert first.status == second.status == Memory.Status.READY
    refused, retried, later = (c.json() for c in fake_openai.completion_calls())
    name = "max_tokens" if sent_instead else "seed"
    assert name in refused and name not in retried and name not in later
    if sent_instead:
        assert retried[sent_instead] == later[sent_instead] == refused[name]
