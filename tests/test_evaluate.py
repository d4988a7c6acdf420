"""manage.py evaluate on a small LoCoMo-format file whose right figures are known."""

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from memories.management.commands.evaluate import normalise_evidence, parse_session_date
from memories.models import Memory

pytestmark = pytest.mark.django_db


def turn(speaker, dia_id, text, **extra):
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}


def sample(sample_id, sessions, qa):
    conversation = {"speaker_a": "Ann", "speaker_b": "Ben"}
    for n, (date_time, turns) in enumerate(sessions, 1):
        conversation[f"session_{n}_date_time"] = date_time
        conversation[f"session_{n}"] = turns
    conversation["session_9_date_time"] = "1:00 pm on 1 January, 2024"  # a date key with no session
    return {"sample_id": sample_id, "conversation": conversation, "qa": qa, "observation": {}, "session_summary": {}}


# Eight turns: at k=5 the recency window holds D2:1-D2:4 and D1:4 only.
DATA = [
    sample(
        "conv-a",
        [
            (
                "1:56 pm on 8 May, 2023",
                [
                    turn("Ann", "D1:1", "I adopted a greyhound called Biscuit last week."),
                    turn("Ben", "D1:2", "Lovely! What colour is Biscuit?"),
                    turn("Ann", "D1:3", "Brindle, and very shy.", blip_caption="a photo of a brindle dog on a sofa"),
                    turn("Ben", "D1:4", "Shy dogs warm up slowly."),
                ],
            ),
            (
                "10:00 am on 20 June, 2023",
                [
                    turn("Ben", "D2:1", "I started rowing on the river."),
                    turn("Ann", "D2:2", "Every morning?"),
                    turn("Ben", "D2:3", "Three mornings a week, before work."),
                    turn("Ann", "D2:4", "Rowing sounds peaceful."),
                ],
            ),
        ],
        [
            {"question": "What is the name of Ann's greyhound?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
            {
                "question": "How often does Ben go rowing?",
                "answer": "Three times a week",
                "evidence": ["D2:1; D2:3"],
                "category": 1,
            },
            {"question": "What did Ann adopt and when?", "answer": 2023, "evidence": ["D:1:1", "D1:03"], "category": 2},
            {"question": "Is Ben a pilot?", "adversarial_answer": "yes", "evidence": ["D2:1"], "category": 5},
            {"question": "Unanswerable here", "answer": "x", "evidence": ["D7:1"], "category": 4},
        ],
    ),
    sample(
        "conv-b",
        [
            (
                "9:00 am on 2 July, 2023",
                [turn("Cat", "D1:1", "My greyhound Biscuit won a race."), turn("Dan", "D1:2", "Congratulations!")],
            )
        ],
        [{"question": "What did Cat's greyhound win?", "answer": "a race", "evidence": ["D1:1"], "category": 3}],
    ),
]


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "locomo-mini.json"
    path.write_text(json.dumps(DATA))
    return path


def run(*args):
    out = StringIO()
    call_command("evaluate", *map(str, args), stdout=out)
    return out.getvalue()


def test_evaluate_json_reports_the_documented_shape_and_figures(dataset):
    users_before = get_user_model().objects.count()
    report = json.loads(run(dataset, "--json", "--strategy", "recent", "hybrid"))
    assert set(report) == {"recent", "hybrid"}
    for row in report.values():
        assert set(row) == {"questions", "recall", "by_category", "mean_context_tokens"}
        # Category 5 and the question whose evidence is not in the conversation are left out.
        assert row["questions"] == 4
        assert set(row["recall"]) == {"5", "10", "25", "50"}
        assert set(row["by_category"]) == {"1", "2", "3", "4"}
        assert all(0 <= r <= 1 for r in row["recall"].values())
        assert all(set(v) == {"5", "10", "25", "50"} for v in row["by_category"].values())
        assert all(t > 0 for t in row["mean_context_tokens"].values())
        # Every turn of these tiny conversations fits from k=10 up.
        assert row["recall"]["10"] == row["recall"]["50"] == 1.0

    # k=5: the recency window holds D2:1-D2:4 and D1:4 of conv-a, and both turns of conv-b.
    assert report["recent"]["by_category"]["4"]["5"] == 0.0
    assert report["recent"]["by_category"]["2"]["5"] == 0.0
    assert report["recent"]["by_category"]["1"]["5"] == 1.0
    assert report["recent"]["by_category"]["3"]["5"] == 1.0
    assert report["recent"]["recall"]["5"] == 0.5
    assert report["hybrid"]["recall"]["5"] == 1.0
    assert report["recent"]["mean_context_tokens"]["5"] <= report["recent"]["mean_context_tokens"]["10"]

    # The throwaway spaces are gone.
    assert get_user_model().objects.count() == users_before
    assert not Memory.all_objects.exists()


def test_evaluate_prints_a_table_by_default(dataset):
    out = run(dataset, "--k", "1", "3", "--limit-conversations", "1")
    assert "R@1" in out and "R@3" in out and "recent" in out and "hybrid" in out
    assert "(3 questions)" in out


def test_evaluate_as_notes_stores_each_turn_as_a_note_and_still_scores_its_turn(dataset, monkeypatch):
    """--as-notes: no source positions and no "Speaker: " openings reach the store, and each
    memory is still scored as the turn it came from."""
    from memories.management.commands import evaluate as command

    seen = []
    store = command.bulk_remember

    def remember(**kwargs):
        stored = store(**kwargs)
        seen.extend((m.source, m.raw_text, list(m.entities)) for m in stored)
        return stored

    monkeypatch.setattr(command, "bulk_remember", remember)
    report = json.loads(run(dataset, "--json", "--strategy", "hybrid", "--as-notes", "--k", "1", "10"))
    assert {source for source, _, _ in seen} == {"notes"}
    assert ("I adopted a greyhound called Biscuit last week.", "Ann") in {(text, entities[0]) for _, text, entities in seen}
    assert not any(text.startswith(("Ann:", "Ben:", "Cat:", "Dan:")) for _, text, _ in seen)
    assert report["hybrid"]["questions"] == 4
    assert report["hybrid"]["recall"]["10"] == 1.0  # every turn is found as its own turn
    assert report["hybrid"]["by_category"]["4"]["1"] == 1.0  # the greyhound's name: D1:1 first
    assert "each turn stored as a note" in run(dataset, "--as-notes", "--k", "1", "--strategy", "hybrid")


def test_evaluate_refuses_bad_input(tmp_path):
    with pytest.raises(CommandError, match="not-there.json"):
        run(tmp_path / "not-there.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"sample_id": 1}')
    with pytest.raises(CommandError, match="JSON list"):
        run(bad)
    bad.write_text('[{"sample_id": "x"}]')
    with pytest.raises(CommandError, match="not in LoCoMo format"):
        run(bad)


def test_locomo_quirks_are_normalised():
    assert normalise_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D8:6"]) == ["D8:6", "D9:17", "D11:26", "D30:5"]
    when = parse_session_date("1:56 pm on 8 May, 2023")
    assert (when.year, when.month, when.day, when.hour, when.minute) == (2023, 5, 8, 13, 56)
    assert parse_session_date("12:05 am on 1 Jan, 2024").hour == 0
    assert parse_session_date("sometime") is None


def test_evaluate_answers_scores_both_engines_against_the_gold(dataset):
    report = json.loads(run(dataset, "--answers", "--json"))
    assert set(report) == {"baseline", "engine"}
    for row in report.values():
        assert row["questions"] == 4
        assert 0 <= row["f1"] <= 1 and 0 <= row["gold_words_present"] <= 1
    # "What is the name of Ann's greyhound?" -> the turn naming Biscuit is quoted.
    assert report["engine"]["by_category"]["4"]["gold_words_present"] == 1.0
    assert "token F1" in run(dataset, "--answers")
    # Category 5 ("Is Ben a pilot?": nothing says so) counts apart: answered "not found" or not.
    assert report["engine"]["unanswerable"] == 1
    assert report["engine"]["unanswerable_not_found"] == 1.0
    assert report["engine"]["answerable_cited"] == 1.0
    # And per conversation, so a threshold chosen on some can be read on another.
    samples = report["engine"]["by_conversation"]
    assert samples and all(set(v) == {"answerable_cited", "unanswerable_not_found"} for v in samples.values())
    assert any(v["unanswerable_not_found"] == 1.0 for v in samples.values())
    table = run(dataset, "--answers")
    assert "unanswerable (5) not found" in table and all(name in table for name in samples)


def test_evaluate_answers_as_notes_stores_each_turn_without_its_speaker(dataset, monkeypatch):
    from memories.management.commands import evaluate

    stored = []
    real = evaluate.bulk_remember

    def keep(**kwargs):
        stored.extend(item["text"] for item in kwargs["items"])
        return real(**kwargs)

    monkeypatch.setattr(evaluate, "bulk_remember", keep)
    report = json.loads(run(dataset, "--answers", "--as-notes", "--json"))
    assert report["engine"]["questions"] == 4
    assert "I adopted a greyhound called Biscuit last week." in stored
    assert not any(text.startswith(("Ann: ", "Ben: ")) for text in stored)


def test_answer_scores_normalise_like_squad():
    from memories.management.commands.evaluate import answer_scores, normalise_answer

    assert normalise_answer("From your memories:\n\n- The race, [Memory 3]!") == ["race"]
    assert normalise_answer("I couldn't find anything about that in your memories.") == []
    f1, whole = answer_scores("- 7 May 2023: I went yesterday. [Memory 1]", "7 May 2023")
    assert f1 == pytest.approx(2 / 3) and whole == 1.0  # precision 3/6, recall 3/3
    assert answer_scores("nothing in common", "Sweden") == (0.0, 0.0)


def test_a_question_is_asked_at_its_own_time_or_after_the_conversation(tmp_path):
    from datetime import date

    from memories.management.commands.evaluate import load_locomo

    data = [
        sample(
            "conv-t",
            [("9:00 am on 8 May, 2023", [turn("Ann", "D1:1", "I ran the harbour race yesterday.")])],
            [
                {"question": "What did Ann do yesterday?", "answer": "ran", "evidence": ["D1:1"], "category": 2},
                {
                    "question": "What did Ann do two weeks ago?",
                    "answer": "ran",
                    "evidence": ["D1:1"],
                    "category": 2,
                    "asked_at": "2023-05-21",
                },
            ],
        )
    ]
    path = tmp_path / "asked.json"
    path.write_text(json.dumps(data))
    [conv] = load_locomo(path)
    plain, own = conv.questions
    assert conv.asked_at(plain) is None  # now
    assert conv.asked_at(plain, "after").date() == date(2023, 5, 9)
    assert conv.asked_at(own, "after").date() == conv.asked_at(own).date() == date(2023, 5, 21)
    # Asked the day after the conversation, "yesterday" is its day: the line said then is found by its date alone.
    report = json.loads(run(path, "--json", "--strategy", "hybrid", "--k", "1", "--asked", "after"))
    assert report["hybrid"]["by_category"]["2"]["1"] == 1.0
