"""Round 23 (issue 25): found on update scenarios written by someone who read none of the
code. A fact's newer value was ranked first and the answer still said it found nothing:
"What is my work email address?" asks about a note that never says "email" (it says "mine
is ... now"), the update of the note that did."""

import pytest

from memories.llm.extractive import answers
from memories.services import answer_question
from memories.services.updates import mark_superseded
from tests.test_offline_engine import needs_meaning

BACKGROUND = [
    "Bread maker on the blink again, the paddle doesn't turn.",
    "Ran the canal loop, 8k in 44 minutes, calves aching.",
    "Watched Perfect Days, quiet and lovely.",
    "Dana's band plays the Crescent on Friday, tickets were £12.",
]


@needs_meaning
@pytest.mark.parametrize("lent", [True, False])
def test_a_newer_value_is_read_with_the_words_of_the_note_it_replaced(user, memory_factory, local_embeddings, monkeypatch, lent):
    monkeypatch.setattr(answers, "SUCCESSOR_LENT", lent)
    for text in BACKGROUND:
        memory_factory(text)
    old = memory_factory("Work email for suppliers: m.osei@fernway.co.uk", occurred_at="2024-02-05")
    new = memory_factory(
        "IT moved us all onto the new domain at the weekend; mine is mina.osei@fernway.com, the old one stops in May.",
        occurred_at="2025-01-13",
    )
    mark_superseded(old=old, new=new, reason="test")
    result = answer_question(owner=user, question="What is my work email address?")
    if lent:
        assert result.cited and result.cited[0] == new.pk, result.answer
        assert "mina.osei@fernway.com" in result.answer
    else:
        assert not result.cited or result.cited[0] != new.pk  # the newer note never says "email"
