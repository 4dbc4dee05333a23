"""`cyclebench report` at a lab's scale: figures, not pass/fail (docs/site.md, "Scale").

    .venv/bin/python bench/report_site.py [--runs 2000] [--results 150] [--hosts 4] [--keep DIR]

Makes a database of ``--runs`` runs of ``--results`` results each (one real run of
tests/data/chain.c measured here is the template: its run row — environment, build,
calibration — and its result rows, ``extra`` included, so every row weighs what a real one
does), spread over ``--hosts`` hosts night after night, every tenth night a replicate group of
three (`run --runs 3`), the code revision (and the build key) moving every five nights, a +5%
step on a few benchmarks, some disturbed and skipped rows and a hostile benchmark name. Then
builds the site with the real command (``cyclebench report -o DIR``, a process of its own) and
prints its wall time, its peak memory, the number of pages, the largest page and the site's
size. With ``--keep DIR`` the database is kept there and reused by the next call.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
HOSTS = [("lab-intel-1", "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", "6.1.0-28-amd64"),
         ("lab-amd-1", "AMD EPYC 7763 64-Core Processor", "6.1.0-28-amd64"),
         ("lab-intel-2", "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz", "6.12.9-amd64"),
         ("lab-amd-2", "AMD Ryzen 9 7950X 16-Core Processor", "6.12.9-amd64"),
         ("lab-intel-3", "Intel(R) Xeon(R) Platinum 8480+", "6.6.15-amd64"),
         ("lab-amd-3", "AMD EPYC 9654 96-Core Processor", "6.6.15-amd64")]
GROUPS = ["copy", "syscall", "alloc", "atomic", "hash", "sort", "string", "vfs", "timer", "branch"]


def cyclebench(*args: str, db: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CYCLEBENCH_DB": db, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "cyclebench", *args], env=env, text=True, capture_output=True,
                          check=False)


def template(workdir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A real run here (tests/data/chain.c, fast options): its run row and result rows."""
    from cyclebench.store import Store

    url = f"sqlite:///{workdir / 'template.db'}"
    r = cyclebench("run", str(ROOT / "tests/data/chain.c"), "--min-time", "0.01", "--repeat", "6", "-q", db=url)
    if r.returncode != 0:
        raise SystemExit(f"cannot measure the template run: {r.stderr}")
    store = Store(url, create=False)
    run = store.get_run(1) or {}
    rows = [x for x in store.results(1) if x["bench"] != "loop/empty"]
    store.close()
    return run, rows


def names(n: int) -> list[tuple[str, int | None]]:
    """``n`` (benchmark, param) pairs: a third of them benchmarks at two parameters."""
    out: list[tuple[str, int | None]] = []
    i = 0
    while len(out) < n:
        bench = f"{GROUPS[i % len(GROUPS)]}/op{i:03d}"
        if i % 3 == 0 and len(out) + 2 <= n:
            out += [(bench, 64), (bench, 4096)]
        else:
            out.append((bench, None))
        i += 1
    out[-1] = ("<script>alert(1)</script>", None)  # escaped everywhere, or the site is broken
    return out


def make_db(url: str, n_runs: int, n_results: int, n_hosts: int, workdir: Path) -> None:
    """The lab's database at ``url`` (see the module docstring), written with executemany."""
    from sqlalchemy import insert

    from cyclebench.store import Store
    from cyclebench.store.schema import results, runs

    run0, rows0 = template(workdir)
    rng = np.random.default_rng(7)
    pairs = names(n_results)
    base = np.exp(rng.uniform(np.log(5), np.log(5000), len(pairs)))
    hosts = HOSTS[:n_hosts]
    host_factor = rng.uniform(0.6, 1.6, (len(hosts), len(pairs)))
    nights = (n_runs + len(hosts) - 1) // len(hosts)
    stepped = {j: int(rng.integers(nights // 3, nights - 5)) for j in rng.choice(len(pairs), 6, replace=False)}
    store = Store(url)
    start = dt.datetime(2025, 1, 1, 2, 0, tzinfo=dt.timezone.utc)
    made = 0
    with store.engine.begin() as conn:
        for night in range(nights):
            rev = f"{0xabc000 + night // 5:07x}"
            for h, (host, cpu, kernel) in enumerate(hosts):
                if made >= n_runs:
                    break
                t = start + dt.timedelta(days=night, minutes=17 * h)
                run = {k: v for k, v in run0.items() if k != "id"}
                run.update(started_at=t.isoformat(timespec="milliseconds"),
                           finished_at=(t + dt.timedelta(minutes=9)).isoformat(timespec="milliseconds"),
                           status="complete", host=host, host_id=f"{h:02d}" * 16, cpu_model=cpu, kernel_release=kernel,
                           code_rev=rev, build={**(run0.get("build") or {}), "key": f"{host}-{rev}"},
                           labels={"branch": "main", "night": t.date().isoformat()}, group_id=None, pid=None,
                           heartbeat_at=None)
                rid = int(conn.execute(insert(runs).values(**run)).inserted_primary_key[0])
                if night % 10 in (1, 2, 3):  # a replicate group of three (`run --runs 3`): its first run's id
                    first = rid - len(hosts) * (night % 10 - 1)
                    conn.execute(runs.update().where(runs.c.id == rid).values(group_id=first))
                values = []
                for j, (bench, param) in enumerate(pairs):
                    tpl = rows0[j % len(rows0)]
                    v = base[j] * host_factor[h, j] * (1.05 if j in stepped and night >= stepped[j] else 1.0)
                    v *= 1 + rng.normal(0, 0.01) + (0.3 if rng.random() < 0.002 else 0.0)  # a slow night, rarely
                    half = v * 0.004
                    status = "disturbed" if rng.random() < 0.01 else "skipped" if (j % 50 == 7) else "ok"
                    row = {k: tpl.get(k) for k in tpl if k not in ("id", "run_id")}
                    row.update(run_id=rid, bench=bench, param=param, status=status, plan_index=j,
                               reason="feature not available: rdpid" if status == "skipped" else None,
                               cycles_per_op=v, cycles_ci_low=v - half, cycles_ci_high=v + half,
                               per_op=v / 1.6, ci_low=(v - half) / 1.6, ci_high=(v + half) / 1.6,
                               ns_per_op=v / 3.1, median=v / 1.6, min=v / 1.62)
                    if status == "skipped":
                        for k in ("per_op", "ci_low", "ci_high", "cycles_per_op", "cycles_ci_low", "cycles_ci_high"):
                            row[k] = None
                    values.append(row)
                conn.execute(insert(results), values)
                made += 1
    store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--results", type=int, default=150)
    ap.add_argument("--hosts", type=int, default=4, choices=range(1, len(HOSTS) + 1))
    ap.add_argument("--keep", type=Path, default=None, help="keep the database in DIR (reused when there)")
    ap.add_argument("--jobs", type=int, default=None, help="report --jobs (default: its own)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = a.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        db = work / f"lab-{a.runs}x{a.results}x{a.hosts}.db"
        url = f"sqlite:///{db}"
        if not db.exists():
            t = time.perf_counter()
            make_db(url, a.runs, a.results, a.hosts, work)
            print(f"database: {a.runs} runs x {a.results} results on {a.hosts} hosts, "
                  f"{db.stat().st_size / 2**20:.0f} MiB, made in {time.perf_counter() - t:.0f} s", flush=True)
        site = Path(tmp) / "site"
        t = time.perf_counter()
        r = cyclebench("report", "-o", str(site), *(["--jobs", str(a.jobs)] if a.jobs else []), db=url)
        wall = time.perf_counter() - t
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest process's
        if r.returncode != 0:
            raise SystemExit(f"report failed ({r.returncode}): {r.stderr}")
        pages = sorted(site.rglob("*.html"), key=lambda p: p.stat().st_size)
        total = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        print(f"report: {wall:.1f} s wall ({cpu.ru_utime + cpu.ru_stime:.1f} s CPU), peak RSS {peak:.0f} MiB, "
              f"{len(pages)} pages, largest "
              f"{pages[-1].relative_to(site)} {pages[-1].stat().st_size / 2**20:.2f} MiB, site {total / 2**20:.0f} MiB")
        print(r.stderr.strip())


if __name__ == "__main__":
    main()
