"""A run whose results carry 10 MB failure reasons, imported (`cyclebench import` of a run file as
`export --json` writes it), through every export format and every reader of a stored run, each in a
process of its own under a generous time limit. `export --format text` of such a run had not ended
after 60 s: rich cut a wrapped note's lines with ``str.partition``, copying the rest of the note at
each line (quadratic; report/fit.py's linewise). The lossless formats (json, csv) keep the reasons
whole, markdown and the site whole too; the terminal's tables show at most 4,096 characters of a
note and say how many more there are (docs/exports.md, text)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from cyclebench.report.fit import NOTE_SHOWN
from cyclebench.report.text import visible
from cyclebench.ui.options import EXPORT_FORMATS

from conftest import DATA, cli

SIZE = 10_000_000
END = " the end of the reason"  # the last words, found whole where a format keeps the reason
# words, a path, a tab, a line break, an escape sequence, non-ASCII: what a runner's stderr holds
_LINE = "assertion failed in hot_path/loop_unrolled.c:42: x == 12345678\t\x1b[7m\u00e9\n"
FAILED = (_LINE * (SIZE // len(_LINE) + 1))[:SIZE - len(END)] + END
CRASHED = "x" * (SIZE - len(END)) + END  # one word of 10 MB: nowhere to wrap it but by folding
HURT = {"chain/add200": ("failed", FAILED), "chain/add400": ("crashed", CRASHED)}
LIMIT = 60.0  # s; each case took 0.5-2.4 s on a 2-CPU guest shared with other work, text had not ended in 60
SHOWN = "more characters not shown"
SMALL = 1_000_000  # bytes: a table that shows a bounded note is this small, the whole notes 20 MB


@dataclass(frozen=True)
class Lab:
    url: str
    run: int  # the imported run's id
    dir: Path


def cyclebench(argv: list[str], lab: Lab, columns: int | None = None) -> subprocess.CompletedProcess[str]:
    """``cyclebench ARGV`` in a process of its own on the lab's database, stdout a pipe: its natural
    width without ``columns`` (ui/common), else ``columns`` wide; failed when not ended in LIMIT."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["CYCLEBENCH_DB"] = lab.url
    if columns is not None:
        env["COLUMNS"] = str(columns)
    try:
        return subprocess.run([sys.executable, "-m", "cyclebench", *argv], capture_output=True, text=True, env=env,
                              cwd=lab.dir, timeout=LIMIT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"cyclebench {' '.join(argv)} (COLUMNS={columns}) had not ended after {LIMIT:.0f} s")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    """The lab fixture's database (tests/data/lab: every stored kind) with run 1 imported again, its
    chain/add200 failed and chain/add400 crashed, each with a reason of 10 MB."""
    d = tmp_path_factory.mktemp("hostile")
    shutil.copy(DATA / "lab" / "lab.db", d / "lab.db")
    url = f"sqlite:///{d / 'lab.db'}"
    source = d / "run1.json"
    assert cli("export", "1", "--json", str(source), "--db", url).exit_code == 0
    doc = json.loads(source.read_text())
    for r in doc["results"]:
        if r["bench"] in HURT:
            r["status"], r["reason"] = HURT[r["bench"]]
    assert sum(r["bench"] in HURT for r in doc["results"]) == len(HURT)
    hostile = d / "hostile.json"
    hostile.write_text(json.dumps(doc))
    at = Lab(url, 0, d)
    r = cyclebench(["import", str(hostile)], at)
    assert r.returncode == 0, r.stderr
    said = re.search(r"imported as run #(\d+)", r.stdout + r.stderr)  # said on stderr
    assert said is not None, r.stderr
    return Lab(url, int(said.group(1)), d)


def _ok(r: subprocess.CompletedProcess[str], codes: tuple[int, ...] = (0,)) -> None:
    assert r.returncode in codes and "Traceback" not in r.stderr, (r.returncode, r.stderr[-2000:])


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_every_export_format(lab: Lab, fmt: str) -> None:
    r = cyclebench(["export", str(lab.run), "--format", fmt], lab)
    _ok(r)
    out = r.stdout
    if fmt == "json":  # the run file: every byte of each reason
        got = {x["bench"]: (x["status"], x["reason"]) for x in json.loads(out)["results"]}
        assert all(got[b] == HURT[b] for b in HURT)
    elif fmt == "csv":  # whole, its controls made visible as every text cell of the csv (docs/exports.md)
        limit = csv.field_size_limit(sys.maxsize)  # Python's reader refuses a field over 128 KiB unless told
        try:
            rows = {x["bench"]: x for x in csv.DictReader(io.StringIO(out))}
        finally:
            csv.field_size_limit(limit)
        for bench, (status, reason) in HURT.items():
            assert rows[bench]["status"] == status and rows[bench]["reason"] == visible(reason)
            assert rows[bench]["notes"] == visible(f"{status}: {reason}")
    elif fmt == "markdown":  # whole, on one line of the table
        assert out.count(END) == len(HURT) and len(out) > len(HURT) * SIZE
    elif fmt == "text":  # a bounded note, said so, at most 72 columns
        assert out.count(SHOWN) == len(HURT) and len(out) < SMALL
        assert f"{len(f'failed: {visible(FAILED)}') - NOTE_SHOWN:,} {SHOWN}" in " ".join(out.split())
        assert max(map(len, out.splitlines())) <= 72
    else:  # gbench, benchstat, pyperf: ok results only, the failed and crashed ones named as left out
        assert len(out) < SMALL and "loop/empty" in out and END not in out
        assert "left out" in r.stderr
        if fmt != "benchstat":
            assert json.loads(out)


# every reader of a stored run (tests/commands/test_lab_readers.py runs them over every kind): as a
# pipe prints (its natural width), at 80 columns, at 40 (each row a record)
READERS = [(["show", "{run}"], None), (["show", "{run}"], 80), (["show", "{run}"], 40),
           (["show", "{run}", "--wide"], None), (["show", "{run}", "--wide"], 80),
           (["show", "{run}", "--format", "text"], None),
           (["runs"], None), (["runs", "-n", "3", "--bench", "chain/*"], 80),
           (["history", "chain/add200"], None), (["history", "chain/add400"], 80),
           (["compare", "1", "{run}"], None), (["compare", "{run}", "1"], 80)]


@pytest.mark.parametrize(("argv", "columns"), READERS, ids=[" ".join(a) + f"@{c}" for a, c in READERS])
def test_every_reader(lab: Lab, argv: list[str], columns: int | None) -> None:
    r = cyclebench([a.format(run=lab.run) for a in argv], lab, columns)
    _ok(r)
    assert len(r.stdout) < SMALL, len(r.stdout)
    if argv[0] == "show":  # the notes shown bounded, each saying so
        assert " ".join(r.stdout.split()).count(SHOWN) == len(HURT)
    if columns is not None and "--format" not in argv:
        assert max(map(len, r.stdout.splitlines())) <= columns


def test_the_site(lab: Lab) -> None:
    """`report` writes every page, the imported run's with its reasons whole (a page's tables are
    every cell of the terminal's)."""
    site = lab.dir / "site"
    r = cyclebench(["report", "-o", str(site)], lab)
    _ok(r)
    assert (site / "index.html").is_file()
    page = (site / "runs" / f"{lab.run}.html").read_text()
    assert page.count(END) >= len(HURT)
