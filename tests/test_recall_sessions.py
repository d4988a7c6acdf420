"""Two stages for sources with positions, and breadth for questions asking for a set
(memories/recall/sessions.py). Both are off by default (they did not hold across the
LoCoMo folds, docs/recall.md); these tests turn them on and check what they do."""

import pytest

from memories.recall import recall, sessions

pytestmark = pytest.mark.django_db


def hybrid(owner, question, k=10):
    return recall(owner=owner, question=question, strategy="hybrid", k=k)


def test_questions_asking_for_a_set():
    for question in (
        "What activities does Ann do?",
        "Which places did Ann visit?",
        "How many times did Ann go to the beach?",
        "Where has Ann camped?",
        "What kinds of music does Ann like?",
    ):
        assert sessions.asks_for_a_set(question), question
    for question in ("What is Ann's job?", "What does Ann like?", "What was the name of the dog?", "Which class did Ann take?"):
        assert not sessions.asks_for_a_set(question), question


def conversation(memory_factory):
    """Session D1 talks at length about Ann's pottery; D2 and D3 each hold one other hobby."""
    d1 = [
        memory_factory(text, source=f"chat:D1:{i}")
        for i, text in enumerate(
            [
                "Ann: My favourite hobby is pottery, I throw bowls every evening.",
                "Ann: The pottery hobby takes all my weekends now, glazing and firing.",
                "Ann: Pottery again today: a hobby that never gets old, three mugs.",
                "Ann: My pottery hobby even has its own shelf of plates.",
            ],
            1,
        )
    ]
    d2 = memory_factory(
        "Ann: Since the spring, on quiet mornings before work, when the weather is kind and the lake is calm, "
        "I have taken up birdwatching as a hobby with my old binoculars and a notebook.",
        source="chat:D2:1",
    )
    d3 = memory_factory(
        "Ann: Over the long dark winter evenings, after dinner and the washing up, with the radio on low, "
        "chess slowly became a hobby, mostly against my neighbour across the street.",
        source="chat:D3:1",
    )
    for i in range(6):
        memory_factory(f"Ben: Ordinary remark number {i} about the weather.", source=f"chat:D4:{i + 1}")
    return d1, d2, d3


def test_breadth_spreads_a_set_questions_first_places_over_sessions(user, memory_factory, monkeypatch):
    d1, d2, d3 = conversation(memory_factory)
    question = "What hobbies does Ann have?"
    off = hybrid(user, question, k=3).memory_ids
    monkeypatch.setattr(sessions, "BREADTH_DECAY", 0.5)
    on = hybrid(user, question, k=3).memory_ids
    assert {d2.pk, d3.pk} - set(off), "the near-copies of one session fill the first places without breadth"
    assert {d2.pk, d3.pk} <= set(on)
    # A question that asks for one thing keeps its order.
    assert hybrid(user, "What is Ann's favourite hobby?", k=3).memory_ids[0] == d1[0].pk


def test_the_best_session_lifts_its_weaker_matches(user, memory_factory, monkeypatch):
    d1, d2, d3 = conversation(memory_factory)
    # One weak match in the strong session and one as weak elsewhere.
    weak_in_d1 = memory_factory("Ann: Tired after the class, but happy.", source="chat:D1:5")
    weak_elsewhere = memory_factory("Ann: Tired after the walk, but happy.", source="chat:D5:1")
    question = "Ann tired happy hobby pottery"
    monkeypatch.setattr(sessions, "W_SESSION", 0.3)
    ids = hybrid(user, question, k=20).memory_ids
    assert ids.index(weak_in_d1.pk) < ids.index(weak_elsewhere.pk)
