from django.core.management.base import CommandError

from ...llm import get_provider
from ...services import Actor, needs_model_memories, reextract_memory
from ._base import MemoryCommand


class Command(MemoryCommand):
    help = (
        "Extract memories again with the current provider: the given ids, or (default) every memory "
        "whose file the offline engine could only describe, once a multimodal provider is configured."
    )

    def add_arguments(self, parser):
        parser.add_argument("ids", nargs="*", type=int)
        self.add_user_argument(parser)

    def handle(self, *args, **options):
        owner = self.owner(options)
        self.say_provider()
        ids = options["ids"]
        if not ids:
            provider = get_provider()
            if not provider.is_language_model:
                raise CommandError(
                    "The active provider is the offline engine; configure a model first (GEMINI_API_KEY or OPENAI_BASE_URL)."
                )
            ids = list(needs_model_memories(owner=owner).values_list("pk", flat=True))
        actor = Actor.for_command("reextract")
        for pk in ids:
            memory = reextract_memory(owner=owner, memory_id=pk, actor=actor)
            if memory is None:
                self.stderr.write(f"{pk}: no such memory of {owner}")
                continue
            self.stdout.write(f"{pk}\t{memory.status}\t{memory.error or memory.summary[:80]}")
        self.stdout.write(f"{len(ids)} memories re-extracted.")
