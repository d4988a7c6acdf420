#!/usr/bin/env python
"""The offline answer's "not found" against "cited", replayed on the same recalled contexts.

    .venv/bin/python scripts/eval_answers_replay.py dump DATASET.json CONTEXTS.pickle [--as-notes] [--k 50]
    .venv/bin/python scripts/eval_answers_replay.py replay CONTEXTS.pickle [...] [--try "name: module.CONST=value ..."] [--show 5]

`dump` recalls each question's context once (hybrid, local embeddings, as `manage.py
evaluate --answers` does) and keeps it; `replay` runs the answerer over the kept contexts,
so two versions of the answerer, or several settings of it (--try, a constant of a module
of memories/llm/extractive/ for that row only), are compared on the same evidence. For
each row it prints, per sample: the share of answerable questions (categories 1-4) still
cited and of unanswerable ones (5) answered "not found". With three samples or more it
also picks, for each sample held out, the row the others do best on (the most "not
found" while cited stays within --cost points of the first row there) and shows it on
the held-out one. Runs on a throwaway SQLite database. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pickle
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def setup() -> None:
    os.environ["MEMORY_DATA_DIR"] = tempfile.mkdtemp(prefix="eval-answers-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
    os.environ.setdefault("MEMORY_EMBEDDINGS", "local")
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def dump(dataset: str, out: str, *, as_notes: bool, k: int) -> None:
    import uuid

    from django.contrib.auth import get_user_model
    from django.db import transaction

    from memories.management.commands.evaluate import EVALUATE, bulk_remember, load_locomo
    from memories.recall import recall
    from memories.services.embed import embed_missing

    records = []
    for conv in load_locomo(Path(dataset)):
        with transaction.atomic():
            owner = get_user_model().objects.create_user(username=f"replay-{uuid.uuid4().hex[:12]}")
            bulk_remember(owner=owner, actor=EVALUATE, items=conv.memory_items(as_notes=as_notes))
            outcome = embed_missing(owner=owner)
            if outcome.error:
                raise SystemExit(outcome.error)
            sample = f"{conv.sample_id}{' notes' if as_notes else ''}"
            asked = [(q["question"], q["category"], q["answer"]) for q in conv.questions] + [
                (q, 5, "") for q in conv.unanswerable
            ]
            for question, category, gold in asked:
                context = recall(owner=owner, question=question, strategy="hybrid", k=k).to_context()
                records.append({"sample": sample, "question": question, "category": category, "gold": gold, "context": context})
            transaction.set_rollback(True)
        print(f"{sample}: {sum(r['sample'] == sample for r in records)} questions", file=sys.stderr)
    Path(out).write_bytes(pickle.dumps(records))


def cache_meaning() -> None:
    """Each text is embedded once across rows: the rows differ in the answerer, not the texts."""
    import numpy as np

    from memories.llm.extractive import similarity

    source = similarity.meaning()
    if source is None:
        return
    seen: dict[tuple[bool, str], np.ndarray] = {}

    class Cached:
        def __getattr__(self, name):
            return getattr(source, name)

        def _many(self, texts, query):
            missing = list(dict.fromkeys(t for t in texts if (query, t) not in seen))
            if missing:
                made = source.questions(missing) if query else source.documents(missing)
                seen.update({(query, t): v for t, v in zip(missing, made, strict=True)})
            return np.stack([seen[(query, t)] for t in texts]) if texts else source.documents(texts)

        def documents(self, texts):
            return self._many(list(texts), False)

        def questions(self, texts):
            return self._many(list(texts), True)

    cached = Cached()
    similarity.use_meaning(lambda: cached)


def run_row(records, settings: dict[str, str]) -> dict[str, tuple[list[bool], list[bool]]]:
    from memories.llm.base import cited_ids

    settings = dict(settings)
    answers = importlib.import_module(f"memories.llm.extractive.{settings.pop('answerer', ANSWERER)}")

    saved = []
    for dotted, value in settings.items():
        module_name, name = dotted.rsplit(".", 1)
        module = importlib.import_module(f"memories.llm.extractive.{module_name}")
        old = getattr(module, name)
        saved.append((module, name, old))
        # bool("False") is True: a switch is read as eval_recall_arms.py reads one.
        setattr(module, name, value in ("1", "true", "True") if isinstance(old, bool) else type(old)(value))
    out: dict[str, tuple[list[bool], list[bool]]] = defaultdict(lambda: ([], []))
    try:
        for r in records:
            text = answers.answer(question=r["question"], context=r["context"])
            r.setdefault("answers", []).append(text)
            cited = bool(cited_ids(text))
            out[r["sample"]][1 if r["category"] == 5 else 0].append(cited if r["category"] != 5 else not cited)
    finally:
        for module, name, value in saved:
            setattr(module, name, value)
    return out


ANSWERER = "answers"


def share(values: list[bool]) -> float:
    return 100.0 * sum(values) / len(values) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("dataset")
    d.add_argument("out")
    d.add_argument("--as-notes", action="store_true")
    d.add_argument("--k", type=int, default=50)
    r = sub.add_parser("replay")
    r.add_argument("contexts", nargs="+")
    r.add_argument(
        "--try",
        dest="tries",
        action="append",
        default=[],
        help='"name: module.CONSTANT=value ..." (answerer=MODULE: another answerer for that row)',
    )
    r.add_argument("--cost", type=float, default=3.0, help="Cited points a fold may lose against the first row.")
    r.add_argument("--answerer", default="answers", help="The module of memories/llm/extractive/ that answers.")
    r.add_argument("--show", type=int, default=0, help="Print the answers of the first row that differ from the last, up to N.")
    args = parser.parse_args()
    setup()
    if args.command == "dump":
        dump(args.dataset, args.out, as_notes=args.as_notes, k=args.k)
        return
    global ANSWERER
    ANSWERER = args.answerer
    cache_meaning()
    records = [rec for path in args.contexts for rec in pickle.loads(Path(path).read_bytes())]
    rows = [("now", {})] + [
        (name.strip(), dict(a.split("=", 1) for a in rest.split())) for name, _, rest in (t.partition(":") for t in args.tries)
    ]
    results = {name: run_row(records, settings) for name, settings in rows}
    samples = list(results[rows[0][0]])
    print(f"{'row':<24} {'sample':<16} {'cited':>7} {'not found':>10}")
    for name, per in results.items():
        cited = [x for s in samples for x in per[s][0]]
        abstained = [x for s in samples for x in per[s][1]]
        print(f"{name:<24} {'all':<16} {share(cited):>6.1f}% {share(abstained):>9.1f}%   ({len(cited)} / {len(abstained)})")
        for s in samples:
            print(f"{'':<24} {s:<16} {share(per[s][0]):>6.1f}% {share(per[s][1]):>9.1f}%")
    if len(samples) >= 3 and len(rows) > 1:
        print("\nfolds: each sample held out, the row chosen on the others")
        for held in samples:
            train = [s for s in samples if s != held]

            def on(name, which, group):
                return share([x for s in group for x in results[name][s][which]])

            base = on(rows[0][0], 0, train)
            ok = [name for name, _ in rows if on(name, 0, train) >= base - args.cost]
            pick = max(ok, key=lambda name: (on(name, 1, train), on(name, 0, train)))
            print(f"  {held:<16} chose {pick:<20} there {on(pick, 0, [held]):.1f}% cited, {on(pick, 1, [held]):.1f}% not found")
    if args.show:
        shown = 0
        for rec in records:
            a = rec["answers"]
            if a[0] != a[-1] and shown < args.show:
                shown += 1
                print(f"\n[{rec['sample']} cat {rec['category']}] {rec['question']} (gold: {rec['gold']})")
                print("  first:", a[0][:300].replace("\n", " | "))
                print("  last: ", a[-1][:300].replace("\n", " | "))


if __name__ == "__main__":
    main()
