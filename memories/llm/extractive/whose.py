"""Whose thing a word of a conversation's line is: the speaker's, the person spoken to, or
someone the line names.

In "Melanie: Thanks, Caroline! I ran a charity race for mental health", the race is
Melanie's: "Caroline" is said to her, not about her. In "Caroline: Wow! What got you into
running?" the running is the other person's, though Caroline says the word. A question
about Caroline's running is answered by neither. Each word is read as belonging to the
person the nearest person word before it in its sentence points at (after it when none
comes before; the speaker when the sentence has none): "I", "my" -> the speaker; "you",
"your" -> whom the line speaks to; "he", "she", "their" -> someone else; a name said
about someone -> that person. Pronouns are a closed class of the grammar; names are
the line's own capitalised words.
"""

from __future__ import annotations

import re

from ... import textutil

FIRST = frozenset("i i'm i've i'd i'll me my mine myself we we're we've we'd we'll us our ours ourselves".split())
SECOND = frozenset("you you're you've you'd you'll your yours yourself yourselves".split())
THIRD = frozenset(
    "he he's he'd he'll him his himself she she's she'd she'll her hers herself they they're they've they'd "
    "they'll them their theirs themselves".split()
)
# Who a word belongs to, besides a name: the speaker, the person spoken to, or a third.
SPEAKER, LISTENER, OTHER = "\x00speaker", "\x00listener", "\x00other"

UNSAID = SPEAKER
# Whether a reply's sentence with no person word gives back to the listener what the turn
# before held as theirs (owners: echoed).
ECHOES = True
_TOKEN = re.compile(r"[^\W\d_][\w'’-]*|\d[\w-]*")


def owners(
    sentence: str, *, people: frozenset[str], vocatives: frozenset[str] = frozenset(), echoed: frozenset[str] = frozenset()
) -> dict[str, set[str]]:
    """For each stem of the sentence, whose it is: SPEAKER, LISTENER, OTHER, or one of
    `people` (lower-case first names) the sentence names. `vocatives` are names said to
    someone ("Thanks, Caroline!"): they point at nobody. `echoed` are the stems the turn
    before held as its own speaker's: a sentence with no person word that says them again
    speaks of that person's thing ("I ran a charity race" / "That charity race sounds
    great, Mel!"), as a reply takes up what it answers."""
    tokens = [t.replace("’", "'") for t in _TOKEN.findall(sentence)]
    refs: list[tuple[int, str]] = []
    for i, token in enumerate(tokens):
        ref = _reference(token, people, vocatives)
        if ref:
            refs.append((i, ref))
    out: dict[str, set[str]] = {}
    # A question in a chat asks about the one spoken to ("For walking or running?"); a
    # statement with no person word is the speaker's ("Ran the race in May.").
    default = LISTENER if sentence.rstrip().endswith("?") else UNSAID
    for i, token in enumerate(tokens):
        if not refs:
            owner = default
            if ECHOES and owner == SPEAKER and set(textutil.terms(token)) & echoed:
                owner = LISTENER
        else:
            before = [r for j, r in refs if j < i]
            owner = before[-1] if before else refs[0][1]
        for stem in textutil.terms(token):
            out.setdefault(stem, set()).add(owner)
    return out


def _reference(token: str, people: frozenset[str], vocatives: frozenset[str]) -> str:
    low = token.lower()
    if low in FIRST:
        return SPEAKER
    if low in SECOND:
        return LISTENER
    if low in THIRD:
        return OTHER
    name = low.removesuffix("'s")
    if token[:1].isupper() and name in people and name not in vocatives:
        return name
    return ""
