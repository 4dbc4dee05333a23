"""A database and a run file written by an earlier main (bed61a8) open and read the same: every
run shown, exported (json, csv, markdown) and listed as that code did, and its run file imported
and exported again (tests/compat.py holds the fixture and how its expected readings were made).
A change of the records, the store's columns or a reporter that alters what a stored run reads
as fails here, naming the reading."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests import compat


@pytest.fixture(scope="module")
def readings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("compat")
    db, runfile = compat.unpack(tmp)
    return dict(compat.readings(db, runfile, tmp))


EXPECTED = compat.HERE / "expected"
NAMES = sorted(p.name.removesuffix(".gz") for p in EXPECTED.iterdir())


def test_every_reading_has_its_expected_text(readings: dict[str, str]) -> None:
    assert sorted(readings) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_an_old_database_and_run_file_read_the_same(readings: dict[str, str], name: str) -> None:
    got, want = readings[name], compat.read_expected(EXPECTED, name)
    if got != want:  # the first differing line, not a 600 kB diff
        for i, (g, w) in enumerate(zip(got.splitlines(), want.splitlines(), strict=False)):
            assert g == w, f"{name}, line {i + 1}"
        assert got == want, f"{name}: {len(got)} characters, expected {len(want)}"


def test_the_fixture_is_what_an_earlier_main_wrote() -> None:
    """The database's schema is the one of its migrations at the time (0007), so the test also
    covers the upgrade path when a later migration is added."""
    import sqlite3
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        db, _ = compat.unpack(Path(tmp))
        con = sqlite3.connect(db)
        try:
            assert con.execute("select version_num from alembic_version").fetchone()[0].startswith("0007")
        finally:
            con.close()
