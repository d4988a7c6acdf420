from django.core.management.base import BaseCommand, CommandError

from ...services import resolve_owner
from ...services.tokens import TokenError, create_token
from ._base import note


class Command(BaseCommand):
    help = "Make an API token for a user. The token is printed once, on the last line; only its hash is kept."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="cli", help="What the token is for (shown on the settings page).")

    def handle(self, *args, **options):
        try:
            # The default owner is created if this is a fresh install, as every command does.
            owner = resolve_owner(options["username"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        try:
            token, plaintext = create_token(owner=owner, name=options["name"])
        except TokenError as exc:
            raise CommandError(str(exc)) from None
        # Notes on stderr, the token alone on stdout's last line: T=$(manage.py create_token me | tail -1)
        note(self, f"Token {token.name!r} ({token.prefix}…) for {owner}. It is shown only now; keep it safe.")
        self.stdout.write(plaintext)
