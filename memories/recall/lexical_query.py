"""A question as the lexical index is asked it: cut into plain words, and those words as an
FTS5 MATCH expression or a PostgreSQL tsquery.

A question is never passed to MATCH or to_tsquery as typed: it is cut into plain
alphanumeric words, stopwords dropped, and each word quoted (FTS5) or joined with `|`
(tsquery), so FTS syntax in a question is just text.
"""

from __future__ import annotations

import re

from .lexical_index import TEXT_COLUMNS
from ..textutil import STOPWORDS, cjk_terms, has_cjk, words

# The most words of a question sent to the index: a pasted essay must not become a
# thousand-term OR that matches everything.
MAX_QUERY_WORDS = 32

# Anything but letters and digits (of any script) splits a word: what is left can never be
# FTS5 or tsquery syntax.
_PLAIN = re.compile(r"[\W_]+")
_SCOPE_LIKE = re.compile(r"u\d+")


def query_words(text: str) -> list[str]:
    """The words of a question worth searching for: lower-case letters and digits of any
    script (everything FTS could read as syntax is gone), no stopwords, each once. A
    Chinese or Japanese run gives its content pieces (see textutil.cjk_terms)."""
    out: dict[str, None] = {}
    for word in words(text or ""):
        if word in STOPWORDS:
            continue
        for piece in _PLAIN.split(word.lower()):
            if has_cjk(piece):
                for term in cjk_terms(piece):
                    out.setdefault(term, None)
            elif piece and piece not in STOPWORDS and (len(piece) > 1 or piece.isdigit()):
                out.setdefault(piece, None)
    return list(out)[:MAX_QUERY_WORDS]


def fts5_match(query: list[str], *, owner_id: int | None = None, conjunctive: bool = False) -> str:
    # Each word quoted: an FTS5 string, never an operator, column filter or prefix query.
    # `query_words` leaves only letters and digits, so a quote can never end the string early.
    joined = (" AND " if conjunctive else " OR ").join(f'"{w}"' for w in query)
    if owner_id is None:
        # A word shaped like a scope token must not match the scope column.
        return f"{{{' '.join(TEXT_COLUMNS)}}} : ({joined})" if any(_SCOPE_LIKE.fullmatch(w) for w in query) else joined
    return f'scope : "u{int(owner_id)}" AND ({{{" ".join(TEXT_COLUMNS)}}} : ({joined}))'


def tsquery(query: list[str]) -> str:
    return " | ".join(query)


def fts5_phrase(words: list[str]) -> str:
    # Only \w characters are left, so nothing here can end the quoted string or be FTS syntax.
    return '"' + " ".join(words) + '"'
