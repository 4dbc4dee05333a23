"""Databases a user points at that cyclebench cannot use — a bad URL, no driver, a directory, a
read-only file, random bytes, a half-written file, another program's SQLite file, a schema from a
later version — are refused with exit 2 before anything is measured, and left as they were."""

from __future__ import annotations

import hashlib

import pytest

from .conftest import NewLab, Shared, database, read_only_dir
from .harness import Lab, one_line

pytestmark = pytest.mark.audit

SECRET = "S3cretPW"
RUN_T = ("run", "-b", "timer/rdtsc", "-q")
PG = "postgresql://u:p@127.0.0.1:1/x"


# (argv, one line on stderr as well)
BAD_URLS = {
    "not-a-url": (("runs", "--db", "not a url"), False),
    "sqlite-without-a-path": (("runs", "--db", "sqlite://///"), False),
    "unknown-dialect": (("runs", "--db", "foo://bar"), False),
    "postgresql-unreachable-or-no-driver": (("runs", "--db", PG), True),
    "postgresql-on-run": ((*RUN_T, "--db", PG), False),
    "mysql": (("runs", "--db", "mysql://u:p@127.0.0.1:1/x"), False),
    "a-directory": (("runs", "--db", "sqlite:///{T}"), False),
}


@pytest.mark.parametrize(("argv", "single"), BAD_URLS.values(), ids=BAD_URLS.keys())
def test_a_database_url_that_cannot_be_used_is_exit_2(lab: Lab, argv: tuple[str, ...], single: bool) -> None:
    r = lab.run(*argv)
    assert r.rc == 2, r
    if single:
        assert one_line(r), r


def test_a_password_in_a_postgresql_url_is_never_printed(lab: Lab) -> None:
    r = lab.run("runs", "--db", f"postgresql://benchuser:{SECRET}@127.0.0.1:1/x")
    assert r.rc == 2, r
    assert SECRET not in r.text


@pytest.mark.parametrize("argv", [("runs", "--db", "sqlite:///{T}/missing/sub/x.db"),
                                  ("runs", "--db", "sqlite:///rel-relative.db")],
                         ids=["in-a-missing-directory", "relative-path"])
def test_a_database_path_that_does_not_exist_yet_is_created_or_refused(lab: Lab, argv: tuple[str, ...]) -> None:
    assert lab.run(*argv).rc in (0, 2)


def test_run_into_a_database_in_a_missing_directory_creates_it_or_refuses(lab: Lab) -> None:
    assert lab.run(*RUN_T, "--db", "sqlite:///{T}/missing/sub/x.db").rc in (0, 2)


@pytest.mark.parametrize("argv", [("runs",), ("show",)], ids=["runs", "show"])
def test_a_read_only_database_can_be_read(new_lab: NewLab, shared: Shared, argv: tuple[str, ...]) -> None:
    lab = new_lab(wrap_ro=True)
    database(lab, shared, "read-only")
    r = lab.run(*argv)
    assert r.rc == 0, r


def test_run_into_a_read_only_database_is_refused_before_measuring(new_lab: NewLab, shared: Shared) -> None:
    lab = new_lab(wrap_ro=True)
    database(lab, shared, "read-only")
    assert lab.run(*RUN_T).rc == 2


@pytest.mark.parametrize("argv", [(*RUN_T, "--db", "sqlite:///{T}/rodir/x.db"),
                                  ("runs", "--db", "sqlite:///{T}/rodir/sub/x.db")],
                         ids=["run-in-a-read-only-directory", "runs-under-a-read-only-directory"])
def test_a_database_in_a_read_only_directory_is_refused(new_lab: NewLab, argv: tuple[str, ...]) -> None:
    lab = new_lab(wrap_ro=True)
    read_only_dir(lab)
    assert lab.run(*argv).rc == 2


@pytest.mark.parametrize("argv", [("runs",), RUN_T], ids=["runs", "run"])
def test_random_bytes_are_not_a_database(lab: Lab, shared: Shared, argv: tuple[str, ...]) -> None:
    database(lab, shared, "random")
    assert lab.run(*argv).rc == 2


def test_a_truncated_database_is_refused_by_runs_show_and_run(lab: Lab, shared: Shared) -> None:
    database(lab, shared, "truncated")
    for argv in (("runs",), ("show", "1"), RUN_T):
        r = lab.run(*argv)
        assert r.rc == 2, r


@pytest.mark.parametrize(("argv", "rc", "single"), [(("show", "1"), 2, False),
                                                    (("export", "1", "--json", "{T}/x.json"), 2, False),
                                                    (("runs",), 0, False),
                                                    (RUN_T, 2, True)],
                         ids=["show", "export", "runs-still-lists", "run"])
def test_a_database_whose_results_pages_are_overwritten(lab: Lab, shared: Shared, argv: tuple[str, ...], rc: int,
                                                        single: bool) -> None:
    """The runs table intact, the results table's pages random: what needs the results is
    refused in one clear line (it was a traceback), `runs` still lists."""
    database(lab, shared, "results-pages-overwritten")
    r = lab.run(*argv)
    assert r.rc == rc, r
    if single:
        assert one_line(r), r


@pytest.mark.audit_slow
def test_a_database_of_the_first_schema_is_upgraded_and_used(lab: Lab, shared: Shared) -> None:
    database(lab, shared, "old")
    r = lab.run("show", "1")
    assert r.rc == 0, r
    r = lab.run(*RUN_T)
    assert r.rc == 0, r
    r = lab.run("compare", "1", "2")
    assert r.rc == 0, r


def test_a_database_of_a_later_version_is_refused(lab: Lab, shared: Shared) -> None:
    database(lab, shared, "newer")
    assert lab.run("runs").rc == 2


def _digest(lab: Lab) -> str:
    return hashlib.sha256(lab.db.read_bytes()).hexdigest()


def test_another_programs_sqlite_file_is_refused_untouched(lab: Lab, shared: Shared) -> None:
    database(lab, shared, "foreign")
    before = _digest(lab)
    assert lab.run("runs").rc == 2
    assert _digest(lab) == before


def test_run_refuses_another_programs_sqlite_file_and_adds_no_columns(lab: Lab, shared: Shared) -> None:
    """After a `runs` on the same file, as a user would."""
    database(lab, shared, "foreign")
    lab.run("runs")
    assert lab.run(*RUN_T).rc == 2
    assert tuple(row[1] for row in lab.rows("PRAGMA table_info(runs)")) == ("id", "name")
