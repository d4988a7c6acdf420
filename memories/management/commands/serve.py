"""Run the whole service: web server, django-q2 cluster and inbox watcher, stopped together."""

import os
import signal
import subprocess
import sys
import time

from django.core.management.base import BaseCommand

# qcluster has been seen to log "stopping" after SIGTERM and then hang: after this many
# seconds every child that is still alive gets SIGKILL, with its whole process group.
GRACE_SECONDS = 10


class Command(BaseCommand):
    help = "Start the web server, the task cluster and the inbox watcher; Ctrl-C stops them all."

    def add_arguments(self, parser):
        parser.add_argument("--bind", default=os.getenv("MEMORY_BIND", "127.0.0.1:8000"))
        parser.add_argument("--web-workers", type=int, default=int(os.getenv("WEB_CONCURRENCY", "2")))

    def handle(self, *args, **options):
        python = sys.executable
        commands = {
            "web": [python, "-m", "gunicorn", "memoryagent.wsgi", "--bind", options["bind"], "--workers", str(options["web_workers"]), "--timeout", "120", "--access-logfile", "-",
                    # One-time sign-in links (/welcome/<token>/) are masked in the access log.
                    "--logger-class", "memories.gunicorn_logging.RedactingLogger",
                    # gunicorn's control socket lives at one path per machine user: two
                    # installations (or a test run beside a live one) would fight over it.
                    "--no-control-socket"],
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
        for child in children.values():
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGTERM)
        deadline = time.monotonic() + GRACE_SECONDS
        while time.monotonic() < deadline and any(c.poll() is None for c in children.values()):
            time.sleep(0.2)
        for name, child in children.items():
            if child.poll() is None:
                self.stderr.write(f"{name} did not stop within {GRACE_SECONDS}s; killing it.")
                try:
                    os.killpg(child.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                child.wait()
        self.stdout.write("Stopped.")
