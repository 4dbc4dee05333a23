"""A writer's store opened ``soon`` (Store(soon=True), compare's): a file already at the newest
schema is opened later, in a thread away from the runners' CPU or at first use, the dead runs
swept then; anything else is opened, and refused, at once."""

from __future__ import annotations

import sqlite3
import sys
import threading
from pathlib import Path

import pytest

from cyclebench.store import Store, StoreError
from cyclebench.store.db import SOON_SWITCH_S


def _at_head(path: Path) -> str:
    url = f"sqlite:///{path}"
    store = Store(url)
    rid = store.begin_run(command=["cyclebench", "run"], host="h")
    store._stop_heartbeats()  # its process "ends": the run stays 'running' in the file
    store.update_run(rid, pid=2**22 + 7)  # a pid no process has here: abandoned once swept
    store.close()
    return url


def test_a_file_at_the_newest_schema_opens_in_a_thread_and_sweeps_the_dead_runs(tmp_path: Path) -> None:
    url = _at_head(tmp_path / "c.db")
    store = Store(url, soon=True)
    assert store.deferred and not store.opening
    switch = sys.getswitchinterval()
    store.open_meanwhile(away_from=0)
    thread = store._opening
    assert isinstance(thread, threading.Thread) and store.opening
    thread.join()
    assert sys.getswitchinterval() == switch  # the thread gave the interpreter's back
    assert switch > SOON_SWITCH_S
    run = store.list_runs(1)[0]  # the engine: waits for the thread
    assert run["status"] == "abandoned" and not store.opening
    assert store.begin_run(command=["cyclebench", "compare"]) == run["id"] + 1


def test_never_started_it_opens_at_first_use(tmp_path: Path) -> None:
    url = _at_head(tmp_path / "c.db")
    store = Store(url, soon=True)
    assert store.deferred
    assert store.list_runs(1)[0]["status"] == "abandoned"  # opened here, swept too
    store.close()


def test_what_the_file_check_does_not_vouch_for_opens_and_fails_at_once(tmp_path: Path) -> None:
    new = Store(f"sqlite:///{tmp_path}/new.db", soon=True)  # a new file: made now
    assert not new.deferred and (tmp_path / "new.db").stat().st_size > 0
    foreign = tmp_path / "f.db"
    sqlite3.connect(foreign).execute("create table t (x)").connection.commit()
    with pytest.raises(StoreError, match="not a cyclebench database"):
        Store(f"sqlite:///{foreign}", soon=True)


def test_an_error_of_the_thread_is_raised_at_first_use(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    url = _at_head(path)
    store = Store(url, soon=True)  # vouched for now …
    path.unlink()
    sqlite3.connect(path).execute("create table t (x)").connection.commit()  # … foreign by the time it opens
    store.open_meanwhile()
    with pytest.raises(StoreError, match="not a cyclebench database"):
        store.list_runs(1)
