"""Every stored kind through every reader: the lab fixture (tests/data/lab, bench/lab_fixture.py: one
run of every kind cyclebench stores) read by `show` of each run, `runs`, `history` of every series,
stored `compare`, `export` in every format and `import` of the json back, `report`, `explain` and
`delete` — at 60, 80 and 200 columns: no traceback, the documented exit code, and the invariants
every printed table keeps (docs/gallery.md shows them at 80)."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import gallery

from cyclebench.ui.options import EXPORT_FORMATS

LAB = gallery.LAB
VERSIONS = Path(__file__).resolve().parents[2] / "src" / "cyclebench" / "store" / "migrations" / "versions"
REBUILD = ".venv/bin/python bench/lab_fixture.py && .venv/bin/python bench/gallery.py"
WIDTHS = (60, 80, 200)

_REVISION = re.compile(r'^revision\s*=\s*"([^"]+)"', re.M)
_DOWN = re.compile(r'^down_revision\s*=\s*"([^"]+)"', re.M)
# a number in scientific notation (1.2e+03, 4e-05): cyclebench's figures fit their columns as plain numbers
_SCIENTIFIC = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?e[-+]\d+(?![\w.])", re.I)  # not a sha's 29536e9


def head_revision() -> str:
    """The newest Alembic revision: the one no other revision names as its down_revision."""
    texts = [p.read_text() for p in VERSIONS.glob("*.py")]
    revisions = {m.group(1) for t in texts if (m := _REVISION.search(t))}
    downs = {m.group(1) for t in texts if (m := _DOWN.search(t))}
    [head] = revisions - downs
    return head


def problems(text: str, columns: int) -> list[str]:
    """The invariants of what a command printed at ``columns`` columns, each broken one named with
    its line (docs/gallery.md): no line wider than the console; no "…" (a cut title, header, name or
    note); no number in scientific notation; no note or title centred (a line of words that starts
    further in than a note's indent)."""
    out = []
    for line in text.splitlines():
        if line.startswith("cyclebench: "):  # an error or a note: one line, whatever the width (ui/common)
            continue
        if len(line) > columns:
            out.append(f"wider than {columns}: {line!r}")
        if "…" in line:
            out.append(f"cut with …: {line!r}")
        if _SCIENTIFIC.search(line):
            out.append(f"scientific notation: {line!r}")
        stripped = line.strip()
        indent, trail = len(line) - len(line.lstrip(" ")), len(line) - len(line.rstrip(" "))
        # prose (no run of two spaces between its words, as columns have) as far from the left as from
        # the right: centred (a record's value wrapped under its value column is not)
        if indent > 4 and abs(indent - trail) <= 1 and len(stripped.split()) >= 3 and "  " not in stripped \
                and re.search(r"[a-z]{3}", stripped):
            out.append(f"centred: {line!r}")
    return out


def test_the_fixture_is_current() -> None:
    """The fixture's schema is the newest migration's, and every kind it lists was made (a kind left
    out because a tool was missing where it was built is said here, not found by a reader)."""
    con = sqlite3.connect(LAB / "lab.db")
    try:
        [(revision,)] = con.execute("select version_num from alembic_version").fetchall()
    finally:
        con.close()
    assert revision == head_revision(), (
        f"tests/data/lab/lab.db is at schema {revision}, the newest migration is {head_revision()}: rebuild it "
        f"({REBUILD}) and commit tests/data/lab and docs/gallery.md")
    steps = gallery.manifest()
    assert [s["kind"] for s in steps if "left out" in s] == [], f"rebuild where every tool is installed: {REBUILD}"
    assert all(s["runs"] for s in steps if s["kind"] != "annotate")


def _expected_exit(argv: list[str]) -> set[int]:
    """The documented exit codes (docs/cli.md): 0; 2 for what the user can fix (a history of a
    series with no per-op figure; compare --by host with one host); history --fail-on-regression 1 on a
    regression."""
    if argv[:1] == ["history"]:
        return {0, 1} if "--fail-on-regression" in argv else {0, 2}
    if argv[:3] == ["compare", "--by", "host"]:
        return {2}
    return {0}


def _readers(db: Path) -> list[list[str]]:
    return [argv for _, _, commands in gallery.entries(db) for argv in commands]


def _for_the_eye(argv: list[str]) -> bool:
    """Printed for a reader at the console's width: not --wide (every column, by design), not an
    export for another tool (gbench, csv, …; `text` is for mail, at 72 columns)."""
    return "--wide" not in argv and (argv[0] != "export" or argv[-1] == "text")


@pytest.mark.parametrize("columns", WIDTHS)
def test_every_reader_of_every_kind(columns: int) -> None:
    failed = []
    with gallery.lab_copy() as db:
        readers = _readers(db)
        stored = [r for s in gallery.manifest() for r in s["runs"]]  # type: ignore[union-attr]
        assert [int(a[1]) for a in readers if a[0] == "show" and a[1].isdigit()] == stored  # one show a run
        assert any(a[:2] == ["show", "--bisect"] for a in readers)  # and the bisect its sittings are of
        for argv in [*readers, ["show", "--wide"]]:
            said = gallery.invoke(argv, db, columns)
            if said.error:
                failed.append(f"cyclebench {' '.join(argv)}: {said.error}")
                continue
            if said.exit_code not in _expected_exit(argv):
                failed.append(f"cyclebench {' '.join(argv)}: exit {said.exit_code}\n{said.output}")
            if not _for_the_eye(argv):
                continue
            width = max(columns, 72) if argv[0] == "export" else columns  # text: 72 columns, for mail
            failed += [f"cyclebench {' '.join(argv)}: {p}" for p in problems(said.output, width)]
    assert not failed, "\n".join(failed)


def test_every_run_exports_in_every_format_and_imports_back(tmp_path: Path) -> None:
    """`export` of each stored run in every format (exit 0, something written, no traceback), and the
    json of each imported into an empty database, `show` of the imported run printing what `show` of
    the original printed."""
    target = tmp_path / "imported.db"
    with gallery.lab_copy() as db:
        runs = [r for s in gallery.manifest() for r in s["runs"]]  # type: ignore[union-attr]
        for rid in runs:
            for fmt in EXPORT_FORMATS:
                said = gallery.invoke(["export", str(rid), "--format", fmt], db)
                assert said.error is None and said.exit_code == 0, (rid, fmt, said.error or said.output)
                assert said.output.strip(), (rid, fmt)
            path = tmp_path / f"{rid}.json"
            said = gallery.invoke(["export", str(rid), "--json", str(path)], db)
            assert said.exit_code == 0 and json.loads(path.read_text()), said.output
            imported = gallery.invoke(["import", str(path)], target)
            assert imported.error is None and imported.exit_code == 0, imported.error or imported.output
        original = gallery.invoke(["show", "12"], db)  # compare's verdicts, as the command printed them
    again = gallery.invoke(["show", str(runs.index(12) + 1)], target)
    body = lambda s: s.split("\nrun #")[0].replace("run #12", "run #N")  # noqa: E731
    assert body(again.output.replace(f"run #{runs.index(12) + 1}", "run #12")) == body(original.output)


def test_report_explain_and_delete(tmp_path: Path) -> None:
    """`report` writes the site of every stored kind (its pages opened in a browser by
    tests/browser); `explain` sets the stored measurement beside the models; `delete` of a copy's
    run leaves the others readable."""
    with gallery.lab_copy() as db:
        site = tmp_path / "site"
        said = gallery.invoke(["report", "-o", str(site)], db)
        assert said.error is None and said.exit_code == 0, said.error or said.output
        assert (site / "index.html").is_file() and len(list(site.rglob("*.html"))) > 10
        if shutil.which("llvm-mca"):
            src = str(LAB.parents[0] / "chain.c")
            said = gallery.invoke(["explain", src, "chain/add200"], db)
            assert said.error is None and said.exit_code == 0, said.error or said.output
            assert "measured" in said.output and not problems(said.output, 80)
        said = gallery.invoke(["delete", "12", "--yes"], db)
        assert said.error is None and said.exit_code == 0, said.error or said.output
        assert gallery.invoke(["show", "12"], db).exit_code == 2
        assert gallery.invoke(["show", "13"], db).exit_code == 0
        assert gallery.invoke(["runs"], db).exit_code == 0


def test_the_order_of_rows_is_stated_alike_in_the_readme_and_the_exports_doc() -> None:
    """One rule orders every table, show, export and plot (model.suite_order): both documents state it
    in the same words."""
    root = Path(__file__).resolve().parents[2]
    rule = "Rows follow the run's plan: by group, then benchmark, each where the plan first has it"
    for doc in ("README.md", "docs/exports.md"):
        text = " ".join((root / doc).read_text().split())
        assert rule in text, doc
        assert "the order of the `-b` patterns" in text and "parameter ascending" in text, doc


def test_rows_are_in_one_order_in_show_and_every_export() -> None:
    """Run 1's benchmarks and the allocator run's variants in the same order in show's table and the
    csv, markdown, text and benchstat exports."""
    def order(text: str, names: list[str]) -> list[str]:
        found = sorted((text.find(n), n) for n in names if n in text)
        return [n for _, n in found]

    with gallery.lab_copy() as db:
        con = sqlite3.connect(db)
        try:
            benches = [b for (b,) in con.execute("select distinct bench from results where run_id = 1")]
        finally:
            con.close()
        shown = order(gallery.invoke(["show", "1"], db, 200).output, benches)
        assert sorted(shown) == sorted(benches)
        for fmt in ("csv", "markdown", "text", "benchstat"):
            assert order(gallery.invoke(["export", "1", "--format", fmt], db).output, benches) == shown, fmt
        alloc = ["glibc", "jemalloc"]
        assert order(gallery.invoke(["show", "5"], db, 200).output, alloc) == alloc
        assert order(gallery.invoke(["export", "5", "--format", "csv"], db).output, alloc) == alloc


def test_the_stored_profile_adds_up_as_exported() -> None:
    """The lab's timed profile (the in-process probe's), read back by `export --format json`: each
    row's total is its self plus its callees' calls per call × their total, as stored, and the %
    self of its functions adds up to 100 (docs/method.md §10; profile_rules.adds_up, the same rule
    over every profile the tests make)."""
    import json

    from tests.profile_rules import adds_up

    with gallery.lab_copy() as db:
        said = gallery.invoke(["export", "20", "--format", "json"], db, 200)
    assert said.exit_code == 0, said.output
    rows = {r["extra"]["function"]: r["extra"] for r in json.loads(said.output)["results"]}
    assert {"main", "chain3000", "chain30", "f", "g"} <= set(rows)
    adds_up(rows)
