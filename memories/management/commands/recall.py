import json

from ...recall import STRATEGIES, recall
from ._base import MemoryCommand


class Command(MemoryCommand):
    help = "Show the memories the model would read for a question, ranked, with why."

    def add_arguments(self, parser):
        parser.add_argument("question")
        parser.add_argument("--k", type=int)
        parser.add_argument("--strategy", choices=sorted(STRATEGIES))
        parser.add_argument("--json", action="store_true")
        self.add_user_argument(parser)

    def handle(self, *args, **options):
        result = recall(owner=self.owner(options), question=options["question"], strategy=options["strategy"], k=options["k"])
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "strategy": result.strategy,
                        "context_tokens": result.context_tokens,
                        "memories": [
                            {
                                "id": r.memory.pk,
                                "source": r.memory.source,
                                "score": round(r.score, 4),
                                "reasons": r.reasons,
                                "summary": r.memory.summary,
                            }
                            for r in result.memories
                        ],
                        "consolidations": [{"id": c.pk, "insight": c.insight} for c in result.consolidations],
                    },
                    indent=2,
                )
            )
            return
        for rank, r in enumerate(result.memories, 1):
            self.stdout.write(
                f"{rank:>3}. [Memory {r.memory.pk}] {r.memory.source} ({', '.join(r.reasons)}): {r.memory.summary[:120]}"
            )
        for c in result.consolidations:
            self.stdout.write(f"     [Insight {c.pk}] {c.insight[:120]}")
        self.stdout.write(f"{len(result.memories)} memories, about {result.context_tokens} tokens ({result.strategy}).")
