#!/usr/bin/env python
"""A random sample of the links the offline consolidation makes on LoCoMo conversations, to
label by hand: do the two memories share a topic that does not depend on who spoke?

    .venv/bin/python scripts/sample_links.py [--n 40] [--seed 5] > sample.jsonl
    .venv/bin/python scripts/sample_links.py --score tests/data/locomo_links_labelled.jsonl

Each printed line: {"a", "b", "relationship", "shares_topic": null}; fill in true/false.
--score prints the share of labelled links marked true.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default=str(ROOT.parent.parent / "shared/data/locomo-dev.json"))
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--score")
    args = parser.parse_args()
    if args.score:
        rows = [json.loads(line) for line in Path(args.score).read_text().splitlines() if line.strip()]
        labelled = [r for r in rows if r.get("shares_topic") is not None]
        share = sum(bool(r["shares_topic"]) for r in labelled) / len(labelled)
        print(f"{len(labelled)} labelled links; {share:.0%} share a speaker-independent topic")
        return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryagent.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from memories.management.commands.evaluate import load_locomo
    from memories.models import MemoryLink
    from memories.services import bulk_remember
    from memories.services.consolidate import consolidate_owner

    links = []
    for conv in load_locomo(Path(args.dataset)):
        with transaction.atomic():
            owner = get_user_model().objects.create_user(username=f"links-{uuid.uuid4().hex[:10]}")
            bulk_remember(
                owner=owner,
                items=conv.memory_items(),
            )
            consolidate_owner(owner=owner)
            links += [
                {
                    "a": link.from_memory.raw_text,
                    "b": link.to_memory.raw_text,
                    "relationship": link.relationship,
                    "shares_topic": None,
                }
                for link in MemoryLink.objects.filter(consolidation__owner=owner).select_related("from_memory", "to_memory")
            ]
            transaction.set_rollback(True)
    print(f"{len(links)} links in all", file=sys.stderr)
    for row in random.Random(args.seed).sample(links, min(args.n, len(links))):
        print(json.dumps(row, ensure_ascii=False))


if __name__ == "__main__":
    main()
