"""Run the whole service: web server, django-q2 cluster and inbox watcher, stopped together."""

import errno
import os
import signal
import socket
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

# Each child is asked to stop (SIGTERM to its main process only: the cluster stops its own
# workers in a few seconds, while a SIGTERM to all of them at once left it hanging); one
# still alive after this many seconds is killed with its whole process group.
GRACE_SECONDS = 10


def check_port_free(bind: str) -> None:
    """Fail before starting anything when the address is taken, with the way out; gunicorn
    would otherwise print five tracebacks after we had said the service was running."""
    host, _, port = bind.rpartition(":")
    if not port.isdigit():
        raise CommandError(f"MEMORY_BIND {bind!r} is not HOST:PORT (e.g. 127.0.0.1:8000).")
    host = host.strip("[]") or "0.0.0.0"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # The same option gunicorn sets, so a port in TIME_WAIT after a restart is not "busy".
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, int(port)))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise CommandError(
                    f"Port {port} on {host} is already in use (another copy of the service, or another program).\n"
                    f"Pick another port: MEMORY_BIND={host}:{int(port) + 1} make run  (or manage.py serve --bind {host}:{int(port) + 1})."
                ) from None
            raise CommandError(f"Cannot listen on {bind}: {exc.strerror}. Set MEMORY_BIND to another HOST:PORT.") from None


class Command(BaseCommand):
    help = "Start the web server, the task cluster and the inbox watcher; Ctrl-C stops them all."

    def add_arguments(self, parser):
        parser.add_argument("--bind", default=settings.MEMORY_BIND)
        parser.add_argument("--web-workers", type=int, default=settings.WEB_CONCURRENCY)

    def handle(self, *args, **options):
        check_port_free(options["bind"])
        python = sys.executable
        commands = {
            "web": [
                python,
                "-m",
                "gunicorn",
                "memoryagent.wsgi",
                "--bind",
                options["bind"],
                "--workers",
                str(options["web_workers"]),
                "--timeout",
                "120",
                "--access-logfile",
                "-",
                # One-time sign-in links (/welcome/<token>/) are masked in the access log.
                "--logger-class",
                "memories.gunicorn_logging.RedactingLogger",
                "--graceful-timeout",
                str(GRACE_SECONDS - 2),
                # gunicorn's control socket lives at one path per machine user: two
                # installations (or a test run beside a live one) would fight over it.
                "--no-control-socket",
            ],
            "tasks": [python, "manage.py", "qcluster"],
            "inbox": [python, "manage.py", "watch_inbox", "--queue"],
        }
        self.stopping = False
        signal.signal(signal.SIGINT, self._stop)
        signal.signal(signal.SIGTERM, self._stop)
        children = {name: subprocess.Popen(cmd, start_new_session=True) for name, cmd in commands.items()}
        self.stdout.write(f"Always-On Memory is running at http://{options['bind']}/  (Ctrl-C stops it)")
        exit_code = 0
        while not self.stopping:
            for name, child in children.items():
                if child.poll() is not None:
                    self.stderr.write(f"{name} exited with {child.returncode}; stopping the others.")
                    self.stopping, exit_code = True, 1
            time.sleep(0.5)
        self._shutdown(children)
        sys.exit(exit_code)

    def _stop(self, *args):
        self.stopping = True

    def _shutdown(self, children):
        self.stdout.write("Stopping…")
        for child in children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + GRACE_SECONDS
        while time.monotonic() < deadline and any(c.poll() is None for c in children.values()):
            time.sleep(0.2)
        for name, child in children.items():
            if child.poll() is None:
                self.stderr.write(f"{name} did not stop within {GRACE_SECONDS}s; killing it.")
            # The whole group either way: a worker its parent left behind must not linger.
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            child.wait()
        self.stdout.write("Stopped.")
