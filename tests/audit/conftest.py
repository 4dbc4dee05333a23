"""Fixtures of the audit cases: a lab per case (tests/audit/harness.py), the session's shared
inputs (a database holding one stored run, its export, a 20 000-function C file), and the
databases and files a case starts from (damaged, foreign, older, newer, read-only, crafted)."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .harness import Lab

NewLab = Callable[..., Lab]


class Shared:
    """Inputs made once per session, on first use, in one directory."""

    def __init__(self, root: Path, cache: Path) -> None:
        self.dir = root
        self.cache = cache

    def _lab(self) -> Lab:
        return Lab(self.dir / "maker", self.cache, timeout=None)

    def seed(self) -> tuple[Path, Path]:
        """A database with run #1 (timer/rdtsc), checkpointed (one file), and its JSON export."""
        db, js = self.dir / "seed.db", self.dir / "seed.json"
        if not js.exists():
            lab = self._lab()
            lab.db, lab.url = db, f"sqlite:///{db}"
            lab.env["CYCLEBENCH_DB"] = lab.url
            r = lab.run("run", "-b", "timer/rdtsc", "-q", "--min-time", "0.02", "--repeat", "10")
            assert r.rc == 0, f"cannot make the seed database: {r}"
            con = sqlite3.connect(db)
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            con.close()
            e = lab.run("export", "1", "--json", str(js))
            assert e.rc == 0, f"cannot export the seed database: {e}"
            assert not lab.reap()
        return db, js

    def ic20k(self) -> Path:
        """A C file of 20 000 functions (`gen icache`): seconds of compiling, for signals to land in."""
        p = self.dir / "ic20k.c"
        if not p.exists():
            r = self._lab().run("gen", "icache", "--funcs", "20000", "-o", str(p))
            assert r.rc == 0, f"cannot generate ic20k.c: {r}"
        return p


@pytest.fixture(scope="session")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Shared:
    return Shared(tmp_path_factory.mktemp("audit-shared"), Path(os.environ["CYCLEBENCH_CACHE"]))


@pytest.fixture
def new_lab(tmp_path: Path) -> Iterator[NewLab]:
    """Make a lab (options as :class:`Lab`'s, plus ``fresh_cache``); at the end every process
    a lab's case left alive is killed, and the test fails naming them."""
    labs: list[Lab] = []

    def make(fresh_cache: bool = False, **kw: Any) -> Lab:
        root = tmp_path / f"lab{len(labs)}"
        cache = root / "cache" if fresh_cache else Path(os.environ["CYCLEBENCH_CACHE"])
        lab = Lab(root, cache, **kw)
        labs.append(lab)
        return lab

    yield make
    left = [o for lab in labs for o in lab.reap()]
    for lab in labs:  # a read-only fixture directory must not stop pytest removing tmp_path
        for p in (lab.dir / "rodir", lab.db):
            if p.exists():
                p.chmod(0o755 if p.is_dir() else 0o644)
    if left:
        pytest.fail(f"{len(left)} process(es) left behind: {'; '.join(left)}", pytrace=False)


@pytest.fixture
def lab(new_lab: NewLab) -> Lab:
    return new_lab()


# ---- the databases and files a case starts from

# The schema-1 tables of cyclebench c7ecbb2 (before Alembic managed the file): 20 result columns,
# samples.cal/pmu and runs.summary missing.
V1_TABLES = {
    "meta": ("key VARCHAR(40) NOT NULL PRIMARY KEY", "value VARCHAR(255)"),
    "runs": ("id INTEGER NOT NULL PRIMARY KEY", "started_at VARCHAR(40) NOT NULL", "finished_at VARCHAR(40)",
             "status VARCHAR(20) NOT NULL", "command JSON", "host VARCHAR(255)", "cpu_model VARCHAR(255)",
             "cpu INTEGER", "tool_version VARCHAR(40)", "code_rev VARCHAR(80)", "build JSON", "calibration JSON",
             "env JSON"),
    "results": ("id INTEGER NOT NULL PRIMARY KEY", "run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE",
                "bench VARCHAR(255) NOT NULL", "param BIGINT", "variant VARCHAR(255) NOT NULL",
                "status VARCHAR(20) NOT NULL", "reason TEXT", "unit VARCHAR(20)", "per_op FLOAT", "ci_low FLOAT",
                "ci_high FLOAT", "intercept FLOAT", "median FLOAT", "median_ci_low FLOAT", "median_ci_high FLOAT",
                "min FLOAT", "mad FLOAT", "mean FLOAT", "cv FLOAT", "rcv FLOAT", "confidence FLOAT",
                "method VARCHAR(20)", "rounds INTEGER", "ns_per_op FLOAT", "n_samples INTEGER", "outliers INTEGER",
                "timer_overhead FLOAT", "wall_s FLOAT", "created_at VARCHAR(40) NOT NULL", "extra JSON"),
    "samples": ("result_id INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE", "idx INTEGER NOT NULL",
                "iters BIGINT NOT NULL", "ticks BIGINT NOT NULL", "disturbed INTEGER"),
}


def old_schema(seed: Path, db: Path) -> None:
    """A schema-1 database holding the seed's run (the columns both have)."""
    con = sqlite3.connect(db)
    for table, cols in V1_TABLES.items():
        con.execute(f"CREATE TABLE {table} ({', '.join(cols)})")
    con.execute("CREATE INDEX ix_results_run_id ON results (run_id)")
    con.execute("CREATE INDEX ix_results_bench ON results (bench)")
    con.execute("CREATE INDEX ix_samples_result_id ON samples (result_id)")
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    con.execute("ATTACH DATABASE ? AS seed", (f"file:{seed}?mode=ro",))
    for table, cols in V1_TABLES.items():
        if table == "meta":
            continue
        have = {row[1] for row in con.execute(f"PRAGMA seed.table_info({table})")}
        names = [c.split()[0] for c in cols if c.split()[0] in have]
        con.execute(f"INSERT INTO main.{table} ({', '.join(names)}) SELECT {', '.join(names)} FROM seed.{table}")
    con.commit()
    con.close()


def newer_schema(db: Path) -> None:
    """Mark the database as written by a later cyclebench: a schema version and an Alembic
    revision no cyclebench knows yet."""
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'alembic_version'").fetchone():
        con.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    con.commit()
    con.close()


def overwrite_results_pages(db: Path) -> None:
    """Random bytes over the results table's root page and its index's, the runs left intact."""
    con = sqlite3.connect(db)
    size = int(con.execute("PRAGMA page_size").fetchone()[0])
    pages = sorted({int(p) for (p,) in con.execute(
        "SELECT rootpage FROM sqlite_master WHERE tbl_name = 'results' AND rootpage > 0")})
    con.close()
    with db.open("r+b") as f:
        for k, page in enumerate(pages[:2]):
            f.seek((page - 1) * size)
            f.write(random.Random(5 + k).randbytes(size))


def database(lab: Lab, shared: Shared, kind: str) -> None:
    """Put the database ``kind`` at the lab's database path."""
    if kind == "old":
        old_schema(shared.seed()[0], lab.db)
        return
    if kind == "foreign":
        con = sqlite3.connect(lab.db)
        con.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, name TEXT)")
        con.execute("INSERT INTO runs (name) VALUES ('not cyclebench')")
        con.commit()
        con.close()
        return
    if kind == "random":
        lab.db.write_bytes(random.Random(111).randbytes(64 * 1024))
        return
    shutil.copyfile(shared.seed()[0], lab.db)
    if kind == "results-pages-overwritten":
        overwrite_results_pages(lab.db)
    elif kind == "truncated":
        data = lab.db.read_bytes()
        lab.db.write_bytes(data[: len(data) // 2])
    elif kind == "newer":
        newer_schema(lab.db)
    elif kind == "read-only":
        lab.db.chmod(0o444)
    else:
        assert kind == "seed", kind


def read_only_dir(lab: Lab) -> Path:
    d = lab.dir / "rodir"
    d.mkdir()
    d.chmod(0o555)
    return d


def crafted_export(seed_json: Path, kind: str) -> bytes:
    """The seed's export, spoiled one way."""
    seed = json.loads(seed_json.read_text())
    d = json.loads(json.dumps(seed))
    last = d["results"][-1]
    if kind == "truncated":
        text = json.dumps(seed)
        return text[: len(text) // 2].encode()
    if kind == "list":
        return b"[1, 2, 3]\n"
    if kind == "binary":
        return b"\xff\xfe\x00\x9c" + random.Random(129).randbytes(256)
    if kind == "no-run":
        d = {"format": "cyclebench-run", "version": 1, "results": []}
    elif kind == "version-abc":
        d["version"] = "abc"
    elif kind == "ticks-shorter-than-iters":
        last["samples"]["ticks"] = last["samples"]["ticks"][: len(last["samples"]["ticks"]) // 2]
    elif kind == "result-without-bench":
        del last["bench"]
    elif kind == "started-at-null":
        d["run"]["started_at"] = None
    elif kind == "iters-2**70":
        last["samples"]["iters"][0] = 2**70
    elif kind == "per-op-a-string":
        last["per_op"] = "not a number"
    else:
        raise ValueError(kind)
    return (json.dumps(d) + "\n").encode()
