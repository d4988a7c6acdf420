"""The features of a pair of notes for the learned update-pair experiment
(scripts/fit_update_model.py): general evidence, not phrasings.

Closeness in meaning (whole notes, the closest clauses, the notes with their values
masked), whether each holds a value and of which kind, whose fact it is (the holders of
the closest clauses), the closed classes of change, ending, addition, past tense and
negation, words and names shared, the time between, the language, and the offline
judges' own verdicts. Needs Django set up with an embedding layer (MEMORY_EMBEDDINGS=local).
"""

from __future__ import annotations

import math

import numpy as np

from memories.llm.extractive import language, similarity
from memories.llm.extractive.changes.cues import ADDITION, CHANGE, ENDED, HEDGED, PAST_FRAME, negated, past_event
from memories.llm.extractive.changes.slots import shares_slot_word, slot_words_differ, two_holders
from memories.llm.extractive.changes.statements import content_words, mentions, units_of, words_of
from memories.llm.extractive.changes.subjects import first_person, other_owner, other_subject, someone_else
from memories.llm.extractive.changes.values import kinds_of, mask_values, names_in, values_in

FEATURES = (
    "cos_whole",
    "cos_best",
    "cos_masked",
    "old_value",
    "new_value",
    "same_kind",
    "new_value_unsaid",
    "old_value_named",
    "shared_words",
    "change_cue",
    "addition_cue",
    "ended_cue",
    "past_frame",
    "hedged",
    "negated",
    "new_past_event",
    "old_past_event",
    "first_person_both",
    "someone_else",
    "not_english",
    "gap_years",
    "other_subject",
    "other_owner",
    "two_holders",
    "slot_words_differ",
    "shares_slot_word",
    "names_shared",
    "names_unshared",
    "rules",
    "judge",
    "plain",
    "swap",
    "other_thing",
    "not_a_change",
)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def features(
    old_text: str, new_text: str, *, gap_days: float = 0.0, verdicts: dict[str, bool] | None = None
) -> dict[str, float] | None:
    """The pair's evidence as numbers, or None without an embedding layer."""
    stops = language.stopwords_for(f"{old_text} {new_text}")
    names = names_in(old_text) | names_in(new_text)
    lang = language.language_of(new_text)
    old_u, new_u = units_of(old_text), units_of(new_text)
    old_s = list(dict.fromkeys(s for _, s in old_u))
    new_s = list(dict.fromkeys(s for _, s in new_u))
    clauses = [c for c, _ in old_u] + [c for c, _ in new_u]
    texts = [old_text, new_text, mask_values(old_text, stops, names), mask_values(new_text, stops, names), *clauses]
    vectors = similarity.meaning_vectors(texts)
    if vectors is None:
        return None
    v = np.asarray(vectors, dtype=np.float32)
    best = v[4 + len(old_u) :] @ v[4 : 4 + len(old_u)].T
    # The closest clauses: the slot the pair would share; their holders are compared.
    new_i, old_i = np.unravel_index(int(np.argmax(best)), best.shape)
    (old_c, old_bs), (new_c, new_bs) = old_u[old_i], new_u[new_i]
    old_names, new_names = names_in(old_text), names_in(new_text)
    old_values = list(dict.fromkeys(x for s in old_s for x in values_in(s, stops, names)))
    new_values = list(dict.fromkeys(x for s in new_s for x in values_in(s, stops, names)))
    old_words, new_words = words_of(old_text), words_of(new_text)
    old_content = set(content_words(old_text, stops))
    new_content = set(content_words(new_text, stops))
    union = old_content | new_content
    f = {
        "cos_whole": _cos(v[0], v[1]),
        "cos_best": float(best.max()),
        "cos_masked": _cos(v[2], v[3]),
        "old_value": float(bool(old_values)),
        "new_value": float(bool(new_values)),
        "same_kind": float(bool(kinds_of(old_values) & kinds_of(new_values))),
        "new_value_unsaid": float(any(not mentions(x, old_words) for x in new_values)),
        "old_value_named": float(any(mentions(x, new_words) for x in old_values)),
        "shared_words": len(old_content & new_content) / len(union) if union else 0.0,
        "change_cue": float(bool(CHANGE.search(new_text))),
        "addition_cue": float(bool(ADDITION.search(new_text))),
        "ended_cue": float(bool(ENDED.search(new_text))),
        "past_frame": float(bool(PAST_FRAME.search(new_text))),
        "hedged": float(bool(HEDGED.search(new_text))),
        "negated": float(any(negated(s, lang, frozenset(old_words)) for s in new_s)),
        "new_past_event": float(any(past_event(s) for s in new_s)),
        "old_past_event": float(any(past_event(s) for s in old_s)),
        "first_person_both": float(
            any(first_person(s, names, lang) for s in old_s) and any(first_person(s, names, lang) for s in new_s)
        ),
        "someone_else": float(any(someone_else(s, old_text, lang) for s in new_s)),
        "not_english": float(lang not in ("", "en")),
        "gap_years": math.log1p(max(gap_days, 0.0) / 365.0),
        "other_subject": float(other_subject(old_bs, new_bs, names, old_text, new_text)),
        "other_owner": float(other_owner(old_bs, new_bs)),
        "two_holders": float(two_holders(old_bs, new_bs, stops, names)),
        "slot_words_differ": float(slot_words_differ(old_c, new_c, stops, names)),
        "shares_slot_word": float(shares_slot_word(old_c, new_c, stops, names)),
        "names_shared": float(bool(old_names & new_names)),
        "names_unshared": float(bool(old_names - new_names) and bool(new_names - old_names)),
    }
    for name in ("rules", "judge", "plain", "swap", "other_thing", "not_a_change"):
        f[name] = float(bool((verdicts or {}).get(name)))
    return f
