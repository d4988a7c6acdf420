"""Round 34 (issue 25): a person's unrelated notes are no changes of each other.

On two scenario sets written by someone who read none of the code (a nurse's notes in
Manchester, a consultant's in Montreal), the check by meaning marked 52 pairs of a
person's everyday notes as one fact changed ("Food bank harvest collection at the church
hall" / "Camille in Manchester for the weekend!"): e5 reads any two short notes as close.
What tells them apart is the owner's own statistics: how much nearer the older note is to
the newer one than the owner's notes are on the whole. Before an owner has notes enough
for that, two numbers of two forms with no word of change ("x6" on a shopping list, a
31st birthday) are two facts. And answers: "Mum" asked as a name is said by "Mummy".
Written here in notes of my own."""

from __future__ import annotations

import pytest

from memories.llm.base import MemoryNote
from memories.llm.extractive import update_rules
from memories.llm.offline import OfflineProvider
from memories.models import Memory
from memories.services import answer_question
from memories.services import updates
from tests.test_updates import needs_meaning

# One person's everyday notes: none changes another.
EVERYDAY = [
    "Tried the 6:45am boxing class at the leisure centre. Coach Dev is relentless.",
    "Ella turns 9 on Saturday!! Bowling party at Hollywood Bowl, 10 kids, cake from Greggs.",
    "Banana bread: 3 ripe bananas, 75g butter, 150g flour, 1 egg, 1 tsp bicarb, 170C for 50 min.",
    "Finished 'Piranesi' on the train, strange and lovely. Lend to Sunita next.",
    "Replaced the noisy fan in the NAS with a Noctua, finally quiet in the hall.",
    "Dad's 70th at the Bell Inn, Upper Street. Aunt Joan came down from Leeds.",
    "Invoice #118 to Harlow & Co: 32h for October, net 30.",
    "Parents' evening: Ella's reading is two levels up, maths fine, needs to talk less lol.",
]


def judged(old: str, new: str, nearness: float | None) -> bool:
    older = MemoryNote(id=1, summary=old, text=old, nearness=nearness)
    return bool(OfflineProvider().judge_updates(new=MemoryNote(id=2, summary=new, text=new), candidates=[older]))


@needs_meaning
def test_a_persons_unrelated_notes_are_not_changes_of_each_other(user, memory_factory, settings, sync_tasks):
    """The invoice's "32h" read as the school run's time: two values of one kind in two
    short notes the model reads as close. Among the owner's notes it is no nearer to the
    school note than the rest are, so it is not changed by it."""
    settings.MEMORY_EMBEDDINGS = "local"
    for day, text in enumerate(EVERYDAY, start=1):
        memory_factory(text, occurred_at=f"2025-03-{day:02d}")
    memory_factory("Ella starts Year 4 at Millbrook Primary, drop-off 8:40, Mrs Osei's class.", occurred_at="2025-09-01")
    assert not Memory.objects.filter(owner=user, outdated_by__isnull=False).exists()


@needs_meaning
def test_a_change_among_the_same_notes_is_still_marked(user, memory_factory, settings, sync_tasks):
    settings.MEMORY_EMBEDDINGS = "local"
    for day, text in enumerate(EVERYDAY, start=1):
        memory_factory(text, occurred_at=f"2025-03-{day:02d}")
    office = memory_factory("Our office is on Baker Street, second floor.", occurred_at="2025-04-01")
    moved = memory_factory("The office moved; we're on Fleet Street from Monday.", occurred_at="2025-06-01")
    office.refresh_from_db()
    assert office.outdated_by_id == moved.pk


@needs_meaning
def test_a_change_read_by_meaning_needs_a_near_note_and_a_phrasing_does_not(settings):
    settings.MEMORY_EMBEDDINGS = "local"
    by_meaning = ("Our office is on Baker Street.", "The office moved; we're on Fleet Street from Monday.")
    assert judged(*by_meaning, nearness=None)  # nothing measured: judged as before
    assert judged(*by_meaning, nearness=update_rules.NEAR_ENOUGH + 1)
    assert not judged(*by_meaning, nearness=update_rules.NEAR_ENOUGH - 1)
    # The older value named as replaced: the rules read it whatever the nearness.
    assert judged("I drink coffee every morning.", "I drink tea every morning instead of coffee.", nearness=-2.0)


@needs_meaning
def test_two_numbers_with_no_word_of_change_are_two_facts(settings):
    """A shopping list's counts and a birthday's age, read close by meaning: with no word of
    change two numbers are two facts, even before the owner has notes enough for a
    nearness. The same frame with another number is still a change."""
    settings.MEMORY_EMBEDDINGS = "local"
    shopping = "Tesco order: eggs x12, bagels x2 for Sam's lunchbox, bin bags, oat milk x3"
    assert not judged(shopping, "Sam's 8th birthday 🎈 the dinosaur cake was a hit, he cried laughing", nearness=None)
    assert judged("Standup is at 9:30.", "Standup is at 10:15.", nearness=None)


def test_above_typical_is_in_standard_deviations_and_needs_enough_memories():
    typical = [0.70, 0.72, 0.74, 0.76, 0.78, 0.80]
    mean, spread = 0.75, 0.0341565
    got = updates.above_typical(typical, {"a": 0.85, "b": 0.75})
    assert got["a"] == pytest.approx((0.85 - mean) / spread, rel=1e-4)
    assert got["b"] == pytest.approx(0.0, abs=1e-9)
    assert updates.above_typical(typical[: updates.NEARNESS_MIN_MEMORIES - 1], {"a": 0.85}) == {}
    assert updates.above_typical([0.8] * 10, {"a": 0.85}) == {}  # no spread to read


@needs_meaning
def test_nearness_reads_only_the_owners_memories(user, other_user, memory_factory, settings, sync_tasks):
    """Another owner's memories neither make up the owner's typical closeness nor are
    measured: with too few of her own, alice's check has no nearness, however many bob has;
    with enough, bob's added memories change nothing of hers."""
    settings.MEMORY_EMBEDDINGS = "local"
    for day, text in enumerate(EVERYDAY, start=1):
        memory_factory(text, owner=other_user, occurred_at=f"2025-03-{day:02d}")
    mine = [memory_factory(text, occurred_at=f"2025-04-0{day}") for day, text in enumerate(EVERYDAY[:3], start=1)]
    bobs = list(Memory.objects.filter(owner=other_user))
    assert updates.nearness(mine[-1], mine[:-1] + bobs) == {}

    mine += [memory_factory(text, occurred_at=f"2025-05-0{day}") for day, text in enumerate(EVERYDAY[3:], start=1)]
    new = memory_factory("Ella starts Year 4 at Millbrook Primary, drop-off 8:40.", occurred_at="2025-09-01")
    before = updates.nearness(new, mine + bobs)
    assert set(before) == {m.pk for m in mine}  # bob's never measured
    memory_factory("Ella's school run: Millbrook Primary, 8:40 sharp.", owner=other_user, occurred_at="2025-08-01")
    new = Memory.objects.get(pk=new.pk)
    assert updates.nearness(new, mine) == pytest.approx(before)


@needs_meaning
def test_a_familiar_name_of_family_asked_is_said_by_any_of_its_kin(user, memory_factory, settings, sync_tasks):
    """ "Mum" asked as a name, "Mummy" written: the same person (said_as's closed class of
    familiar names); "Dad" is not her."""
    settings.MEMORY_EMBEDDINGS = "local"
    for day, text in enumerate(EVERYDAY[:4], start=1):
        memory_factory(text, occurred_at=f"2025-03-{day:02d}")
    number = memory_factory("Mummy's new line: +234 805 555 0199, the old one is dead.", occurred_at="2025-04-02")
    reply = answer_question(owner=user, question="What number do I call to reach Mum?", k=5).answer
    assert f"[Memory {number.pk}]" in reply and "0199" in reply, reply
    reply = answer_question(owner=user, question="What number do I call to reach Dad?", k=5).answer
    assert f"[Memory {number.pk}]" not in reply, reply
