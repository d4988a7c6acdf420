#!/usr/bin/env python
"""Recall of a git revision against today's, in one process: CPU time (less moved by a
shared machine's load than wall time) and whether both recall the same.

    .venv/bin/python scripts/bench_recall_ab.py --data-dir DIR [--baseline main] [--embeddings off local]
        [--queries 80] [--part recall|words] [--gc-freeze] [--seed N] [--questions FILE]

DIR is a store kept by `bench_recall.py --data-dir DIR` (its questions are drawn the same
way). Each question is asked of every code and backend in turn, which code goes first
alternating; the question's vector and latent terms are made for real each time. Three
clocks per question: wall, the asking thread's CPU, and the process's CPU (the asking
thread plus the workers that embed the question and search its latent terms: what the
question costs the machine). `--part words` times the words arm alone
(search.lexical_search). `--gc-freeze`: after the warm-up, move everything alive to the
collector's permanent generation (gc.freeze), as a server may do once it has loaded.
Prints numbers and how many full collections ran, and on which run's questions; asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def query_words_of(code):
    # A baseline from before round 11 cut a question into words in recall/search.py.
    lexical_query = getattr(code.recall, "lexical_query", None)
    return (lexical_query or code.recall.search).query_words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--embeddings", nargs="+", default=["off"])
    parser.add_argument("--queries", type=int, default=80)
    parser.add_argument("--part", choices=["recall", "words"], default="recall")
    parser.add_argument("--gc-freeze", action="store_true")
    parser.add_argument(
        "--seed", type=int, help="Draw the questions from this seed (default: the store's size, as bench_recall.py does)."
    )
    parser.add_argument(
        "--questions", type=Path, help="Ask these questions instead (a text file, one a line; --queries caps how many)."
    )
    args = parser.parse_args()
    os.environ["MEMORY_DATA_DIR"] = str(args.data_dir.resolve())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    import memories
    from bench_recall import realistic_question
    from benchlib import code_at, percentile

    old = code_at(ROOT, args.baseline)
    owner = get_user_model().objects.get(username="bench-kept")
    size = owner.memories.count()
    asking = random.Random(size if args.seed is None else args.seed)
    questions = [realistic_question(asking) for _ in range(args.queries)]
    if args.questions:
        questions = [line.strip() for line in args.questions.read_text().splitlines() if line.strip()][: args.queries]
    now = timezone.make_aware(datetime(2024, 1, 1)) + timedelta(hours=size)

    def ask(code, question, backend):
        if args.part == "words":
            return code.recall.lexical.relevance(owner, query_words_of(code)(question), 150)
        code.embeddings._queries.clear()
        code.recall.latent_terms._questions.clear()
        if code.embeddings.local._questions:
            code.embeddings.local._questions.forget()
        with code.embeddings.using(backend):
            found = code.recall.recall(owner=owner, question=question, strategy="hybrid", k=50, now=now)
        return [r.memory.pk for r in found.memories]

    codes = {args.baseline: old, "now": memories}
    for question in questions[:3]:  # caches warmed
        for code in codes.values():
            for backend in args.embeddings:
                ask(code, question, backend)
    if args.gc_freeze:
        gc.collect()
        gc.freeze()
    full = {"n": 0, "ms": 0.0, "began": 0.0, "asking": None}
    # Which run's question each full collection fell on: one process serves both codes, so
    # a collection brought on by one code's garbage may be paid by the other's question.
    fell_on: dict[tuple, int] = {}

    def collections(phase, info):
        if info["generation"] == 2:
            if phase == "start":
                full["began"] = time.perf_counter()
            else:
                full["n"] += 1
                full["ms"] += (time.perf_counter() - full["began"]) * 1000
                if full["asking"] is not None:
                    fell_on[full["asking"]] = fell_on.get(full["asking"], 0) + 1

    gc.callbacks.append(collections)
    runs = [(name, backend) for backend in args.embeddings for name in codes]
    clocks = {run: {"wall": [], "thread": [], "process": []} for run in runs}
    same = dict.fromkeys(args.embeddings, 0)
    loads = [os.getloadavg()[0]]
    for i, question in enumerate(questions):
        for backend in args.embeddings:
            answers = {}
            for name in list(codes)[:: 1 if i % 2 == 0 else -1]:
                full["asking"] = (name, backend)
                began, thread, process = time.perf_counter(), time.thread_time(), time.process_time()
                answers[name] = ask(codes[name], question, backend)
                full["asking"] = None
                clock = clocks[(name, backend)]
                clock["wall"].append((time.perf_counter() - began) * 1000)
                clock["thread"].append((time.thread_time() - thread) * 1000)
                clock["process"].append((time.process_time() - process) * 1000)
            same[backend] += answers[args.baseline] == answers["now"]
        if i % 10 == 9:
            loads.append(os.getloadavg()[0])
    print(
        f"{args.part}, {size} memories, load average {min(loads):.1f}-{max(loads):.1f}, "
        f"{full['n']} full collections ({full['ms']:.0f} ms wall){', gc frozen after warm-up' if args.gc_freeze else ''}"
    )
    for backend in args.embeddings:
        print(f"  embeddings {backend}: the same result for {same[backend]} of {len(questions)} questions")
    print(
        f"  {'':>22}  {'wall p50':>8} {'p95':>7}  {'thread CPU p50':>14} {'p95':>6} {'mean':>6}  {'process CPU p50':>15} {'p95':>6} {'mean':>6}"
        "  full collections"
    )
    for name, backend in runs:
        w, t, p = (clocks[(name, backend)][k] for k in ("wall", "thread", "process"))
        print(
            f"  {name + ' ' + backend:>22}  {statistics.median(w):8.1f} {percentile(w, 95):7.1f}  "
            f"{statistics.median(t):14.1f} {percentile(t, 95):6.1f} {statistics.mean(t):6.1f}  "
            f"{statistics.median(p):15.1f} {percentile(p, 95):6.1f} {statistics.mean(p):6.1f}"
            f"  {fell_on.get((name, backend), 0):16}"
        )


if __name__ == "__main__":
    main()
