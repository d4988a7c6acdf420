"""Precision and recall of the offline entity extractor on tests/data/entities_labelled.jsonl.

    .venv/bin/python scripts/eval_entities.py [--before COMMIT] [--show-errors]

"before" is the extractor as it was at COMMIT (default 2df3fc1, before issue 13), loaded
from git; "after" is the working tree's. An entity counts when its exact spelling matches.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def load_before(commit: str):
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{commit}:memories/llm/offline.py"], capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType("memories.llm._offline_before")
    module.__package__ = "memories.llm"
    exec(compile(source, "offline_before.py", "exec"), module.__dict__)
    return module.extract_entities


def score(extract, rows, show_errors=False, label=""):
    tp = fp = fn = 0
    for row in rows:
        got, gold = set(extract(row["text"])), set(row["entities"])
        tp += len(got & gold)
        fp += len(got - gold)
        fn += len(gold - got)
        if show_errors and got != gold:
            print(f"  [{label}] {row['text']}\n      extra {sorted(got - gold)}  missing {sorted(gold - got)}")
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="2df3fc1")
    parser.add_argument("--show-errors", action="store_true")
    parser.add_argument("--data", default=str(ROOT / "tests/data/entities_labelled.jsonl"))
    args = parser.parse_args()
    import django
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
    django.setup()
    from memories.llm.extractive.entities import extract_entities

    rows = [json.loads(line) for line in Path(args.data).read_text(encoding="utf-8").splitlines() if line.strip()]
    print(f"{len(rows)} sentences, {sum(len(r['entities']) for r in rows)} labelled entities")
    print(f"{'extractor':<10} {'precision':>10} {'recall':>8} {'F1':>6}")
    for label, extract in (("before", load_before(args.before)), ("after", extract_entities)):
        p, r, f = score(extract, rows, args.show_errors, label)
        print(f"{label:<10} {p:>10.1%} {r:>8.1%} {f:>6.1%}")


if __name__ == "__main__":
    main()
