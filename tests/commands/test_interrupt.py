"""Ctrl-C during a run: exit 130, the run is marked interrupted, finished results stay."""

from __future__ import annotations

import signal
import time

from cyclebench.store import Store

from conftest import DATA, cli_subprocess


def test_ctrl_c_keeps_measured_results(db: str) -> None:
    # A shell running us in the background may have set SIGINT to SIG_IGN, which children
    # inherit and Python then honours: give the child the default disposition back.
    proc = cli_subprocess("run", str(DATA / "slow.c"), "--min-time", "0.2", "--repeat", "5", "--warmup", "0",
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    store = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.2)
        try:
            store = store or Store(db)
            rid = store.last_run_id()
            if rid is not None and len(store.results(rid)) >= 2:
                break
        except Exception:  # the DB may not exist yet
            continue
    assert store is not None
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    rid = store.last_run_id()
    run = store.get_run(rid)
    kept = store.results(rid)
    assert run["status"] == "interrupted"
    assert 2 <= len(kept) < 16
    assert all(r["status"] == "ok" and r["per_op"] > 0 for r in kept)
