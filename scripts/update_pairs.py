"""Every (older, newer) pair of every scenario in a set of scenario files, judged by the
offline engine's update check alone (rules, then meaning; no database, no candidate
search): the quick loop for work on the judge, before `manage.py evaluate_updates`.

    MEMORY_EMBEDDINGS=local .venv/bin/python scripts/update_pairs.py tests/data/updates*.json [--verbose] [--background]

Counted per file and in all: expected updates found (the pairs a scenario lists), and
false pairs (marked, but neither listed nor implied by a chain A -> B -> C). --background
also judges each scenario memory against the file's background notes, and those notes
among themselves (all non-updates).
--verbose prints each missed and each false pair with the judge's reason.

Each older note is judged with its nearness to the newer one as the update check measures
it (services/updates.py), over the notes the owner would have then, as in
`manage.py evaluate_updates`: the file's background and the scenario's memories before the
newer one. --no-nearness judges without it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

# A -> B -> C allows A -> C: the same closure the pair model is fitted with.
from fit_update_model import closure  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--verbose", "-v", action="store_true")
    parser.add_argument("--background", action="store_true")
    parser.add_argument("--found", action="store_true", help="also print the pairs found")
    parser.add_argument("--no-nearness", action="store_true", help="judge without the owner's nearness")
    args = parser.parse_args()
    os.environ.setdefault("MEMORY_EMBEDDINGS", "local")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
    import django

    django.setup()
    import numpy as np

    from memories import embeddings
    from memories.llm.base import MemoryNote
    from memories.llm.offline import OfflineProvider
    from memories.services.updates import above_typical

    engine = OfflineProvider()
    embedder = None if args.no_nearness else embeddings.get_embedder()
    vectors: dict[str, np.ndarray] = {}

    def vector(text: str) -> np.ndarray:
        if text not in vectors:
            vectors[text] = np.asarray(embedder.embed_documents([text])[0], dtype=np.float32)
        return vectors[text]

    def judged(old: str, new: str, owner: list[str] = ()) -> str:
        near = None
        if embedder is not None:
            others = [float(vector(new) @ vector(t)) for t in owner if t != new]
            near = above_typical(others, {0: float(vector(new) @ vector(old))}).get(0)
        verdicts = engine.judge_updates(
            new=MemoryNote(id=2, summary=new, text=new),
            candidates=[MemoryNote(id=1, summary=old, text=old, nearness=near)],
        )
        return verdicts[0].reason if verdicts else ""

    total = {"expected": 0, "found": 0, "false": 0, "false_scenarios": 0, "scenarios": 0}
    for path in args.files:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        shared = [b["text"] for b in data.get("background", [])]
        background = shared if args.background else []
        counts = {"expected": 0, "found": 0, "false": 0, "false_scenarios": 0, "scenarios": 0}
        # The background notes among themselves, as each scenario's space reads them first:
        # a pair marked here is marked in every scenario.
        for j, new in enumerate(background):
            for old in background[:j]:
                if reason := judged(old, new, background[:j]):
                    counts["false"] += 1
                    if args.verbose:
                        print(f"  FALSE (background, in every scenario) {old!r} -> {new!r}: {reason}")
        for scenario in data["scenarios"]:
            texts = [m["text"] for m in scenario["memories"]]
            expected = {tuple(p) for p in scenario.get("updates", [])}
            allowed = closure(expected)
            counts["scenarios"] += 1
            counts["expected"] += len(expected)
            false_here = False
            for j in range(len(texts)):
                for i in range(j):
                    reason = judged(texts[i], texts[j], shared + texts[:j])
                    if (i, j) in expected:
                        if reason:
                            counts["found"] += 1
                            if args.found:
                                print(f"  found [{scenario.get('id')}] {texts[i]!r} -> {texts[j]!r}: {reason}")
                        elif args.verbose:
                            print(f"  missed [{scenario.get('id')}] {texts[i]!r} -> {texts[j]!r}")
                    elif reason and (i, j) not in allowed:
                        counts["false"] += 1
                        false_here = True
                        if args.verbose:
                            print(f"  FALSE [{scenario.get('id')}] {texts[i]!r} -> {texts[j]!r}: {reason}")
                for old in background:
                    if reason := judged(old, texts[j], shared + texts[:j]):
                        counts["false"] += 1
                        false_here = True
                        if args.verbose:
                            print(f"  FALSE (background) [{scenario.get('id')}] {old!r} -> {texts[j]!r}: {reason}")
            counts["false_scenarios"] += false_here
        print(
            f"{path}: found {counts['found']} / {counts['expected']}, false pairs {counts['false']}"
            f" (in {counts['false_scenarios']} of {counts['scenarios']} scenarios)"
        )
        for key in total:
            total[key] += counts[key]
    if len(args.files) > 1:
        print(
            f"all: found {total['found']} / {total['expected']}, false pairs {total['false']}"
            f" (in {total['false_scenarios']} of {total['scenarios']} scenarios)"
        )


if __name__ == "__main__":
    main()
