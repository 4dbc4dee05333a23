"""docs/gallery.md: every table and answer cyclebench prints, at 80 columns, from the lab fixture
(tests/data/lab, made by bench/lab_fixture.py), each under the command that prints it.

    .venv/bin/python bench/gallery.py            # rewrite docs/gallery.md
    .venv/bin/python bench/gallery.py --check    # exit 1 if docs/gallery.md differs from what it would write

tests/commands/test_gallery.py regenerates it and fails on a difference (approval testing, as
Mercurial's ``.t`` tests and Rust's trycmd do for command lines): every change to what reaches the
eye is a reviewed diff. The commands run in this process (click's test runner) on a copy of the
fixture, their consoles ``COLUMNS`` wide; what depends on the machine that reads the fixture (the
copy's path, the fixture's private directory) is normalised (:func:`normalise`). Commands that
read this machine or measure cannot be replayed: their output was kept when the fixture was made
(tests/data/lab/captured/, ``bench/lab_fixture.py --capture``) and is shown as it was, with its
argv from the manifest (:func:`captures`; a fixture step's capture by its kind, as annotate's).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "tests" / "data" / "lab"
GALLERY = ROOT / "docs" / "gallery.md"
COLUMNS = 80
REGENERATE = ".venv/bin/python bench/gallery.py"


@dataclass(frozen=True)
class Said:
    """What one command printed (stdout and stderr, as a terminal shows them) and how it ended."""

    argv: tuple[str, ...]
    exit_code: int
    output: str
    error: str | None  # the traceback of an exception that escaped the command, else None


def manifest(lab: Path = LAB) -> list[dict[str, object]]:
    steps = json.loads((lab / "manifest.json").read_text())["steps"]
    assert isinstance(steps, list)
    return steps


def captures(lab: Path = LAB) -> list[dict[str, object]]:
    """The commands ``bench/lab_fixture.py --capture`` ran (manifest.json's "captured"), in order:
    each its kind (heading), name (captured/<name>.txt), argv, why, ``before`` and exit, or why it
    was left out."""
    got = json.loads((lab / "manifest.json").read_text()).get("captured") or []
    assert isinstance(got, list)
    return got


@contextmanager
def lab_copy(lab: Path = LAB) -> Iterator[Path]:
    """A copy of the fixture's database in a private directory: readers may write (import, delete)."""
    with tempfile.TemporaryDirectory(prefix="cyclebench-gallery-") as d:
        path = Path(d) / "lab.db"
        shutil.copy(lab / "lab.db", path)
        yield path


def invoke(argv: list[str], db: Path, columns: int = COLUMNS) -> Said:
    """``cyclebench ARGV`` in this process on ``db``, its consoles ``columns`` wide."""
    from click.testing import CliRunner

    from cyclebench.cli import main
    from cyclebench.ui import common

    consoles = (common.out, common.err)
    saved = [(c.width, c.soft_wrap) for c in consoles]
    for c in consoles:  # the consoles read COLUMNS once, when they are made: set what it would have set
        c.width, c.soft_wrap = columns, False
    try:
        r = CliRunner().invoke(main, argv, env={"COLUMNS": str(columns), "CYCLEBENCH_DB": f"sqlite:///{db}"},
                               catch_exceptions=True)
    finally:
        for c, (w, s) in zip(consoles, saved, strict=True):
            c.width, c.soft_wrap = w, s
    error = None
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        error = "".join(traceback.format_exception(r.exception))
    return Said(tuple(argv), r.exit_code, r.output, error)


def series(db: Path) -> list[tuple[str, int | None, str]]:
    """Every (bench, param, variant) history follows, in name order: results of every kind but a
    profile's functions (a series per function of libc's start-up, not a benchmark's)."""
    con = sqlite3.connect(db)
    try:
        return [(b, p, v) for b, p, v in con.execute(
            "select distinct bench, param, variant from results where kind != 'profile' "
            "order by bench, param, variant")]
    finally:
        con.close()


def groups(db: Path) -> list[int]:
    con = sqlite3.connect(db)
    try:
        return [int(g) for (g,) in con.execute("select distinct group_id from runs where group_id is not null "
                                               "order by group_id")]
    finally:
        con.close()


def bisects(db: Path, runs: list[int]) -> list[str]:
    """The bisects ``runs`` are sittings of (their label bisect=ID), in the order of their runs."""
    con = sqlite3.connect(db)
    try:
        got = [(json.loads(lb or "null") or {}).get("bisect") for (lb,) in con.execute(
            f"select labels from runs where id in ({', '.join('?' * len(runs))}) order by id", runs)]
    finally:
        con.close()
    return [str(b) for b in dict.fromkeys(got) if b]


def history_argv(bench: str, param: int | None, variant: str) -> list[str]:
    return ["history", bench, *([] if param is None else ["-p", str(param)]),
            *(["--variant", variant] if variant else [])]


def entries(db: Path, lab: Path = LAB) -> list[tuple[str, str, list[list[str]]]]:
    """The gallery's sections: (heading, what made it, the commands whose output it shows)."""
    out: list[tuple[str, str, list[list[str]]]] = []
    for step in manifest(lab):
        runs = step.get("runs") or []
        assert isinstance(runs, list)
        argv = step["argv"]
        assert isinstance(argv, list)
        made = "cyclebench " + " ".join(_quote(a) for a in argv)
        if "left out" in step:
            out.append((str(step["kind"]), f"{made}\n(left out of the fixture: {step['left out']})", []))
        elif runs:
            # each run, then each bisect they are sittings of as `show --bisect` prints it again
            out.append((str(step["kind"]), made, [["show", str(r)] for r in runs]
                        + [["show", "--bisect", b] for b in bisects(db, [int(r) for r in runs])]))
    g = groups(db)
    stored = [["compare", "1", "2"], ["compare", "1", "2", "3"]]
    if len(g) >= 2:
        stored.append(["compare", f"g{g[0]}", f"g{g[1]}"])
    stored.append(["compare", "--by", "host"])
    out.append(("stored runs compared", "runs the fixture stored, compared (no measurement)", stored))
    out.append(("runs", "the stored runs, newest first", [["runs"], ["runs", "-n", "3", "--bench", "chain/*"]]))
    out.append(("history", "each series' runs in time order (every series the fixture has)",
                [history_argv(*s) for s in series(db)]
                + [[*history_argv("chain/add200", None, ""), "--fail-on-regression"],
                   ["history", "chain/add200", "--kind", "callgrind"],  # another series of one benchmark
                   ["history", "lib/work", "--purpose", "all"]]))  # revisions from every purpose
    out.append(("export", "run 1 in the formats other tools read (json left out: its bytes are the run's record)",
                [["export", "1", "--format", f] for f in ("gbench", "benchstat", "pyperf", "csv", "markdown",
                                                           "text")]))
    return out


def listings(db: Path, lab: Path = LAB) -> list[tuple[str, str, list[list[str]]]]:
    """Sections as entries', of commands that read the lab copy or this checkout and print no stored
    figure (the readers' matrix of tests/commands/test_lab_readers.py and tests/labnumbers.py is
    entries'): the site of the lab, its fleet jobs (none: it has no fleet), the built-in suite, and
    last (nothing after it reads the copy) a run deleted."""
    imported = next(s for s in manifest(lab) if s["kind"] == "import")["runs"]
    assert isinstance(imported, list)
    return [("report", "the lab as a static site (docs/site.md), written beside the copy",
             [["report", "-o", str(db.parent / "site")]]),
            ("fleet status", "the lab's fleet jobs: it has none (no fleet ran it; fleet run is left out below)",
             [["fleet", "status"]]),
            ("run --list", "the built-in suite (this checkout's benchmarks): what `run -b` picks from",
             [["run", "--list"]]),
            ("delete", f"the imported run (#{imported[-1]}) deleted from the copy, once every other command here "
                       "read it", [["delete", str(imported[-1]), "--yes"]])]


def _quote(a: str) -> str:
    return f'"{a}"' if (" " in a or not a) else a


_LAB_DIR = re.compile(r"/tmp/cyclebench-lab-[A-Za-z0-9_]+")
_COPY = re.compile(r"sqlite:///\S*cyclebench-gallery-[A-Za-z0-9_]+/lab\.db")
_COPY_DIR = re.compile(r"(?:/[^\s/]+)*/cyclebench-gallery-[A-Za-z0-9_]+")
_SITE_TIME = re.compile(r"^(site: \d+ pages \(.*\)) in \d+\.\d s;", re.M)  # commands/report.py's line


def normalise(text: str) -> str:
    """What depends on where and when the fixture is read, not on the fixture: the copy's path
    ($DB) and its directory ($COPY); the seconds `report` took; and the private directory the
    fixture was made in (in commands it stored) or a captured command ran in, as $LAB."""
    text = _COPY.sub("sqlite:///$DB", text)
    text = _COPY_DIR.sub("$COPY", text)
    text = _SITE_TIME.sub(r"\1 in N.N s;", text)
    return _LAB_DIR.sub("$LAB", text)


def render(lab: Path = LAB, columns: int = COLUMNS) -> str:
    lines = ["# Gallery: what cyclebench prints",
             "",
             f"Generated by `{REGENERATE}` from the lab fixture (`tests/data/lab`, made by",
             "`bench/lab_fixture.py`: one run of every kind cyclebench stores, measured with tiny budgets, so",
             f"the figures are small-sample ones). Every table at {columns} columns (`COLUMNS={columns}`), stdout and",
             "stderr as a terminal shows them, each under the command that prints it. Do not edit:",
             "tests/commands/test_gallery.py fails when this file differs from what the script writes, so a",
             "change to what reaches the eye is a reviewed diff here. `$LAB` is the private directory the",
             "fixture was made in, `$DB` the copy of its database the commands read and `$COPY` that copy's",
             "directory. The sections marked *captured* are of commands that read this machine or measure:",
             "what they printed was kept when the fixture was made (`bench/lab_fixture.py --capture`), each",
             "in a private directory (`$LAB`) with its own database; their progress lines (a bar on a",
             "terminal, gone when it ends) are left out.", ""]
    with lab_copy(lab) as db:
        for heading, made, commands in entries(db, lab) + listings(db, lab):
            lines += [f"## {heading}", "", "Made by:", "", "```", made, "```", ""]
            for argv in commands:
                said = invoke(argv, db, columns)
                lines += _console(argv, said.error or said.output, said.exit_code)
        listed = captures(lab)
        names = {str(c["name"]) for c in listed}
        for path in sorted(p for p in (lab / "captured").glob("*.txt") if p.stem not in names):
            step = next((s for s in manifest(lab) if s.get("kind") == path.stem), None)  # a step's (annotate)
            argv = step["argv"] if step else [path.stem]
            assert isinstance(argv, list)
            lines += [f"## {path.stem} (printed when the fixture was made: it stores nothing)", "", "```console",
                      "$ cyclebench " + " ".join(_quote(a) for a in argv)]
            lines += normalise(path.read_text()).rstrip("\n").split("\n")
            lines += ["```", ""]
        for c in listed:
            argv = c["argv"]
            assert isinstance(argv, list)
            lines += [f"## {c['kind']} " + ("(not captured)" if "left out" in c else f"(captured: {c['why']})"), ""]
            before = c.get("before") or []
            assert isinstance(before, list)
            made = [" ".join([*(f"{k}={v}" for k, v in b["env"].items()), "cyclebench",
                              *(_quote(a) for a in b["argv"])]) for b in before]
            if "left out" in c:
                made += ["cyclebench " + " ".join(_quote(a) for a in argv), f"(left out: {c['left out']})"]
            if made:
                said = "Made by:" if "left out" in c else "Run first, in its directory:"
                lines += [said, "", "```", *made, "```", ""]
            if "left out" not in c:
                lines += _console(argv, (lab / "captured" / f"{c['name']}.txt").read_text(), int(c["exit"]))
    return "\n".join(line.rstrip() for line in lines).rstrip("\n") + "\n"


def _console(argv: list[str], body: str, exit_code: int) -> list[str]:
    """A console block: the command line, what it printed (normalised), how it ended unless 0."""
    lines = ["```console", normalise("$ cyclebench " + " ".join(_quote(a) for a in argv))]
    lines += normalise(body).rstrip("\n").split("\n") if body.strip() else []
    if exit_code:
        lines.append(f"[exit {exit_code}]")
    return [*lines, "```", ""]


def diff(old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "docs/gallery.md (committed)",
                                        "docs/gallery.md (regenerated)", n=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 (with the diff) if docs/gallery.md is not current")
    args = ap.parse_args()
    os.environ.pop("CYCLEBENCH_DB", None)
    new = render()
    if args.check:
        old = GALLERY.read_text() if GALLERY.exists() else ""
        if old != new:
            sys.stdout.write(diff(old, new))
            raise SystemExit(f"docs/gallery.md is not current: {REGENERATE}")
        return
    GALLERY.write_text(new)
    print(f"{GALLERY}: {new.count(chr(10))} lines", file=sys.stderr)


if __name__ == "__main__":
    main()
