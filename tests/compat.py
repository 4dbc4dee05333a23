"""What a database and a run file written by an earlier cyclebench read as: the fixture of
tests/data/compat (a database of six runs — run, run --backend callgrind, compare, variants, stat,
scale — and run 1's ``--json`` file, written by main at bed61a8) and the outputs that code gave
for them. ``python tests/compat.py`` (re)writes the outputs with the code of this work tree: do
it only with the code that wrote the fixture, or when an output is meant to change (say why in
the commit)."""

from __future__ import annotations

import gzip
import lzma
import shutil
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).parent / "data" / "compat"
DB_XZ = HERE / "main-bed61a8.db.xz"
RUNFILE_GZ = HERE / "main-bed61a8-run1.json.gz"
RUNS = (1, 2, 3, 4, 5, 6)
ENV = {"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}


def unpack(into: Path) -> tuple[Path, Path]:
    """The fixture's database and run file, decompressed into ``into``: (db path, json path)."""
    db, runfile = into / "compat.db", into / "run1.json"
    with lzma.open(DB_XZ) as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    with gzip.open(RUNFILE_GZ) as src, open(runfile, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return db, runfile


def cyclebench(db: Path, *args: str) -> str:
    """stdout of ``cyclebench ARGS`` on the database DB as a process of its own prints it into a
    pipe at 200 columns (in this process: conftest.cli_at; 27 processes were ~15 s of CPU), with
    DB's directory written ``{TMP}``; raises on a non-zero exit (with its stderr)."""
    from conftest import cli_at

    done = cli_at(200, *args, env={**ENV, "CYCLEBENCH_DB": f"sqlite:///{db}"})
    if done.exit_code != 0:
        raise AssertionError(f"cyclebench {' '.join(args)}: exit {done.exit_code}: {done.stderr}")
    return done.stdout.replace(str(db.parent), "{TMP}")  # an export names its database


def readings(db: Path, runfile: Path, scratch: Path) -> Iterator[tuple[str, str]]:
    """(name, text) of every reading the fixture is held to: ``runs``, and per run ``show N`` and
    its export as json, csv and markdown; the run file imported into a fresh database and
    exported again as json."""
    yield "runs.txt", cyclebench(db, "runs")
    for n in RUNS:
        yield f"show-{n}.txt", cyclebench(db, "show", str(n))
        for fmt, ext in (("json", "json"), ("csv", "csv"), ("markdown", "md")):
            yield f"export-{n}.{ext}", cyclebench(db, "export", "--format", fmt, str(n))
    fresh = scratch / "imported.db"
    cyclebench(fresh, "import", str(runfile))
    yield "imported-run1.json", cyclebench(fresh, "export", "--format", "json")


def write_expected(out: Path, name: str, text: str) -> None:
    """An expected reading, gzipped (``NAME.gz``, without a timestamp) when over 20 kB."""
    if len(text) > 20_000:
        with open(out / f"{name}.gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(text.encode())
    else:
        (out / name).write_text(text)


def read_expected(out: Path, name: str) -> str:
    """What write_expected wrote for ``name``."""
    packed = out / f"{name}.gz"
    return gzip.decompress(packed.read_bytes()).decode() if packed.exists() else (out / name).read_text()


if __name__ == "__main__":
    import tempfile

    out = HERE / "expected"
    out.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db, runfile = unpack(Path(tmp))
        for old in out.iterdir():
            old.unlink()
        for name, text in readings(db, runfile, Path(tmp)):
            write_expected(out, name, text)
            print(name, len(text))
