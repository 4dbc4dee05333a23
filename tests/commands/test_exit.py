"""How a command's own process ends (entry.main: one collection, the rest frozen for Python's
finalization): with its database closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FAST, cli_subprocess


@pytest.mark.parametrize("argv", [["run", "-b", "timer/rdtsc", *FAST], ["runs"]])
def test_a_command_leaves_no_wal_beside_its_database(tmp_path: Path, argv: list[str]) -> None:
    """The exit skips the finalizer's repeated collections (gc.freeze) after one of its own: a
    connection that only a collection frees is still closed, so SQLite checkpoints its WAL and
    removes the -wal and -shm files (freezing without that collection left both)."""
    db = f"sqlite:///{tmp_path}/x.db"
    if argv[0] == "runs":  # a database to read
        made = cli_subprocess("run", "-b", "timer/rdtsc", *FAST, "--db", db)
        _out, err = made.communicate(timeout=120)
        assert made.returncode == 0, err
    proc = cli_subprocess(*argv, "--db", db)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.db"]
