from django.core.management.base import CommandError

from ...services import Actor, ConsolidationBusy, consolidate_all, consolidate_owner
from ...services.consolidate import planned_batches
from ._base import MemoryCommand, progress_bar


class Command(MemoryCommand):
    help = "Consolidate memories now (one owner with --user, else every owner with a backlog)."

    def add_arguments(self, parser):
        self.add_user_argument(parser)
        parser.add_argument("--all", action="store_true", help="Every owner (the default without --user).")

    def handle(self, *args, **options):
        self.say_provider()
        owner = self.owner(options) if options["user"] else None
        actor = Actor.for_command("consolidate")
        with progress_bar(total=planned_batches(owner=owner), desc="consolidating", unit="batch") as bar:
            if owner is not None:
                try:
                    outcomes = [consolidate_owner(owner=owner, actor=actor, on_batch=lambda n: bar.update(1))]
                except ConsolidationBusy as exc:
                    raise CommandError(str(exc)) from None
            else:
                outcomes = consolidate_all(actor=actor, on_batch=lambda n: bar.update(1))
        for outcome in outcomes:
            for c in outcome.consolidations:
                sources = ", ".join(str(pk) for pk in c.sources.values_list("pk", flat=True))
                self.stdout.write(f"Consolidation {c.pk} (memories {sources}): {c.insight}")
            if outcome.run.error:
                self.stderr.write(f"{outcome.run.owner}: stopped early: {outcome.run.error}")
        made = sum(len(o.consolidations) for o in outcomes)
        self.stdout.write(f"{made} consolidation(s) written.")
