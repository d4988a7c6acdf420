import json

from django.core.management.base import CommandError

from ...llm import ProviderError
from ...recall import STRATEGIES
from ...services import Actor, answer_question
from ._base import MemoryCommand


class Command(MemoryCommand):
    help = "Answer a question from memory, citing [Memory N]."

    def add_arguments(self, parser):
        parser.add_argument("question")
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--strategy", choices=sorted(STRATEGIES))
        parser.add_argument("--k", type=int)
        self.add_user_argument(parser)

    def handle(self, *args, **options):
        owner = self.owner(options)
        try:
            result = answer_question(
                owner=owner,
                question=options["question"],
                strategy=options["strategy"],
                k=options["k"],
                actor=Actor.for_command("query"),
            )
        except (ValueError, ProviderError) as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "question": result.question,
                        "answer": result.answer,
                        "cited": result.cited,
                        "context": result.recall.memory_ids,
                        "strategy": result.recall.strategy,
                        "provider": result.provider,
                        "elapsed_ms": result.elapsed_ms,
                    },
                    indent=2,
                )
            )
            return
        if not result.provider_is_language_model:
            self.say_provider()
        self.stdout.write(result.answer)
