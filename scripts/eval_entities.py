"""Precision and recall of the offline entity extractor on labelled sentences.

    .venv/bin/python scripts/eval_entities.py [--before COMMIT] [--show-errors]
    .venv/bin/python scripts/eval_entities.py --data tests/data/entities_multilingual_dev.jsonl --base main

On tests/data/entities_labelled.jsonl, "before" is the extractor as it was at COMMIT
(default 2df3fc1, before issue 13), loaded from git. With --base COMMIT the extractor of
that commit is measured too (in a temporary worktree), on any data. "after" is the working
tree's. An entity counts when its exact spelling matches.

Rows may carry "lang" (the language they are written in): the figures are then given per
language too, with the stopword topics and stopword entities (stopwords-iso's list for
that language: pronouns, articles, auxiliaries) that no note should get.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import types
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
ROOT = Path(os.environ.get("EVAL_ENTITIES_ROOT", HERE))
sys.path.insert(0, str(ROOT))


def load_before(commit: str):
    source = subprocess.run(
        ["git", "-C", str(HERE), "show", f"{commit}:memories/llm/offline.py"], capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType("memories.llm._offline_before")
    module.__package__ = "memories.llm"
    exec(compile(source, "offline_before.py", "exec"), module.__dict__)
    return module.extract_entities


def measure(extract, topics, rows, show_errors=False, label=""):
    """{group: {"tp","fp","fn","stop_topics","stop_entities"}} for "all" and each language."""
    import stopwordsiso

    counts = defaultdict(lambda: defaultdict(int))
    for row in rows:
        got_list = extract(row["text"])
        got, gold = set(got_list), set(row["entities"])
        lang = row.get("lang", "")
        # English keeps the engine's own list (stopwords-iso's English one holds "home", "work").
        stops = (
            {w.lower() for w in stopwordsiso.stopwords(lang)} if lang not in ("", "en") and stopwordsiso.has_lang(lang) else set()
        )
        bad_topics = [t for t in topics(row["text"], got_list)] if topics and stops else []
        bad_topics = [t for t in bad_topics if t.lower() in stops]
        bad_entities = [e for e in got if e.lower() in stops]
        for key in ("all", lang) if lang else ("all",):
            c = counts[key]
            c["tp"] += len(got & gold)
            c["fp"] += len(got - gold)
            c["fn"] += len(gold - got)
            c["stop_topics"] += len(bad_topics)
            c["stop_entities"] += len(bad_entities)
        if show_errors and (got != gold or bad_topics):
            print(f"  [{label}] {row['text']}\n      extra {sorted(got - gold)}  missing {sorted(gold - got)}", end="")
            print(f"  stopword topics {bad_topics}" if bad_topics else "")
    return {k: dict(v) for k, v in counts.items()}


def figures(c):
    tp, fp, fn = c.get("tp", 0), c.get("fp", 0), c.get("fn", 0)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def score(extract, rows, show_errors=False, label=""):
    return figures(measure(extract, None, rows, show_errors, label)["all"])


def _setup():
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
    django.setup()
    from memories.llm.extractive.entities import extract_entities, topics_of

    return extract_entities, topics_of


def _at_commit(commit: str, data: str, show_errors: bool) -> dict:
    """The extractor of `commit`, measured by this script in a temporary worktree."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(HERE), "worktree", "add", "--detach", "-q", str(tree), commit], check=True)
        try:
            env = {**os.environ, "EVAL_ENTITIES_ROOT": str(tree)}
            argv = [sys.executable, __file__, "--data", data, "--json"] + (["--show-errors"] if show_errors else [])
            out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout
        finally:
            subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force", str(tree)], check=True)
    lines = out.splitlines()
    for line in lines[:-1]:
        print(line.replace("[after]", f"[{commit}]"))
    return json.loads(lines[-1])


def _print(label, result):
    for key in ["all", *sorted(k for k in result if k != "all")]:
        p, r, f = figures(result[key])
        c = result[key]
        print(
            f"{label:<10} {key:<4} {p:>10.1%} {r:>8.1%} {f:>6.1%}   fp {c.get('fp', 0):>3}  fn {c.get('fn', 0):>3}"
            f"   stopword topics {c.get('stop_topics', 0):>2}  stopword entities {c.get('stop_entities', 0):>2}"
        )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="2df3fc1", help="the old offline.py, on entities_labelled.jsonl")
    parser.add_argument("--base", default="", help="also measure the extractor at this commit")
    parser.add_argument("--show-errors", action="store_true")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", default=str(HERE / "tests/data/entities_labelled.jsonl"))
    args = parser.parse_args()
    rows = [json.loads(line) for line in Path(args.data).read_text(encoding="utf-8").splitlines() if line.strip()]
    extract_entities, topics_of = _setup()
    if args.json:
        print(json.dumps(measure(extract_entities, topics_of, rows, args.show_errors, "after")))
        return
    print(f"{len(rows)} sentences, {sum(len(r['entities']) for r in rows)} labelled entities")
    print(f"{'extractor':<10} {'lang':<4} {'precision':>10} {'recall':>8} {'F1':>6}")
    if args.base:
        _print(args.base, _at_commit(args.base, str(Path(args.data).resolve()), args.show_errors))
    elif Path(args.data).name == "entities_labelled.jsonl":
        _print("before", measure(load_before(args.before), None, rows, args.show_errors, "before"))
    _print("after", measure(extract_entities, topics_of, rows, args.show_errors, "after"))


if __name__ == "__main__":
    main()
