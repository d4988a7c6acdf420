"""The consolidation schedule is a django-q2 row, kept in step with the setting."""

from django.conf import settings

SCHEDULE_NAME = "memories.consolidate_all"
SWEEP_NAME = "memories.resume_stuck"
MAINTAIN_NAME = "memories.maintain"
EMBED_SWEEP_NAME = "memories.embed_sweep"


def ensure_consolidation_schedule(**kwargs):
    """The schedules the service runs on: consolidation at the configured interval, and a
    sweep that re-queues ingests whose task was lost (crash between save and queue)."""
    from django_q.models import Schedule

    # update_or_create by name: migrate twice leaves one schedule, with today's interval.
    for name, func, minutes in (
        (SCHEDULE_NAME, "memories.tasks.consolidate_all", max(1, settings.MEMORY_CONSOLIDATE_EVERY_MINUTES)),
        (SWEEP_NAME, "memories.tasks.resume_stuck", 5),
        # Forgetting on purpose: importance fading and per-space retention, daily by default.
        (MAINTAIN_NAME, "memories.tasks.maintain", max(1, settings.MEMORY_MAINTAIN_EVERY_MINUTES)),
        # Vectors missing after an outage, or from another model after a switch.
        (EMBED_SWEEP_NAME, "memories.tasks.embed_sweep", 15),
    ):
        Schedule.objects.update_or_create(
            name=name,
            defaults={"func": func, "schedule_type": Schedule.MINUTES, "minutes": minutes, "repeats": -1},
        )


def next_consolidation_run():
    from django_q.models import Schedule

    return Schedule.objects.filter(name=SCHEDULE_NAME).values_list("next_run", flat=True).first()
