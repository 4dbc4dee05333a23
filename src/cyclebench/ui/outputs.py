"""Output files never destroy inputs: the one check every option that writes a file goes through.

``--json r.db`` with ``--db sqlite:///r.db`` would write the JSON over the database the run
was just stored in ("database disk image is malformed", every stored run gone); ``run a.c
--json a.c`` would replace the benchmark's source. Like gcc ("input file 'a.c' is the same as
output file"), such an output is refused in one line, exit 2, before anything is built or
measured. An output is compared with each input by its resolved path and, when both exist, by
device and inode (os.path.samefile), so ``./r.db``, a symlink or a hard link to it is caught too.

Outputs are the file options of a command named in ``OUTPUTS`` (``--json``, ``-o/--output``,
``--plot``, ``--csv``, ``gen -o``): :func:`guard` wraps every command of the CLI that has one.
Inputs are the SQLite database of ``--db`` (or the default, for commands without one) with its ``-wal``, ``-shm`` and
``-journal`` files, the C sources a command builds and the headers they include (``cc -MM``),
the engine's own files, and two outputs naming the same file.
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypedDict, cast

import click

from cyclebench.ui.common import UserError

# click parameter names of the options that write a file (the command's callback gets these)
OUTPUTS = ("json_path", "output_path", "plot_path", "csv_path", "output")
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")  # sqlite.org/tempfiles.html


class Params(TypedDict, total=False):
    """The parameters of a command's callback (click passes them by name) that the check reads:
    its outputs (OUTPUTS: a path, "-" for stdout, None when not given), ``db`` (--db), and what a
    build reads (``files`` and ``file_patterns``: the sources, ``cflags`` as one string,
    ``include_dirs``, ``defines``, ``cc``). A command has some of them; the others it has are
    not read here."""

    json_path: str | Path | None
    output_path: str | Path | None
    plot_path: str | Path | None
    csv_path: str | Path | None
    output: str | Path | None
    db: str | None
    files: Sequence[str | Path]
    file_patterns: Sequence[str]
    cflags: str | None
    include_dirs: Sequence[str | Path]
    defines: Sequence[str]
    cc: str | Sequence[str] | None  # variants: --cc given more than once


def _database_files(db: str | None) -> Iterator[tuple[Path, str]]:
    from cyclebench.store import default_url, urls

    raw = db or default_url()
    plain = urls.plain_sqlite(raw)  # without SQLAlchemy (~0.2 s): compare imports it while measuring
    if plain is not None:
        path, shown = plain
    else:
        try:
            path = urls.sqlite_path(urls.parse(raw))
        except urls.UrlError:
            return  # the store says why in its own line
        shown = urls.display(raw)
    if path is not None:
        yield Path(path), f"the database ({shown})"
        for side in SQLITE_SIDE_FILES:
            yield Path(path + side), f"the database's {side} file ({shown})"


def _build_files(kw: Params, deep: bool) -> Iterator[tuple[Path, str]]:
    """The files a build of this command reads; with ``deep`` also the headers its user sources
    include (``cc -MM``: 9 ms of CPU a source here, 100 ms of wall time at a load of 11 on 2
    CPUs; only an output that already exists can be one, so only then is it run)."""
    from cyclebench.build import compile as compiler
    from cyclebench.experiments.options import BuildOptions
    from cyclebench.ui.options import expand_files

    if "file_patterns" not in kw:
        return
    files = expand_files([*map(str, kw.get("files") or ()), *kw["file_patterns"]])
    if not files:  # the built-in suite: its sources, its headers beside them, the engine
        suite = compiler.suite_sources()
        for d in {p.parent for p in suite} | {compiler.engine_dir()}:
            yield from ((p, "a source of the built-in suite") for p in d.iterdir() if p.is_file())
        return
    yield from ((f, "an input source") for f in files)
    if deep:
        try:
            cflags = tuple(shlex.split(kw.get("cflags") or ""))
        except ValueError:
            cflags = ()
        spec = BuildOptions(files=files, include_dirs=tuple(Path(d) for d in kw.get("include_dirs") or ()),
                            defines=tuple(kw.get("defines") or ()), cflags=cflags,
                            cc=kw.get("cc") if isinstance(kw.get("cc"), str) else "cc").spec()
        with_deps = compiler.included_files(spec)
        yield from ((f, "a header the sources include") for f in with_deps if f not in files)


def _same(a: Path, b: Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def check(outputs: dict[str, str], kw: Params) -> None:
    """Raise UserError (one line, exit 2) when an output of ``kw`` (``outputs``: parameter name
    → option, e.g. ``{"json_path": "--json"}``) is an input of the command or another output."""
    given = [(Path(kw[name]), opt) for name, opt in outputs.items()
             if kw.get(name) is not None and str(kw[name]) != "-"]
    if not given:
        return
    for i, (path, opt) in enumerate(given):
        for other, other_opt in given[:i]:
            if _same(path, other):
                raise UserError(f"{opt} {path}: {other_opt} writes the same file; give each output its own file")
    inputs = list(_database_files(kw.get("db")))  # without --db: the default one (gen -o too)
    inputs += _build_files(kw, deep=any(p.is_file() for p, _ in given))
    for path, opt in given:
        for src, what in inputs:
            if _same(path, src):
                raise UserError(f"{opt} {path}: that is {what}, which it would overwrite; give another file")


def guarded(callback: Callable[..., Any], outputs: dict[str, str]) -> Callable[..., Any]:
    """``callback`` (a click command's) checking its outputs before it runs."""

    @functools.wraps(callback)
    def wrapper(*args: Any, **kw: Any) -> Any:
        check(outputs, cast(Params, kw))
        return callback(*args, **kw)

    wrapper.__cyclebench_guarded__ = True  # type: ignore[attr-defined]
    return wrapper


def guard_command(cmd: click.Command) -> None:
    """Wrap ``cmd`` (or every command of a group) when it writes a file (an OUTPUTS parameter of
    click.Path type), so its outputs are checked before it runs (cli.py calls this as it loads a
    command); wrapping twice is a no-op."""
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            guard_command(sub)
        return
    outputs = {p.name: "/".join(p.opts) for p in cmd.params
               if p.name in OUTPUTS and isinstance(p.type, click.Path)}
    if outputs and cmd.callback is not None and not hasattr(cmd.callback, "__cyclebench_guarded__"):
        cmd.callback = guarded(cmd.callback, outputs)
