"""A question about one speaker that asks about the other one's thing: "How did Caroline's son
handle the accident?" in a conversation where only Melanie ever has a son ("my son",
Caroline's "your son"), "Why did John join a nearby church?" where only Maria joined one.
The nearest lines say the thing, and the speaker the question names may even say its word
("Glad your son is okay, Melanie"), so each line read alone lets the question through.

Read from the owner's own statistics over the recalled conversation: for each thing the
question names (asked_about.asked_nouns, names aside), whose it is in each line that says it
(asked_about.held_by_asked, by the line's person words). A thing that is only ever the other
speaker's, never the asked one's, is not the asked one's to answer about. A thing nobody holds
(no line says it) tells nothing here: other checks read what is unsaid.
"""

from __future__ import annotations

from ... import textutil
from ..base import AnswerContext
from . import asked_for, said_as
from .asked_about import asked_nouns, attribute_asked, held_by_asked, speaker_name

# Whether the check is made (answers.answer).
ANOTHERS_THING = True


def anothers_thing(question: str, context: AnswerContext, named: set[str]) -> bool:
    """Whether the question names one speaker of the conversation and a thing that, in the
    recalled lines, is only ever another speaker's (module docstring)."""
    speakers = {name for name in (speaker_name(m) for m in context.memories) if name}
    asked = named & speakers
    if len(asked) != 1 or len(speakers) < 2:
        return False
    others = speakers - asked
    mine = frozenset().union(*held_by_asked(context, asked).values())
    theirs = frozenset().union(*(frozenset().union(*held_by_asked(context, {o}).values()) for o in others))
    # The slot asked is no thing anyone holds: "What is the name of Nadia's starter?" asks
    # a name, and Oscar's lines saying "name" do not make the starter his.
    kind = asked_for.kind_asked(question)
    slots = attribute_asked(question) | set(kind.head.split() if kind and kind.head else ())
    for word in dict.fromkeys(asked_nouns(question)):
        if word in named or word in slots or word in textutil.STOPWORDS:
            continue
        stems = said_as.spelled(textutil.terms(word))
        if stems and stems & theirs and not stems & mine:
            return True
    return False
