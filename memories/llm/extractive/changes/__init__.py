"""Does a newer note give another value for the same fact as an older one? By meaning.

The pattern rules (llm/extractive/update_rules.py) know phrasings; this knows none. It reads the two
notes the way the evidence allows for anyone's words:

- the same slot: the newer note has a sentence close in meaning to one of the older
  note's (the embedding layer; nothing is decided without it);
- another value: each of the two sentences holds a value -- a name, a number, a code,
  an address -- that the other note does not say at all ("the Civic" / "a Tesla");
- the same subject: a sentence about someone else ("my brother joined Bosch", "my
  parents live in Cork") does not change the writer's fact;
- a fact, not an event: a past event stays true ("I went to Rome in May" is not undone by
  "I went to Vienna in October"); an older note in the past tense is only replaced when
  the newer one says so ("now", "no longer", "instead"), and a newer one in the past
  tense only when it names the old value ("Sold the Civic and bought a Tesla");
- compatible additions ("also", "too", "as well", "a second ...") are not updates;
- the newer note's grammar may say it changes nothing now: a time gone ("quand j'étais",
  the older verb in a past tense), a change only thought of or denied ("might",
  "thinking about", "no nos mudamos"), the old value kept after "but" or "still", or
  returned to ("im Juli kommt sie zurück nach Hamburg": away for a while).

The closed classes used (pronouns, tense endings, "now"/"no longer"/"instead") are
grammar, not phrasings of facts; the stopwords of the note's language come from
language.py.

One module per kind of evidence, the judgement last:
statements.py (clauses and words), values.py (what a value is, and its kind), cues.py
(the closed classes of change, ending, addition, past tense), subjects.py (whose fact),
slots.py (one slot or two look-alikes), anchors.py (what the embedding model decides),
transitions.py (changes told with no change word) and decision.py (the judgement);
swaps.py is a second judgement asking less of a sentence's shape (one value swapped for
another of its kind), tried when the first and plain.py find nothing; restated.py is the
last, for values in common nouns (the words that differ between two clauses whose frames
mean one slot), when the newer note says it changed; handovers.py reads a role handed
from its holder to another person; roles.py reads a role of the writer's named again in
passing with another holder ("Dr Osei, our dentist, ..."), relocations.py a move told by
its noun ("Umzug nach Leipzig"); renumbered.py a price, time, date or phone number of one
thing changed, whoever's thing it is.
"""

from .anchors import change_verbs
from .decision import Change, back_to_old, judge, keeps_old_value, said_not_as_a_change, stays_after_all
from .handovers import handed_over, taken_over
from .kept_apart import as_usual
from .plain import other_thing_of_slot, plain_state
from .relocations import moved_by_noun
from .renumbered import renumbered
from .restated import restated
from .roles import another_of_several, new_holder
from .statements import speakers_resolved
from .subjects import news_of_someone_new, someone_elses_role, writer_away_for_now
from .successions import succeeded
from .swaps import swapped

__all__ = [
    "as_usual",
    "Change",
    "another_of_several",
    "back_to_old",
    "change_verbs",
    "someone_elses_role",
    "writer_away_for_now",
    "new_holder",
    "renumbered",
    "handed_over",
    "taken_over",
    "judge",
    "keeps_old_value",
    "moved_by_noun",
    "news_of_someone_new",
    "other_thing_of_slot",
    "plain_state",
    "restated",
    "said_not_as_a_change",
    "speakers_resolved",
    "stays_after_all",
    "succeeded",
    "swapped",
]
