"""The consolidation schedule is a django-q2 row, kept in step with the setting."""

from django.conf import settings

SCHEDULE_NAME = "memories.consolidate_all"


def ensure_consolidation_schedule(**kwargs):
    from django_q.models import Schedule

    minutes = max(1, settings.MEMORY_CONSOLIDATE_EVERY_MINUTES)
    # update_or_create by name: migrate twice leaves one schedule, with today's interval.
    Schedule.objects.update_or_create(
        name=SCHEDULE_NAME,
        defaults={
            "func": "memories.tasks.consolidate_all",
            "schedule_type": Schedule.MINUTES,
            "minutes": minutes,
            "repeats": -1,
        },
    )


def next_consolidation_run():
    from django_q.models import Schedule

    return Schedule.objects.filter(name=SCHEDULE_NAME).values_list("next_run", flat=True).first()
