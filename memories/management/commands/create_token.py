from django.core.management.base import BaseCommand, CommandError

from ...services import resolve_owner
from ...services.tokens import SCOPES, TokenError, create_token, parse_expiry
from ._base import note


class Command(BaseCommand):
    help = "Make an API token for a user. The token is printed once, on the last line; only its hash is kept."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="cli", help="What the token is for (shown on the settings page).")
        parser.add_argument(
            "--scope",
            choices=SCOPES,
            default="admin",
            help="read (search, ask, list, export), write (also remember, correct, consolidate) or admin (also delete, clear).",
        )
        parser.add_argument("--expires", default="", help="Refuse the token after this long: 30d, 12h, 2w, 1y (default: never).")

    def handle(self, *args, **options):
        try:
            # The default owner is created if this is a fresh install, as every command does.
            owner = resolve_owner(options["username"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        try:
            token, plaintext = create_token(
                owner=owner, name=options["name"], scope=options["scope"], expires_in=parse_expiry(options["expires"])
            )
        except TokenError as exc:
            raise CommandError(str(exc)) from None
        # Notes on stderr, the token alone on stdout's last line: T=$(manage.py create_token me | tail -1)
        expiry = f", expires {token.expires_at:%Y-%m-%d %H:%M}" if token.expires_at else ""
        note(
            self,
            f"Token {token.name!r} ({token.prefix}…) for {owner}, scope {token.scope}{expiry}. It is shown only now; keep it safe.",
        )
        self.stdout.write(plaintext)
