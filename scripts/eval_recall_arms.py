#!/usr/bin/env python
"""Recall per conversation: each arm alone, and `hybrid` with settings varied, on LoCoMo.

    .venv/bin/python scripts/eval_recall_arms.py ../shared/data/locomo-dev.json \\
        [--try "name: fusion.W_MEANING_ARM=0.25 meaning.MEANING_POOL=50" ...] [--conversations N]

Prints evidence recall at k=5/10/25/50 for every conversation apart: the words alone
(per-owner BM25, no signals), the meaning arm alone (the local model), `hybrid` with
embeddings off and with the local model, and `hybrid` with the local model once per
--try, each setting a constant of a module of memories/recall/ for that run only. Then,
for each conversation held out, which row the others pick (by the mean of R@5–50) and how
it does on the held-out one: a choice that only helps the conversations it was picked on
shows here.

--ranks N prints, for every question of category N, where each row placed its evidence
turns: what recall at k hides when the evidence moves within the first places.

--as-notes stores each turn as a note of its own (no source position, no "Speaker: "
opening): what the conversation's shape lends is gone, as in a collection of dated notes.

One k=50 list is cut at each k (within a point of `manage.py evaluate`, which asks once
per k). Runs on a throwaway SQLite database; the memories are embedded through the real
pipeline (services/embed.py). Prints numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
KS = (5, 10, 25, 50)


def parse_try(text: str) -> tuple[str, dict[str, str]]:
    name, _, assignments = text.partition(":")
    settings = dict(a.split("=", 1) for a in assignments.split())
    return name.strip(), settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset")
    parser.add_argument("--try", dest="tries", action="append", default=[], help='"name: module.CONSTANT=value ..."')
    parser.add_argument("--conversations", type=int, help="Only the first N conversations.")
    parser.add_argument(
        "--asked", choices=("now", "after"), default="now", help="When questions are asked (as `manage.py evaluate --asked`)."
    )
    parser.add_argument(
        "--rows",
        nargs="*",
        choices=("words", "meaning", "sparse", "off", "local"),
        default=["words", "meaning", "off", "local"],
        help="The fixed rows to run (default: all but sparse, the latent-terms arm alone); the --try rows always run.",
    )
    parser.add_argument(
        "--as-notes", action="store_true", help="Each turn stored as a note of its own (as `manage.py evaluate --as-notes`)."
    )
    parser.add_argument(
        "--digests",
        action="store_true",
        help="Build digests after embedding, as the consolidation run does, and let recall use them "
        "(a --try of digests.W_DIGEST=0 is the row without them).",
    )
    parser.add_argument(
        "--ranks",
        type=int,
        action="append",
        default=[],
        help="Print, for each question of this category, where each row ranked its evidence turns (- past 50).",
    )
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="eval-arms-"))
    os.environ["MEMORY_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    import memories.recall as recall_package
    from memories import embeddings
    from memories.recall import search
    from memories.recall.lexical_query import query_words
    from memories.management.commands.evaluate import bulk_remember, load_locomo
    from memories.recall import recall
    from memories.recall.meaning import MeaningArm
    from memories.recall.latent_terms import TermsArm
    from memories.services.digests import build_digests
    from memories.services.embed import embed_missing
    from django.conf import settings as django_settings

    django_settings.MEMORY_DIGESTS = args.digests

    modules = {
        m.name: importlib.import_module(f"memories.recall.{m.name}") for m in pkgutil.iter_modules(recall_package.__path__)
    }

    def hybrid(backend: str, settings: dict[str, str]):
        def ranked(owner, question, now=None):
            saved = []
            for dotted, value in settings.items():
                module, name = dotted.split(".")
                saved.append((modules[module], name, getattr(modules[module], name)))
                kind = type(saved[-1][2])
                setattr(modules[module], name, value in ("1", "true", "True") if kind is bool else kind(value))
            try:
                with embeddings.using(backend):
                    return recall(owner=owner, question=question, strategy="hybrid", k=50, now=now).memory_ids
            finally:
                for module, name, value in saved:
                    setattr(module, name, value)

        return ranked

    def words_alone(owner, question, now=None):
        return [h.memory_id for h in search.lexical_search(owner=owner, query=query_words(question), limit=50)]

    def meaning_alone(owner, question, now=None):
        # The arm as recall runs it (the question's names left out, hubs discounted).
        with embeddings.using("local"):
            return [pk for pk, _ in MeaningArm.begin(owner, question).nearest(50)]

    def sparse_alone(owner, question, now=None):
        # The latent-terms arm alone, as recall runs it (recall/latent_terms.py).
        with embeddings.using("local"):
            return [pk for pk, _ in TermsArm.begin(owner, question).nearest(50)]

    fixed = {
        "sparse": ("sparse alone", sparse_alone),
        "words": ("words alone", words_alone),
        "meaning": ("meaning alone", meaning_alone),
        "off": ("hybrid, off", hybrid("off", {})),
        "local": ("hybrid + local", hybrid("local", {})),
    }
    rows = dict(fixed[r] for r in args.rows)
    for text in args.tries:
        name, settings = parse_try(text)
        rows[name] = hybrid("local", settings)

    conversations = load_locomo(Path(args.dataset))[: args.conversations]
    found: dict[str, dict[str, dict[int, float]]] = {name: {} for name in rows}
    # The same by category: found_cat[name][(conversation, category)][k], asked_cat[(conversation, category)].
    found_cat: dict[str, dict[tuple[str, int], dict[int, float]]] = {name: {} for name in rows}
    asked_cat: dict[tuple[str, int], int] = {}
    asked: dict[str, int] = {}
    try:
        call_command("migrate", verbosity=0)
        for conv in conversations:
            owner = get_user_model().objects.create_user(username=f"arms-{conv.sample_id}")
            stored = bulk_remember(owner=owner, items=conv.memory_items(as_notes=args.as_notes))
            with embeddings.using("local"):
                outcome = embed_missing(owner=owner)
            if outcome.error:
                sys.exit(f"local embeddings: {outcome.error}")
            if args.digests:
                started = time.monotonic()
                with embeddings.using("local"):
                    made = build_digests(owner)
                print(f"digests {conv.sample_id}: {made} built in {time.monotonic() - started:.2f} s", flush=True)
            dia_of = {m.pk: turn.dia_id for m, turn in zip(stored, conv.turns, strict=True)}
            asked[conv.sample_id] = len(conv.questions)
            for qa in conv.questions:
                key = (conv.sample_id, qa["category"])
                asked_cat[key] = asked_cat.get(key, 0) + 1
            for name, ranked in rows.items():
                sums = dict.fromkeys(KS, 0.0)
                for qa in conv.questions:
                    ids = ranked(owner, qa["question"], conv.asked_at(qa, args.asked))
                    evidence = set(qa["evidence"])
                    if qa["category"] in args.ranks:
                        place = {dia_of.get(pk): i + 1 for i, pk in enumerate(ids)}
                        where = " ".join(f"{e}@{place.get(e, '-')}" for e in qa["evidence"])
                        print(f"  {name[:20]:20} {where:24} {qa['question'][:90]}")
                    by_cat = found_cat[name].setdefault((conv.sample_id, qa["category"]), dict.fromkeys(KS, 0.0))
                    for k in KS:
                        share = len(evidence & {dia_of.get(pk) for pk in ids[:k]}) / len(evidence)
                        sums[k] += share
                        by_cat[k] += share
                found[name][conv.sample_id] = sums
                print(
                    f"{name:40} {conv.sample_id:>10} " + " ".join(f"{100 * sums[k] / len(conv.questions):5.1f}" for k in KS),
                    flush=True,
                )
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)

    def recall_at(name, convs):
        n = sum(asked[c] for c in convs)
        return [100 * sum(found[name][c][k] for c in convs) / n for k in KS]

    ids = list(asked)
    print(f"\n{'R@5 / 10 / 25 / 50':40} " + " ".join(f"{c:>25}" for c in [*ids, "all"]))
    for name in rows:
        cells = [recall_at(name, [c]) for c in ids] + [recall_at(name, ids)]
        print(f"{name:40} " + " ".join(" ".join(f"{x:5.1f}" for x in cell) + " " for cell in cells))
    categories = sorted({cat for _, cat in asked_cat})
    for cat in categories:
        print(f"\ncategory {cat}, R@5 / 10 / 25 / 50")
        for name in rows:
            cells = []
            for convs in [[c] for c in ids] + [ids]:
                n = sum(asked_cat.get((c, cat), 0) for c in convs)
                got = [sum(found_cat[name].get((c, cat), {}).get(k, 0.0) for c in convs) for k in KS]
                cells.append(" ".join(f"{100 * x / n if n else 0:5.1f}" for x in got) + " ")
            print(f"{name:40} " + " ".join(cells))
    hybrids = [name for name in rows if name not in ("words alone", "meaning alone", "sparse alone")]
    if len(ids) > 1:
        print("\nPicked on the others (mean of R@5-50), shown on the held-out conversation:")
        for held in ids:
            others = [c for c in ids if c != held]
            best = max(hybrids, key=lambda name: sum(recall_at(name, others)))
            print(f"  {held}: {best!r} " + " / ".join(f"{x:.1f}" for x in recall_at(best, [held])))


if __name__ == "__main__":
    main()
