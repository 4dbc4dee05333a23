"""Options declared once and shared by every command (asv's commands/ share theirs the same way).

* ``build_options``: ``-f/--file FILE`` (repeatable, globs), ``-I``, ``-D``, ``--cflags``,
  ``--ldflags``, ``--cc`` on every command that builds; the command receives one
  ``build: BuildOptions``. A positional ``FILE.c`` is a file there too (``files_in``:
  ``cyclebench scale x.c``, ``compare x.c a/b c/d``), as ``run FILE.c`` always took it.
* ``runner_options``: ``--cpu N``, ``--fifo PRIO``, ``--max-rss MiB`` on every command that pins
  one runner; the command receives one ``pin: RunnerOptions``.
* ``db_option``, ``json_option``: ``--db URL`` and ``--json FILE`` with the same meaning everywhere.
* ``label_option``: ``--label KEY=VALUE`` (repeatable) on every command that stores a run; the
  command receives ``label_args`` and turns them into ``{key: value}`` with ``parse_labels``.
* ``format_option``: ``--format F`` and ``-o/--output FILE`` on every command that can export
  (report/export, docs/exports.md); the command receives one ``output: OutputOptions``.
"""

from __future__ import annotations

import functools
import glob
import math
import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:  # built where a command runs: `runs` and `--help` import no compiler driver (bench/startup.py)
    pass

F = TypeVar("F", bound=Callable[..., Any])


def expand_files(patterns: Sequence[str], option: str = "-f/--file") -> tuple[Path, ...]:
    """Each pattern as a glob (a plain path matches itself); resolved, in order, without repeats.
    Raises click.BadParameter when a pattern names no existing file."""
    out: list[Path] = []
    for pat in patterns:
        hits = sorted(glob.glob(pat)) if glob.has_magic(pat) else [pat]
        files = [Path(h) for h in hits if Path(h).is_file()]
        if not files:
            raise click.BadParameter(f"'{pat}' matches no file", param_hint=option)
        out += [f.resolve() for f in files if f.resolve() not in out]
    return tuple(out)


def valid_cpu(cpu: int | None, option: str = "--cpu") -> int | None:
    """``cpu`` when this process may run on it (sched_getaffinity), else click.BadParameter:
    a self-test or check of a CPU that does not exist measured nothing and said nothing."""
    if cpu is not None and cpu not in (allowed := sorted(os.sched_getaffinity(0))):
        raise click.BadParameter(f"CPU {cpu} is not available here (allowed: {','.join(map(str, allowed))})",
                                 param_hint=option)
    return cpu


def _split(text: str, option: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(text))
    except ValueError as e:  # an unbalanced quote: one line, exit 2, no traceback
        raise click.BadParameter(str(e), param_hint=option) from None


def take_c_files(values: Sequence[str]) -> tuple[list[str], list[str]]:
    """Positional arguments split into (C files — ending in ``.c``: a path or a glob, as ``-f``
    takes them —, the others: benchmark names, run ids), each in order."""
    files = [v for v in values if v.endswith(".c")]
    return files, [v for v in values if not v.endswith(".c")]


def build_options(cflags_help: str = "Flags for the benchmark sources (split like a shell would, passed as argv).",
                  positional: bool = False, cc: bool = True,
                  cflags_default: str | None = None, files_in: str | None = None,
                  one: str | None = None) -> Callable[[F], F]:
    """Adds -f/-I/-D/--cflags/--ldflags(/--cc); the command gets ``build: BuildOptions``. With
    ``positional``, the command's own ``files`` argument (a shorthand) is merged into -f;
    with ``files_in``, the ``FILE.c`` items of the command's positional argument of that name
    (nargs=-1) are (take_c_files), and the rest stay in it — with ``one`` (its metavar) exactly
    one must, which the command then gets alone (click.UsageError otherwise); without ``cc``
    the command declares its own --cc (variants: one per compiler). ``cflags_default`` None:
    build.DEFAULT_CFLAGS."""
    if cflags_default is None:
        from cyclebench.build import DEFAULT_CFLAGS

        cflags_default = " ".join(DEFAULT_CFLAGS)

    def deco(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, **kw: Any) -> Any:
            from cyclebench.experiments.options import BuildOptions

            patterns = [*kw.pop("file_patterns")]
            if positional:
                patterns = [str(p) for p in kw.pop("files")] + patterns
            if files_in is not None:
                c_files, rest = take_c_files(kw[files_in])
                patterns = c_files + patterns
                if one is not None and len(rest) != 1:
                    raise click.UsageError(f"Missing argument '{one}'." if not rest else
                                           f"one {one} at a time (got {', '.join(rest)})")
                kw[files_in] = rest[0] if one is not None else tuple(rest)
            kw["build"] = BuildOptions(
                files=expand_files(patterns), include_dirs=tuple(Path(d).resolve() for d in kw.pop("include_dirs")),
                defines=tuple(kw.pop("defines")), cflags=_split(kw.pop("cflags"), "--cflags"),
                ldflags=_split(kw.pop("ldflags"), "--ldflags"), cc=kw.pop("cc") if cc else "cc")
            return f(*args, **kw)

        opts = [
            click.option("-f", "--file", "file_patterns", multiple=True, metavar="FILE",
                         help="C file(s) with benchmarks (repeatable, globs; default: the built-in suite); a FILE.c "
                              "argument is one too."),
            click.option("-I", "include_dirs", multiple=True, type=click.Path(file_okay=False),
                         help="Include directory for the benchmark sources."),
            click.option("-D", "defines", multiple=True, metavar="NAME[=VALUE]", help="Preprocessor definition."),
            click.option("--cflags", default=cflags_default, show_default=bool(cflags_default), help=cflags_help),
            click.option("--ldflags", default="", help="Extra link flags/libraries (e.g. '-ljemalloc')."),
        ]
        if cc:
            opts.append(click.option("--cc", default="cc", show_default=True, help="C compiler."))
        for opt in reversed(opts):
            wrapper = opt(wrapper)
        return wrapper  # type: ignore[return-value]

    return deco


def _pinning(f: F, limits: bool) -> F:
    @functools.wraps(f)
    def wrapper(*args: Any, **kw: Any) -> Any:
        from cyclebench.experiments.options import RunnerOptions

        rss = kw.pop("max_rss") if limits else None
        kw["pin"] = RunnerOptions(cpu=valid_cpu(kw.pop("cpu")), fifo=kw.pop("fifo"), max_rss=rss << 20 if rss else None)
        return f(*args, **kw)

    opts = [
        click.option("--cpu", type=click.IntRange(min=0), help="CPU to pin the runner to (default: not CPU 0)."),
        click.option("--fifo", type=click.IntRange(1, 99), default=None, metavar="PRIO",
                     help="Run the runner under SCHED_FIFO at PRIO (root/CAP_SYS_NICE), bounded by RLIMIT_RTTIME."),
    ]
    if limits:
        opts.append(click.option("--max-rss", type=click.IntRange(1, 1 << 30), default=None, metavar="MiB",
                                 help="Kill a runner whose resident memory (with what it forked) passes this; "
                                      "its row says so."))
    for opt in reversed(opts):
        wrapper = opt(wrapper)
    return wrapper  # type: ignore[return-value]


def _allocators(_ctx: click.Context, _param: click.Parameter, value: str | None) -> list[Any] | None:
    if value is None:
        return None
    from cyclebench.build import allocators  # here: only --allocator needs it

    try:
        return allocators.parse(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


def allocator_option(f: F) -> F:
    """Adds --allocator NAME[,NAME...]; the command gets ``allocators``: a list of
    build.allocators.Allocator (the first is the baseline) or None."""
    return click.option("--allocator", "allocators", default=None, metavar="NAME[,NAME...]", callback=_allocators,
                        help="Link each of these allocators into its own runner and measure them side by side "
                             "(glibc, jemalloc, mimalloc, tcmalloc; the first is the baseline).")(f)


def runner_options(f: F) -> F:
    """Adds --cpu/--fifo/--max-rss; the command gets ``pin: RunnerOptions``."""
    return _pinning(f, limits=True)


def pin_options(f: F) -> F:
    """Adds --cpu/--fifo (a command run whole, as `stat` runs one, has no runner to cap)."""
    return _pinning(f, limits=False)


db_option = click.option("--db", metavar="URL",
                         help="Database URL (default: $CYCLEBENCH_DB or the user data dir's SQLite file).")
wide_option = click.option("--wide", is_flag=True,
                           help="All columns, whatever the terminal's width (default: those that fit).")


def _json_file(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """``--json -`` refused: these commands print their tables on stdout, so the JSON cannot go
    there too (`export --json -` and ``-o -`` are stdout), and a file named ``-`` in the
    working directory is not what anyone means by it."""
    if value is not None and str(value) == "-":
        raise click.BadParameter("'-' is not a file name here: --json writes the JSON beside the table "
                                 "(JSON on stdout: cyclebench export RUN --json -)", ctx, param)
    return value


json_option = click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), callback=_json_file,
                           help="Also write the lossless JSON of what this command produced to FILE.")

label_option = click.option("--label", "label_args", multiple=True, metavar="KEY=VALUE",
                            help="Name the run (repeatable), e.g. kernel=r333291: stored with it, shown by "
                                 "`runs`, filtered on by `runs --label`; compare shows labels instead of ids.")

LABEL_MAX = 255  # characters of a key or a value


def parse_labels(values: Sequence[str], option: str = "--label") -> dict[str, str]:
    """--label KEY=VALUE (repeatable) → {key: value} (split at the first ``=``, spaces around
    either side dropped; a later KEY wins). click.BadParameter for no ``=``, an empty key,
    more than LABEL_MAX characters or a NUL (databases cannot store it)."""
    out: dict[str, str] = {}
    for v in values:
        key, eq, value = v.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key:
            raise click.BadParameter(f"'{v}' is not KEY=VALUE", param_hint=option)
        if "\0" in v or len(key) > LABEL_MAX or len(value) > LABEL_MAX:
            raise click.BadParameter(f"'{v[:40]}…' is not a label: keys and values are at most {LABEL_MAX} "
                                     "characters, without NUL", param_hint=option)
        out[key] = value
    return out


EXPORT_FORMATS = ("json", "gbench", "benchstat", "pyperf", "csv", "markdown", "text")


@dataclass(frozen=True)
class OutputOptions:
    """``--format F`` and ``-o FILE``: the export asked for (``format`` None and ``path`` None:
    none) and where it goes (``path`` None: stdout, which then carries only the export)."""

    format: str | None = None
    path: Path | None = None

    @property
    def asked(self) -> bool:
        return self.format is not None or self.path is not None

    @property
    def to_stdout(self) -> bool:
        """The export goes to stdout: the command prints no table there."""
        return self.asked and self.path is None

    @property
    def fmt(self) -> str:
        """The format (``-o FILE`` alone: json)."""
        return self.format or "json"


def writable(path: Path, option: str = "-o/--output") -> Path:
    """``path`` when a file can be written there, checked before anything is measured: a
    missing directory, a directory or no permission is a UserError (one line, exit 2)."""
    from cyclebench.ui.common import UserError

    parent = path.parent if str(path.parent) else Path(".")
    why = ("it is a directory" if path.is_dir() else f"no directory {parent}" if not parent.is_dir()
           else "permission denied" if not os.access(path if path.exists() else parent, os.W_OK) else None)
    if why:
        raise UserError(f"{option}: cannot write {path}: {why}")
    return path


def format_option(f: F) -> F:
    """Adds --format and -o/--output; the command gets ``output: OutputOptions`` (``-o -``:
    stdout)."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kw: Any) -> Any:
        path = kw.pop("output_path")
        kw["output"] = OutputOptions(kw.pop("export_format"),
                                     None if path is None or str(path) == "-" else writable(path))
        if path is not None and str(path) == "-" and kw["output"].format is None:
            kw["output"] = OutputOptions("json")
        return f(*args, **kw)

    opts = [
        click.option("--format", "export_format", type=click.Choice(EXPORT_FORMATS), default=None,
                     help="Export what this command produced in this format (docs/exports.md); without -o, stdout "
                          "carries only the export and no table."),
        click.option("-o", "--output", "output_path", type=click.Path(path_type=Path, allow_dash=True),
                     default=None, metavar="FILE", help="Write the export to FILE (default format: json)."),
    ]
    for opt in reversed(opts):
        wrapper = opt(wrapper)
    return wrapper  # type: ignore[return-value]


def _plot_path(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
    if value is not None and value.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise click.BadParameter("the file must end in .png, .svg or .pdf")
    return value


def plot_option(what: str) -> Callable[[F], F]:
    """``--plot FILE`` (.png, .svg, .pdf, checked before anything runs); the command gets ``plot_path``."""
    return click.option("--plot", "plot_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
                        callback=_plot_path, help=f"Also draw {what} to FILE (.png, .svg, .pdf).")


def not_a_file(name: str, command: str) -> None:
    """A file that is not a ``.c`` (build_options takes those) given where a benchmark name is
    expected: say to use -f (raises click.UsageError)."""
    if name.endswith(".h") or Path(name).is_file():
        raise click.UsageError(f"'{name}' is a file, not a benchmark: give files with -f "
                               f"(cyclebench {command} -f {name} BENCH...)")


class FloatRange(click.FloatRange):
    """click.FloatRange of finite numbers: nan passes every comparison of a range check (IEEE 754)
    and inf the open ends, and either would reach the code behind the option (int(nan): a
    traceback); both are refused in one line at parse time."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        x = super().convert(value, param, ctx)
        if not math.isfinite(x):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return x

    def _describe_range(self) -> str:
        # unbounded: click would print "x<=None" in --help
        return "finite" if self.min is None and self.max is None else super()._describe_range()


class Seconds(click.ParamType):
    """A finite number of seconds in [low, high]: nan, inf and 1e308 are refused in one line at
    parse time, not in every row later."""

    name = "SECONDS"

    def __init__(self, low: float = 0.0, high: float = 86400.0, low_open: bool = False) -> None:
        self.low, self.high, self.low_open = low, high, low_open

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            x = float(value)
        except (TypeError, ValueError):
            self.fail(f"'{value}' is not a number of seconds", param, ctx)
        if not (x > self.low if self.low_open else x >= self.low) or not x <= self.high:  # nan fails both
            self.fail(f"{value} is not in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}] seconds",
                      param, ctx)
        return x


SEED = click.IntRange(0, 2**63 - 1)
RUN_ID = click.IntRange(1, 2**63 - 1)
