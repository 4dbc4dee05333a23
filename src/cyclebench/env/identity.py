"""Who and what made a run: the revision of the user's benchmark files (more to come: host id,
boot id, microcode — issue 14)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path


def code_revision(sources: Sequence[Path]) -> str | None:
    """``git describe --always --dirty`` of the first source's repository, or None (no git,
    not a repository, or git took over 5 s)."""
    if not sources:
        return None
    try:
        proc = subprocess.run(
            ["git", "-C", str(Path(sources[0]).resolve().parent), "describe", "--always", "--dirty"],
            capture_output=True, text=True, timeout=5, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None
