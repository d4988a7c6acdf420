#!/usr/bin/env python
"""Recall of a git revision against today's, in one process: the asking thread's CPU time
(less moved by a shared machine's load than wall time) and whether both recall the same.

    .venv/bin/python scripts/bench_recall_ab.py --data-dir DIR [--baseline main] [--embeddings off]
        [--queries 80] [--part recall|words]

DIR is a store kept by `bench_recall.py --data-dir DIR` (its questions are drawn the same
way). Each question is asked of both codes in turn, which goes first alternating; the
question's vector and latent terms are made for real each time. `--part words` times the
words arm alone (search.lexical_search). Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
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
    parser.add_argument("--embeddings", default="off")
    parser.add_argument("--queries", type=int, default=80)
    parser.add_argument("--part", choices=["recall", "words"], default="recall")
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
    asking = random.Random(size)
    questions = [realistic_question(asking) for _ in range(args.queries)]
    now = timezone.make_aware(datetime(2024, 1, 1)) + timedelta(hours=size)

    def ask(code, question):
        if args.part == "words":
            return code.recall.lexical.relevance(owner, query_words_of(code)(question), 150)
        code.embeddings._queries.clear()
        code.recall.latent_terms._questions.clear()
        if code.embeddings.local._questions:
            code.embeddings.local._questions.forget()
        with code.embeddings.using(args.embeddings):
            found = code.recall.recall(owner=owner, question=question, strategy="hybrid", k=50, now=now)
        return [r.memory.pk for r in found.memories]

    codes = {args.baseline: old, "now": memories}
    for question in questions[:3]:  # caches warmed
        for code in codes.values():
            ask(code, question)
    wall = {name: [] for name in codes}
    cpu = {name: [] for name in codes}
    same = 0
    for i, question in enumerate(questions):
        answers = {}
        for name in list(codes)[:: 1 if i % 2 == 0 else -1]:
            began, began_cpu = time.perf_counter(), time.thread_time()
            answers[name] = ask(codes[name], question)
            wall[name].append((time.perf_counter() - began) * 1000)
            cpu[name].append((time.thread_time() - began_cpu) * 1000)
        same += answers[args.baseline] == answers["now"]
    print(
        f"{args.part}, embeddings {args.embeddings}, {size} memories, load {os.getloadavg()[0]:.1f}: "
        f"the same result for {same} of {len(questions)} questions"
    )
    for name in codes:
        w, c = wall[name], cpu[name]
        print(
            f"  {name:>12}: wall p50 {statistics.median(w):7.1f} p95 {percentile(w, 95):7.1f} ms | "
            f"asking thread CPU p50 {statistics.median(c):6.1f} p95 {percentile(c, 95):6.1f} mean {statistics.mean(c):6.1f} ms"
        )


if __name__ == "__main__":
    main()
