"""Values base.html reads on every page, so no template tag has to query for them."""

from functools import cache

from django.conf import settings

from .services.status import waiting_review


def nav(request) -> dict:
    """The review tab: shown in review mode or while memories wait. The count is read once
    per request, and only by a page that draws the nav (not by the fragments HTMX swaps)."""

    @cache
    def count() -> int:
        user = getattr(request, "user", None)
        return waiting_review(owner=user) if user is not None and user.is_authenticated else 0

    return {"review_mode": settings.MEMORY_REVIEW_MODE, "waiting_review": count}
