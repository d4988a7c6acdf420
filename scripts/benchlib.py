"""What the benchmark scripts share: a free loopback port and a percentile of timings.
The scripts run as `python scripts/NAME.py`, so this folder is on their path."""

from __future__ import annotations

import socket


def free_port(low: int | None = None, high: int | None = None) -> int:
    """A loopback port nothing listens on: the first free one in low..high when a range is
    given (a session's own ports), else one the system picks."""
    if low is not None and high is not None:
        for port in range(low, high + 1):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile by nearest rank; NaN for no values (printed as such, never 0)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]
