"""What stops an experiment for a reason the user can act on (a missing tool, a benchmark that
does not exist, a probe that cannot be measured on a busy host): one line, no traceback. The
command line prints it as ``cyclebench: error: …`` and exits 2 (cli.py)."""

from __future__ import annotations

__all__ = ["ExperimentError"]


class ExperimentError(Exception):
    """One line for the user: what went wrong and, where there is one, what to do."""
