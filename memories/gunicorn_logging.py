"""gunicorn's access log without one-time sign-in links (`serve` passes --logger-class)."""

from __future__ import annotations

from gunicorn.glogging import Logger

from .logredact import redact


class RedactingLogger(Logger):
    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        for key, value in atoms.items():
            if isinstance(value, str) and "/welcome/" in value:
                atoms[key] = redact(value)
        return atoms
