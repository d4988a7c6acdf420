"""Round 16, lead: three general gaps of the pattern rules, each with a look-alike kept apart.

- a correction naming the value it replaces is not vetoed because the note is about
  someone's thing ("Tomasz's office ..., not Harbour House");
- a name a note opens with is still a name (the rules skip capitalised openers);
- a dose or a reading in a unit of measure is an amount, like a price.
"""

import pytest

from memories.llm.base import MemoryNote
from memories.llm.extractive import update_rules


def _judged(old: str, new: str) -> bool:
    return bool(update_rules.judge(MemoryNote(id=2, text=new, summary=new), [MemoryNote(id=1, text=old, summary=old)]))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "Lunch with the lawyer, Tomasz, on the 2nd floor of Harbour House, noon Friday.",
            "Correction — Tomasz's office is in Harbour Point, not Harbour House. Same floor.",
        ),
        ("Booked the Oslo flight for 3 March, for Maja's party.", "Oslo flight moved to 10 March, rebooked with Fjordair."),
        ("Metformin 500mg twice a day.", "Metformin dose went up to 1000mg twice a day."),
    ],
)
def test_updates(old, new):
    assert _judged(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My dentist is Dr Patel.", "Dr Patel's receptionist moved to the Leeds branch."),
        ("Booked the Oslo flight for 3 March, for Maja's party.", "Bergen flight moved to 10 March, rebooked with Fjordair."),
        ("Metformin 500mg twice a day.", "Vitamin D dose went up to 1000iu a day."),
    ],
)
def test_look_alikes_kept_apart(old, new):
    assert not _judged(old, new)
