from django.core.management.base import CommandError

from ... import embeddings
from ...services.embed import embed_missing
from ._base import MemoryCommand


class Command(MemoryCommand):
    help = "Compute memory vectors for recall by meaning: the missing ones, those of another model or of changed text (default), or all."

    def add_arguments(self, parser):
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--missing", action="store_true", help="Only memories without a current vector (the default).")
        which.add_argument("--all", action="store_true", help="Re-embed every memory.")
        parser.add_argument("--user", help="Only this user's memories (default: everyone's).")
        parser.add_argument("--status", action="store_true", help="Only say which embeddings backend is active.")

    def handle(self, *args, **options):
        status = embeddings.status()
        self.stdout.write(f"Embeddings: {status.label}")
        if options["status"]:
            return
        if status.name == "off":
            return
        owner = self.owner(options) if options["user"] else None
        outcome = embed_missing(owner=owner, everything=options["all"])
        self.stdout.write(f"embedded {outcome.embedded} memories with {outcome.model}")
        if outcome.error:
            raise CommandError(f"{outcome.failed} not embedded: {outcome.error}")
