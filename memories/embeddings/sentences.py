"""The embedding layer as the offline engine sees it (llm.extractive.similarity's Meaning):
sentences and questions to vectors, and the hubness shift. The extractive layer may not
import the embeddings, so apps.py hands it `active_meaning`."""

import threading
from collections import OrderedDict

import numpy as np

from . import embed_question, get_embedder, hubness

SENTENCE_CACHE_SIZE = 20_000  # 384 floats a sentence with the local model: about 30 MB
_sentence_vectors: OrderedDict = OrderedDict()
_sentence_lock = threading.Lock()


class _EmbedderMeaning:
    """The embedding layer as the offline engine sees it (llm.extractive.similarity.Meaning)."""

    def __init__(self, embedder):
        self.embedder = embedder

    def documents(self, texts):
        # An answer embeds the sentences of every memory it reads, and the same memories
        # are read for question after question: each sentence's vector is kept.
        key = f"{self.embedder.name}:{self.embedder.model}"
        with _sentence_lock:
            missing = list(dict.fromkeys(t for t in texts if (key, t) not in _sentence_vectors))
        if missing:
            fresh = self.embedder.embed_documents(missing)
            with _sentence_lock:
                for text, vector in zip(missing, fresh, strict=True):
                    _sentence_vectors[(key, text)] = vector
                    _sentence_vectors.move_to_end((key, text))
                while len(_sentence_vectors) > SENTENCE_CACHE_SIZE:
                    _sentence_vectors.popitem(last=False)
        found = dict(zip(missing, fresh, strict=True)) if missing else {}
        with _sentence_lock:
            for text in texts:
                if text not in found and (key, text) in _sentence_vectors:
                    found[text] = _sentence_vectors[(key, text)]
        gone = [t for t in dict.fromkeys(texts) if t not in found]  # pushed out by another thread meanwhile
        if gone:
            found.update(zip(gone, self.embedder.embed_documents(gone), strict=True))
        rows = [found[t] for t in texts]
        return np.vstack(rows).astype(np.float32) if rows else np.zeros((0, self.embedder.dim), dtype=np.float32)

    def questions(self, texts):
        return np.vstack([embed_question(self.embedder, text) for text in texts])

    def shifted_question(self, question, documents):
        content_free = hubness.content_free_direction(self.embedder)
        return hubness.shifted_question(question, typical=hubness.typical_memory(documents), content_free=content_free)

    def content_free(self):
        direction = hubness.content_free_direction(self.embedder)
        return direction / (np.linalg.norm(direction) or 1.0)


def active_meaning():
    """The active embedding backend for the offline engine, or None when it is off."""
    embedder = get_embedder()
    return None if embedder is None else _EmbedderMeaning(embedder)
