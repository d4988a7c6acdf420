from ...services import Actor, extract_memory, retry_failed
from ._base import MemoryCommand


class Command(MemoryCommand):
    help = "Extract every failed memory of a user again, here and now."

    def add_arguments(self, parser):
        self.add_user_argument(parser)

    def handle(self, *args, **options):
        owner = self.owner(options)
        self.say_provider()
        actor = Actor.for_command("retry_failed")
        for pk in retry_failed(owner=owner, actor=actor):
            memory = extract_memory(pk, actor=actor)
            self.stdout.write(f"{pk}\t{memory.status}\t{memory.error}")
