"""A chain the update check has read (A -> B marked) is not continued, for a question
about now, by a newer note that reads only a little like A (nearest to it of a few, not
as close as one fact said again; recall/newer.py, extractive/quote_order.py). Found on
update scenarios written by someone else (round 30): "Dentist check-up booked for 3 June,
4:15pm" (0.852 to "Opening at 6:30 from next Tuesday", which the 7:15 note replaced) went
first for "What time does the bakery open now?"."""

import numpy as np

from memories.recall.newer import _SameFacts

SHOP_HOURS, OPENING_630, OPENING_715, DENTIST = 9, 10, 11, 1


def _facts(dentist_to_630: float, from_630_nearest: int) -> _SameFacts:
    ids = [OPENING_715, OPENING_630, SHOP_HOURS, DENTIST]
    close = {
        (OPENING_715, OPENING_630): 0.88,
        (OPENING_715, SHOP_HOURS): 0.86,
        (OPENING_715, DENTIST): 0.828,
        (OPENING_630, SHOP_HOURS): 0.87 if from_630_nearest == SHOP_HOURS else 0.84,
        (OPENING_630, DENTIST): dentist_to_630,
        (SHOP_HOURS, DENTIST): 0.80,
    }
    matrix = np.full((4, 4), -1.0, dtype=np.float32)
    for (a, b), value in close.items():
        matrix[ids.index(a), ids.index(b)] = matrix[ids.index(b), ids.index(a)] = value
    # The 6:30 note's nearest other than its successor is given by `from_630_nearest`.
    matrix[ids.index(OPENING_630), ids.index(OPENING_715)] = matrix[ids.index(OPENING_715), ids.index(OPENING_630)] = 0.83
    return _SameFacts(ids, matrix, {OPENING_630: OPENING_715, SHOP_HOURS: OPENING_715})


def test_a_note_near_the_replaced_one_alone_does_not_continue_the_chain():
    facts = _facts(0.852, from_630_nearest=SHOP_HOURS)
    assert facts.nearest[DENTIST] == OPENING_630 and facts.nearest[OPENING_630] == SHOP_HOURS
    assert not facts.continues(OPENING_715, DENTIST)


def test_a_note_saying_the_replaced_fact_again_continues_the_chain():
    # Each other's nearest, or as close as one fact said again: the chain's missed link.
    assert _facts(0.86, from_630_nearest=DENTIST).continues(OPENING_715, DENTIST)
    assert _facts(0.91, from_630_nearest=SHOP_HOURS).continues(OPENING_715, DENTIST)
