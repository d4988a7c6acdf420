#!/usr/bin/env python
"""The offline answer to update questions ("current" and "past"), replayed on the same recalled contexts.

    .venv/bin/python scripts/eval_updates_answers_replay.py dump OUT.pickle FILE.json [FILE.json ...] [--k 5]
    .venv/bin/python scripts/eval_updates_answers_replay.py replay OUT.pickle [...] [--show]

`dump` runs each scenario of the update files (tests/data/updates*.json) as `manage.py
evaluate_updates` does (the real ingest, update check and vectors, in a space rolled back
afterwards) and keeps, for each "current" and "past" question, what recall ranked and the
context the answerer reads. `replay` runs the offline answerer over the kept contexts and
prints, per file and kind of question: the answer names the current value (its first
citation is the expected memory and it holds the expected value, as evaluate_updates counts
it) or, for a past question, cites what held then first; and of the questions whose
expected memory recall ranked first, how many answers lose it, by cause: "not found",
another memory quoted first, or the right memory quoted without the value. Runs on a
throwaway SQLite database. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def setup() -> None:
    os.environ["MEMORY_DATA_DIR"] = tempfile.mkdtemp(prefix="eval-updates-answers-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
    os.environ.setdefault("MEMORY_EMBEDDINGS", "local")
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def dump(out: str, files: list[str], *, k: int) -> None:
    import uuid

    from django.contrib.auth import get_user_model
    from django.db import transaction

    from memories.management.commands.evaluate_updates import _store, load_scenarios
    from memories.services.query import recall_context

    records = []
    for path in files:
        data = load_scenarios(Path(path))
        for scenario in data["scenarios"]:
            with transaction.atomic():
                owner = get_user_model().objects.create_user(username=f"replay-{uuid.uuid4().hex[:12]}")
                for note in data.get("background", []):
                    _store(owner, note)
                ids = [_store(owner, note) for note in scenario["memories"]]
                for q in scenario.get("questions", []):
                    if q["type"] not in ("current", "past"):
                        continue
                    result = recall_context(owner=owner, question=q["q"], k=k)
                    records.append(
                        {
                            "file": Path(path).name,
                            "scenario": scenario.get("id", "?"),
                            "question": q["q"],
                            "type": q["type"],
                            "want": ids[q["expect"]],
                            "value": str(q.get("answer", "")).lower() if q["type"] == "current" else "",
                            "ranked": result.memory_ids,
                            "context": result.to_context(),
                        }
                    )
                transaction.set_rollback(True)
        print(f"{path}: {sum(r['file'] == Path(path).name for r in records)} questions", file=sys.stderr)
        # Written after each file: a long run read before it ends still holds those done.
        Path(out).write_bytes(pickle.dumps(records))


def judge(record: dict, text: str) -> str:
    from memories.llm.base import cited_ids

    cites = cited_ids(text)
    if cites and cites[0] == record["want"] and (not record["value"] or record["value"] in text.lower()):
        return "ok"
    if not cites:
        return "not found"
    if cites[0] != record["want"]:
        return "another first"
    return "value missing"


def replay(paths: list[str], *, show: bool) -> None:
    from memories.llm.extractive import answers

    records = [rec for path in paths for rec in pickle.loads(Path(path).read_bytes())]
    by_file: dict[str, list[tuple[dict, str, str]]] = defaultdict(list)
    for r in records:
        text = answers.answer(question=r["question"], context=r["context"])
        # (contexts dumped before past questions were kept are all "current")
        by_file[f"{r['file']} {r.get('type', 'current')}"].append((r, text, judge(r, text)))
    print(f"{'file, question kind':<42} {'answer right':>15} {'recall first':>13}  lost after recall first")
    total, total_ok = 0, 0
    for name, rows in by_file.items():
        ok = sum(v == "ok" for _, _, v in rows)
        first = [(r, t, v) for r, t, v in rows if r["ranked"][:1] == [r["want"]]]
        lost = Counter(v for _, _, v in first if v != "ok")
        total, total_ok = total + len(rows), total_ok + ok
        print(
            f"{name:<42} {ok:>4}/{len(rows):<3} {100.0 * ok / len(rows):5.1f}% {len(first):>6}/{len(rows):<4}  "
            + ", ".join(f"{k} {n}" for k, n in lost.most_common())
        )
    print(f"{'all':<42} {total_ok:>4}/{total:<3} {100.0 * total_ok / max(total, 1):5.1f}%")
    if show:
        for rows in by_file.values():
            for r, text, verdict in rows:
                if verdict != "ok" and r["ranked"][:1] == [r["want"]]:
                    answer = " | ".join(text.splitlines()[2:]) or text
                    print(
                        f"\n[{r['file']} {r['scenario']}] {verdict}: {r['question']} (want #{r['want']}, {r['value']!r})\n  {answer}"
                    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out")
    d.add_argument("files", nargs="+")
    d.add_argument("--k", type=int, default=5)
    r = sub.add_parser("replay")
    r.add_argument("contexts", nargs="+")
    r.add_argument("--show", action="store_true", help="Print each answer lost after recall ranked its memory first.")
    args = parser.parse_args()
    setup()
    if args.command == "dump":
        dump(args.out, args.files, k=args.k)
    else:
        replay(args.contexts, show=args.show)


if __name__ == "__main__":
    main()
