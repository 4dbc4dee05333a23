"""Several cyclebench commands at once on one database and one build cache: every run is stored,
one build serves them all, and an interrupt speaks of its own run."""

from __future__ import annotations

import signal
import time

import pytest

from .conftest import NewLab, Shared, database
from .harness import CASES, Lab, interrupted_run_ids

pytestmark = pytest.mark.audit


def _at_once(lab: Lab, n: int, *argv: str) -> list[int | None]:
    names = [lab.start(*argv) for _ in range(n)]
    return [lab.wait(name).rc for name in names]


@pytest.mark.audit_slow
@pytest.mark.parametrize(("n", "trials"), [(2, 3), (4, 1)], ids=["two-at-once-three-times", "four-at-once"])
def test_runs_started_together_on_a_new_database_are_all_stored(new_lab: NewLab, n: int, trials: int) -> None:
    """Runs creating the same new database raced: one failed ("table already exists")."""
    for _ in range(trials):
        lab = new_lab()
        assert _at_once(lab, n, "run", "-b", "timer/*", "-q") == [0] * n
        assert lab.n_runs() == n


@pytest.mark.audit_slow
def test_an_interrupt_names_its_own_run_not_the_latest(lab: Lab) -> None:
    """With run #2 stored by another command meanwhile, Ctrl-C of run #1 said run #2."""
    a = lab.start("run", "-b", "copy/*", "-q")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and lab.n_runs() < 1:
        time.sleep(0.1)
    lab.run("run", "-b", "timer/rdtsc", "-q")
    time.sleep(0.5)
    lab.signal(a, signal.SIGINT)
    r = lab.wait(a)
    assert r.rc == 130, r
    assert interrupted_run_ids(r) == {1}, r.err


@pytest.mark.audit_slow
def test_four_runs_on_a_cold_cache_build_once(new_lab: NewLab, shared: Shared) -> None:
    lab = new_lab(fresh_cache=True)
    database(lab, shared, "seed")
    assert _at_once(lab, 4, "run", f"{CASES}/ok.c", "-q") == [0] * 4
    keys = [p.name for p in (lab.cache / "build").iterdir() if not p.name.startswith(".")]
    assert len(keys) == 1, keys
