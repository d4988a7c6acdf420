from ...mcp.caller import Caller, acting_as
from ...mcp.server import server
from ...services import Actor
from ._base import MemoryCommand


class Command(MemoryCommand):
    help = (
        "Serve the memory's MCP tools over stdio, for a desktop agent that starts a command "
        "(the HTTP endpoint is /mcp with an API token)."
    )

    def add_arguments(self, parser):
        self.add_user_argument(parser)

    def handle(self, *args, **options):
        owner = self.owner(options)
        # stdout is the protocol's: whatever else there is to say goes to stderr.
        self.stderr.write(f"MCP over stdio for {owner.get_username()}'s memory.")
        with acting_as(Caller(owner=owner, actor=Actor.for_command("mcp"), long_lived=True)):
            server.run("stdio")
