"""Print how to get into the web app: a one-time sign-in link while the owner has no password."""

from django.conf import settings
from django.core.management.base import BaseCommand
from django.urls import reverse

from ...services.setup import SIGN_IN_LINK_MAX_AGE, make_sign_in_token, welcome_owner


class Command(BaseCommand):
    help = "Print a one-time sign-in link for the owner account (only while it has no password)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--base-url",
            default=settings.MEMORY_BASE_URL,
            help="Where the web app is reached (default: MEMORY_BASE_URL, else http://MEMORY_BIND).",
        )

    def handle(self, *args, **options):
        base = options["base_url"].rstrip("/")
        owner, needs_link = welcome_owner()
        if not needs_link:
            self.stdout.write(f"Sign in at {base}{reverse('login')} as {owner.get_username()!r}.")
            return
        link = base + reverse("memories:welcome_link", args=[make_sign_in_token(user=owner)])
        hours = SIGN_IN_LINK_MAX_AGE // 3600
        self.stdout.write(
            "\n"
            f"  First run: the owner account {owner.get_username()!r} has no password yet.\n"
            f"  Open this one-time link to sign in and choose one (works once, for {hours} hours):\n\n"
            f"    {link}\n\n"
            f"  Lost it? Run `manage.py welcome` again for a new one.\n"
        )
