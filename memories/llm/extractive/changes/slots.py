"""Whether two statements are about one slot: the words they share that are not values.

Closeness in meaning finds the candidate; these check it against the words: a slot word
in common ("the rent", "smoke"), a frame both say the same way, and the look-alikes of
one slot that are two ("the team meeting" / "the client meeting", "the tax return" /
"the passport renewal").
"""

from __future__ import annotations

import difflib
import os
import re

import numpy as np

from .... import textutil
from .. import language, similarity
from .cues import CHANGE, IRREGULAR_PAST, NOT_A_THING
from .statements import abbreviates, content_words, is_stopword, similar_word, tokens_of, without_possessive, words_of
from .subjects import first_person, person_noun
from .values import PLACEHOLDER, is_quantity, mask_values


def slot_words_differ(old_c: str, new_c: str, stops: frozenset[str], names: frozenset[str]) -> bool:
    """Each clause has a word of its slot the other lacks: when the values are the
    clauses' subjects, what they hold must be one thing."""
    old_slot = [w for w in content_words(old_c, stops) if w not in names and not CHANGE.fullmatch(w)]
    new_slot = [w for w in content_words(new_c, stops) if w not in names and not CHANGE.fullmatch(w)]
    return any(not similar_word(w, set(new_slot)) for w in old_slot) and any(not similar_word(w, set(old_slot)) for w in new_slot)


def shared_slot_words(old_c: str, new_c: str, stops: frozenset[str], names: frozenset[str]) -> list[str]:
    """The slot's words the two clauses share ("smoke" / "smoking")."""
    new_slot = {w for w in content_words(new_c, stops) if w not in names and not CHANGE.fullmatch(w)}
    return [w for w in content_words(old_c, stops) if w not in names and similar_word(w, new_slot)]


def shares_slot_word(old_c: str, new_c: str, stops: frozenset[str], names: frozenset[str]) -> bool:
    """A word of the slot, not of a value, in both clauses ("the standup", "habite")."""
    old_slot = [w for w in content_words(old_c, stops) if w not in names]
    new_slot = {w for w in content_words(new_c, stops) if w not in names and not CHANGE.fullmatch(w)}
    return any(similar_word(w, new_slot) for w in old_slot)


# A name written in camel case, each part capitalised ("PureGym", "EasyJet", "OneDrive").
_CAMEL_PARTS = re.compile(r"[A-Z][a-z]{2,}")


def named_by_kind(old_c: str, new_c: str, stops: frozenset[str]) -> list[str]:
    """The older clause's values the newer clause names by the kind their camel-case name
    carries ("Joined the PureGym" / "Cancelled the gym membership": "puregym")."""
    new_words = set(content_words(new_c, stops))
    return [
        token.lower()
        for token in tokens_of(old_c)
        if len(parts := _CAMEL_PARTS.findall(token)) >= 2
        and "".join(parts) == token
        and any(p.lower() in new_words for p in parts[1:])
    ]


def same_frame(old_s: str, new_s: str, stops: frozenset[str], names: frozenset[str], lang: str = "") -> bool:
    """Both sentences are the writer's, or they share a word that is not a value ("the
    rent", "yoga", "number")."""
    if first_person(old_s, names, lang) and first_person(new_s, names, lang):
        return True
    # A word of time ("every", "day") says when, not of what: no frame.
    frame_old = [w for w in content_words(old_s, stops) if w not in names and textutil.stem(w) not in NOT_A_THING]
    frame_new = {w for w in content_words(new_s, stops) if w not in names and textutil.stem(w) not in NOT_A_THING}
    return any(similar_word(w, frame_new) for w in frame_old) or compounded(old_s, new_s) or compounded(new_s, old_s)


def compounded(sentence: str, other: str) -> bool:
    """A word of the other sentence is two adjacent words of this one written as one
    ("hair cut" / "haircuts", "Zahn Arzt" / "Zahnarzt"): one frame."""
    tokens = [t.lower() for t in tokens_of(sentence)]
    pairs = {a + b for a, b in zip(tokens, tokens[1:]) if len(a) > 2 and len(b) > 2 and a.isalpha() and b.isalpha()}
    return bool(pairs) and any(similar_word(w, pairs) for w in words_of(other) if len(w) > 6)


def modifier_of_another(
    old_s: str, new_s: str, stops: frozenset[str], names: frozenset[str] = frozenset()
) -> tuple[str, str] | None:
    """The older statement's noun, which ends its phrase there ("My car is a silver Jazz"),
    is the modifier of another noun in the newer one ("Switched car insurance to ..."): an
    English noun phrase ends in its head, so the newer one is about the insurance, not the
    car. English only: other grammars put the head first ("cours de yoga"), and a noun
    and the verb after it look alike to this reading ("le cours de yoga passe à ..."). The
    two words, else None."""
    if language.language_of(f"{old_s} {new_s}") not in ("en", ""):
        return None
    old_tokens, new_tokens = [t.lower() for t in tokens_of(old_s)], tokens_of(new_s)
    new_lower = [t.lower() for t in new_tokens]
    for j, word in enumerate(new_lower[:-1]):
        if word in stops or not word.isalpha() or word not in old_tokens:
            continue
        head = new_lower[j + 1]
        if not _plain_noun(head, new_tokens[j + 1], stops, names) or any(_one_root(head, w) for w in old_tokens):
            continue  # "Release process owner: ..." / "Nadia owns the release process": the same slot
        if _said_in_other_words(head, old_tokens, stops):
            continue  # "Salary: £48,000 base" / "base pay is £61,500": the pay is the salary
        if word in names:
            # A name ending its phrase, punctuation after it ("a grey VW Golf, reg ..."),
            # then opening the newer clause as the modifier of a noun ("Golf insurance
            # renewed ..."): the name's thing is the subject.
            if j == 0 and re.search(rf"(?i)\b{re.escape(word)}\b\s*(?:[,.;:!?)(]|$)", old_s):
                return word, head
            continue
        i = old_tokens.index(word)
        after_old = old_tokens[i + 1] if i + 1 < len(old_tokens) else ""
        if not after_old or after_old in stops or not after_old.isalpha():
            return word, head
    return None


def _said_in_other_words(head: str, old_tokens: list[str], stops: frozenset[str]) -> bool:
    """A content word of the older statement means the head noun, by meaning ("salary" /
    "pay" 0.93; "car" / "insurance" 0.87): the same thing in other words."""
    words = [w for w in dict.fromkeys(old_tokens) if w.isalpha() and w not in stops and w != head]
    vectors = similarity.meaning_vectors([head, *words]) if words else None
    if vectors is None:
        return False
    vectors = np.asarray(vectors, dtype=np.float32)
    return float((vectors[1:] @ vectors[0]).max()) >= SAME_THING


def _one_root(a: str, b: str) -> bool:
    """Two words of one root by their spelling ("owner" / "owns"): they open with the same
    letters, all but the last of the shorter, three at least."""
    shared = len(os.path.commonprefix([a, b]))
    return shared >= 3 and shared >= min(len(a), len(b)) - 1


def _plain_noun(low: str, token: str, stops: frozenset[str], names: frozenset[str]) -> bool:
    """A lower-case content word that is no verb form by its ending or a closed class
    (a past, a participle, a word of change) and no name."""
    return (
        token.isalpha()
        and token.islower()
        and low not in stops
        and low not in names
        and not low.endswith(("ed", "ing", "ly"))
        and low not in IRREGULAR_PAST
        and not CHANGE.fullmatch(low)
        and textutil.stem(low) not in NOT_A_THING  # "at the vet today": a word of time
    )


def _after_noun(word: str, tokens: list[str], noun_at: int) -> bool:
    """Whether `word` stands in a phrase of "with", "of" or "for" right after the noun at
    `noun_at` ("sync with the design team"), within three words of the preposition."""
    return (
        noun_at + 1 < len(tokens) and tokens[noun_at + 1] in ("with", "of", "for") and word in tokens[noun_at + 2 : noun_at + 5]
    )


def _after_determiner(tokens: list[str], pos: int, stops: frozenset[str]) -> bool:
    before = tokens[pos - 1] if pos else ""
    return pos == 0 or (before.lower() in stops and (pos == 1 or not before[:1].isupper())) or before[:1].isdigit()


def other_kind(old_s: str, new_s: str, stops: frozenset[str], names: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """The same noun with another word in front of it ("the team meeting" / "the client
    meeting"): the two words, else None."""
    old_tokens, new_tokens = tokens_of(old_s), tokens_of(new_s)
    new_lower = [t.lower() for t in new_tokens]
    old_words = {t.lower() for t in old_tokens}
    for j, word in enumerate(new_lower):
        # "the marketing email for the launch" after "the launch": another thing of it.
        if j >= 3 and word in old_words and word not in stops and new_lower[j - 1] in ("the", "a", "an", "our", "my"):
            if new_lower[j - 2] in ("for", "of", "about") and new_lower[j - 3] not in stops and new_lower[j - 3] not in old_words:
                # Not a value or a word of time ("the last Sunday of the month"), nor a name:
                # "Switched over to Hyperoptic for the broadband" names the value for it.
                if (
                    not is_quantity(new_lower[j - 3])
                    and textutil.stem(word) not in NOT_A_THING
                    and not new_tokens[j - 3][:1].isupper()
                ):
                    return new_lower[j - 3], word
    # Only the newer note's noun is read so: a note that names the thing in full ("rent for
    # the flat") is followed by notes that say only "rent" of the same thing ("landlord put
    # rent up to ..."); a newer note that names another ("Rent for the garage spot") is of
    # another thing.
    for a, b in ((new_tokens, old_tokens),):
        # "Rent for the garage spot" after "my rent": the same word, of another thing.
        a_low, b_low = [t.lower() for t in a], {t.lower() for t in b}
        for j in range(len(a_low) - 2):
            if a_low[j] in b_low and a_low[j] not in stops and a_low[j + 1] in ("for", "of"):
                k = j + 3 if a_low[j + 2] in ("the", "a", "an", "my", "our", "his", "her", "their") else j + 2
                # (Its plural is the same thing: "£32 a term for the U12s" after "U12 subs".)
                if k < len(a_low) and a_low[k] not in stops and not _said_in(a_low[k], b_low) and not a[k][:1].isdigit():
                    return a_low[j], a_low[k]
    for i, token in enumerate(old_tokens):
        word = token.lower()
        if i == 0 or word in stops or word not in new_lower or token[:1].isupper():
            continue
        j = new_lower.index(word)
        if j == 0:
            continue
        before_old, before_new = old_tokens[i - 1], new_tokens[j - 1]
        # A capital opening the sentence is the sentence's, not a name's ("Work email" /
        # "Personal email" are two kinds of email).
        if any(
            w.lower() in stops
            or w.lower() in names
            or (w[:1].isupper() and pos > 0)
            or any(c.isdigit() for c in w)
            or CHANGE.fullmatch(w)
            for w, pos in ((before_old, i - 1), (before_new, j - 1))
        ):
            continue
        # A modifier stands after a determiner or opens the sentence ("the team meeting",
        # "Work email"); after a name it is the name's verb ("Hiro covers on-call").
        if not all(_after_determiner(tokens, pos, stops) for tokens, pos in ((old_tokens, i - 1), (new_tokens, j - 1))):
            continue
        a, b = before_old.lower(), before_new.lower()
        # The modifier of one is the other's after the noun, in a phrase of "with", "of"
        # or "for": the same thing named two ways ("Design sync" / "Weekly sync with the
        # design team").
        if _after_noun(b, [t.lower() for t in old_tokens], i) or _after_noun(a, new_lower, j):
            continue
        if a != b and not abbreviates(a, {b}) and not abbreviates(b, {a}):
            return a, b
    return None


def _said_in(word: str, words: set[str]) -> bool:
    """The word, or its singular, is among `words`."""
    return word in words or textutil.stem(word) in {textutil.stem(w) for w in words}


def said_in_parallel(old_s: str, new_s: str) -> bool:
    """The two sentences say it the same way but for the value ("Marco is a sales
    associate" / "Marco is now regional sales manager")."""
    a, b = ([t.lower() for t in tokens_of(x)] for x in (old_s, new_s))
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.5


# Cosine of the words two notes put before a date or an amount (what it is of) from which
# they are one thing said in other words: "gym membership" / "gym fee" 0.95; two things
# stay below: "flight leaves" / "train airport leaves" 0.91, "tax return" / "passport
# renewal" 0.88, "car MOT" / "home insurance renewal" 0.85 (multilingual-e5-small).
SAME_THING = 0.92


# Pronouns of a thing, as an object ("pricing them at £2.40"): English's closed class.
_STANDS_FOR_A_THING = re.compile(r"\b(?:them|those|these)\b", re.I)


def other_thing(
    old_c: str, new_c: str, old_text: str, new_text: str, stops: frozenset[str], *, borrowed_only: bool = False
) -> bool:
    """A date or an amount of another thing: each note names what it is of (the content
    words before the clause's first value) with a word the other note does not have ("the
    tax return" / "the passport renewal"); a change verb or a word of time does not count
    ("the standup moves to X from next week"). With `borrowed_only`, only when a clause
    names nothing of its own and its sentence names the thing (see head_of)."""

    def head(clause: str, *, whole: bool = False) -> list[str]:
        words = []
        for token in tokens_of(clause):
            if is_quantity(token):
                if whole:
                    continue
                break
            low = token.lower()
            # A change word says that it changed, not of what ("maintenant", "now").
            if (
                not is_stopword(low, stops)
                and len(low) > 2
                and textutil.stem(low) not in NOT_A_THING
                and not CHANGE.fullmatch(low)
            ):
                words.append(low)
        return words

    def head_of(clause: str, text: str) -> list[str]:
        # A clause that names nothing before its value ("4 for £10 after 1pm", "we're at
        # $45 a month now") gives the value of what its sentence names before it
        # ("Cinnamon buns at £2.80 each", "Render's new bandwidth limits pushed the bill
        # up"), when that is a thing of two words or more, not a verb alone ("They put
        # it up - we're paying £35 now"). A clause with a word after its value names its
        # thing ("from Monday Dad's evening call will be 7.30pm"); one with a pronoun for
        # it names it before ("Pain au raisin from Saturday, pricing them at £2.40").
        if not borrows(clause):
            return head(clause)
        sentence = next((t for t in textutil.sentences(text) if clause.strip(" .") in t), "")
        before = head(sentence[: sentence.find(clause.strip(" ."))], whole=True)
        return before if len(before) >= 2 else head(clause)

    def borrows(clause: str) -> bool:
        return not head(clause, whole=True) or bool(_STANDS_FOR_A_THING.search(clause))

    if borrowed_only and not (borrows(old_c) or borrows(new_c)):
        return False
    old_words, new_words = words_of(old_text), words_of(new_text)
    old_head, new_head = head_of(old_c, old_text), head_of(new_c, new_text)
    # What a sentence names before a clause that names nothing is its thing when the
    # other note names it too ("Render starter plan, $19/mo" / "Render's new bandwidth
    # limits pushed the bill up - we're at $45 a month now").
    if (borrows(old_c) or borrows(new_c)) and any(
        similar_word(without_possessive(w), {without_possessive(o) for o in old_head}) for w in new_head
    ):
        return False
    old_only = [w for w in old_head if not similar_word(w, new_words)]
    new_only = [w for w in new_head if not similar_word(w, old_words)]
    if not (old_only and new_only):
        return False
    # Said in other words of one thing ("gym membership" / "the gym ... fee", "numéro de
    # portable" / "changé de numéro"): the two heads close in meaning.
    vectors = similarity.meaning_vectors([" ".join(old_head), " ".join(new_head)])
    return vectors is None or float(np.dot(vectors[0], vectors[1])) < SAME_THING


def holds_apart(clause: str, stops: frozenset[str], names: frozenset[str]) -> bool:
    """The clause holds two values apart ("Meeting with X on X at X", "My sister X lives in
    X"): a holder and what it holds, each replaced in a look-alike of another holder."""
    masked = mask_values(clause, stops, names)
    return len(re.findall(rf"(?<![\w@]){PLACEHOLDER}(?![\w@])", masked)) >= 2


def frame_word_swapped(old_c: str, new_c: str, stops: frozenset[str], names: frozenset[str]) -> bool:
    """The two clauses say one frame with one of its words in another's place ("My
    favourite movie is X" / "My favourite book is X"): same length around the values, one
    non-value word differs."""
    old_t = [t.lower() for t in tokens_of(mask_values(old_c, stops, names))]
    new_t = [t.lower() for t in tokens_of(mask_values(new_c, stops, names))]
    if len(old_t) != len(new_t):
        return False
    diff = [(a, b) for a, b in zip(old_t, new_t) if a != b]
    return len(diff) == 1 and diff[0][0] != "x" and diff[0][1] != "x" and diff[0][0] not in stops and diff[0][1] not in stops


# A verb of naming, a closed class of each grammar: "the starter is called Doughbi".
_NAMED = re.compile(r"\b(?:called|named|heißt|s'appelle|se llama|si chiama|se chama|chamado|chamada)\b", re.I)


# Copulas and determiners (closed classes) between a noun and its verb of naming.
_FUNCTION = frozenset("is are was were be been a an the my our his her their its this that".split())


def two_named_things(old_s: str, new_s: str) -> bool:
    """Both name something ("... called X"), and what each names, the content word just
    before its verb of naming, is not in the other and is a person on one side only, by
    meaning ("Sourdough starter is called Doughbi" / "seeing someone called Ines now"):
    two things, each with its name. "My boyfriend is called Sam" / "a guy called Theo"
    name one slot in two words."""

    def named_thing(sentence: str) -> str:
        m = _NAMED.search(sentence)
        if not m:
            return ""
        # The word before the verb, past a copula or a determiner ("is", "a"): "someone"
        # and "somebody" are stopwords and name the thing all the same.
        before = [t.lower() for t in tokens_of(sentence[: m.start()]) if t.isalpha() and t.lower() not in _FUNCTION]
        return before[-1] if before else ""

    old, new = named_thing(old_s), named_thing(new_s)
    return (
        bool(old and new)
        and not similar_word(old, words_of(new_s))
        and not similar_word(new, words_of(old_s))
        and person_noun(old) != person_noun(new)
    )


def two_holders(old_s: str, new_s: str, stops: frozenset[str], names: frozenset[str]) -> bool:
    """Two look-alike statements of two holders: said the same way, each holding two values
    apart, none of the older one's named again ("My sister Eva lives in Vienna" / "My sister
    Marta lives in Graz"), and no word of change."""
    if CHANGE.search(new_s) or not (holds_apart(old_s, stops, names) and holds_apart(new_s, stops, names)):
        return False
    if not said_in_parallel(old_s, new_s):
        return False
    new_words = words_of(new_s)
    return not any(similar_word(t.lower(), new_words) for t in tokens_of(old_s) if t.lower() in names)
