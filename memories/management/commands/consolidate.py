from django.core.management.base import CommandError

from ...services import ConsolidationBusy, consolidate_all, consolidate_owner
from ._base import MemoryCommand


class Command(MemoryCommand):
    help = "Consolidate memories now (one owner with --user, else every owner with a backlog)."

    def add_arguments(self, parser):
        self.add_user_argument(parser)
        parser.add_argument("--all", action="store_true", help="Every owner (the default without --user).")

    def handle(self, *args, **options):
        self.say_provider()
        if options["user"]:
            try:
                outcomes = [consolidate_owner(owner=self.owner(options))]
            except ConsolidationBusy as exc:
                raise CommandError(str(exc)) from None
        else:
            outcomes = consolidate_all()
        for outcome in outcomes:
            for c in outcome.consolidations:
                sources = ", ".join(str(pk) for pk in c.sources.values_list("pk", flat=True))
                self.stdout.write(f"Consolidation {c.pk} (memories {sources}): {c.insight}")
            if outcome.run.error:
                self.stderr.write(f"{outcome.run.owner}: stopped early: {outcome.run.error}")
        made = sum(len(o.consolidations) for o in outcomes)
        self.stdout.write(f"{made} consolidation(s) written.")
