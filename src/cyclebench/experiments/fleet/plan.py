"""What `fleet run` sends to every host (docs/fleet.md): the cyclebench command checked —
refused where it cannot mean the same on every host —, the user's C files mapped to copies in
the job's directory, the job's label."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from cyclebench.experiments.errors import ExperimentError

# Commands that measure and store a run on the host they run on.
MEASURING = ("run", "compare", "scale", "variants", "stat", "selftest", "counters", "check", "annotate")
WHY_NOT = {
    "show": "takes a run id", "export": "takes a run id", "delete": "takes run ids", "import": "reads a local file",
    "runs": "reads the database", "history": "reads the database: run it on the controller over --db",
    "fleet": "is the fleet itself", "cache": "manages one machine's cache", "gen": "writes local files",
}
FILE_OPTS = ("-f", "--file")


@dataclass(frozen=True, kw_only=True)
class CommandLine:
    """A cyclebench command line as its own command parsed it (the command line resolves it:
    commands/fleet_agent.command_line). ``args``: the argv after ``cyclebench``; ``gives_db``:
    it names a database; ``writes``: the options given that write files where it runs (``--json``,
    ``-o``…); ``targets``: its positional targets (compare's run ids or benchmarks); ``c_files``:
    the positional arguments that name C files; ``takes_label``: it stores a run and takes
    ``--label``; ``cpu``: the CPU it pins (None: none); ``ccs``: the C compilers it builds with."""

    args: tuple[str, ...]
    gives_db: bool = False
    writes: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    c_files: frozenset[str] = frozenset()
    takes_label: bool = False
    cpu: int | None = None
    ccs: tuple[str, ...] = ("cc",)


@dataclass(frozen=True)
class Plan:
    """The argv run on every host (after ``cyclebench``) and the files copied there: (controller
    path, path relative to the job's directory — a directory's ends in ``/``)."""

    args: tuple[str, ...]
    files: tuple[tuple[Path, str], ...] = ()


def check_command(args: Sequence[str]) -> str:
    """The name of the command ``args`` runs, when a fleet runs it. ExperimentError for no
    command, one whose ids or files differ per host, or one that does not measure."""
    if not args:
        raise ExperimentError("give the command to run on every host after --, e.g. -- run -b 'syscall/*'")
    name = args[0]
    if name in WHY_NOT:
        raise ExperimentError(f"'{name}' {WHY_NOT[name]}; ids and files differ per host, so a fleet does not run it")
    if name not in MEASURING:
        raise ExperimentError(f"no command '{name}' to run on a fleet (one of: {', '.join(MEASURING)})")
    return name


def plan(line: CommandLine, expand: Callable[[str], Sequence[Path]]) -> Plan:
    """``line`` checked for a fleet, its C files (``-f``, ``--file``, positional files of
    run/variants/scale/compare, ``-I`` directories) mapped to job-relative paths; the headers
    beside each C file go along. ``expand``: a file pattern → the files it names (resolved; it
    raises for a pattern naming none). ExperimentError for what cannot run on every host alike."""
    name = check_command(line.args)
    if line.gives_db:
        raise ExperimentError("the fleet decides where runs go: give --db (and --direct) to `fleet run`, not the "
                              "command")
    if line.writes:
        raise ExperimentError(f"{'/'.join(line.writes)}: files written on the hosts do not come back; the runs do — "
                              "export, plot or compare them on the controller")
    if name == "compare" and line.targets and all(t.replace(",", "").isdigit() or t[:1] == "g"
                                                  for t in line.targets):
        raise ExperimentError("compare of stored runs takes run ids, which differ per host: run `compare --by host` "
                              "on the controller")
    taken: dict[str, Path] = {}
    args, files = [name], []
    copied: set[Path] = set()

    def dest(src: Path) -> str:
        rel = src.name  # in the job's directory itself (copy does not create a file's parent directories)
        if taken.setdefault(rel, src) != src:
            raise ExperimentError(f"two files named {src.name} ({taken[rel]}, {src}): a host gets them in one "
                                  "directory")
        return rel

    def add(src: Path) -> str:
        rel = dest(src)
        if src not in copied:
            copied.add(src)
            files.append((src, rel))
            for h in sorted(src.parent.glob("*.h")):  # #include "x.h" beside the file
                if h.resolve() not in copied:
                    copied.add(h.resolve())
                    files.append((h.resolve(), dest(h.resolve())))
        return rel

    rest = iter(line.args[1:])
    for tok in rest:
        if tok == "--":
            args += [tok, *rest]
            break
        value = None
        if tok in FILE_OPTS:
            value = next(rest, "")
        elif tok.startswith("--file="):
            value = tok.split("=", 1)[1]
        elif tok.startswith("-f") and len(tok) > 2 and not tok.startswith("--"):
            value = tok[2:]
        if value is not None:
            for src in expand(value):
                args += ["-f", add(src)]
        elif tok in line.c_files:
            args += [add(src) for src in expand(tok)]
        elif tok == "-I" or tok.startswith("-I"):
            d = Path(next(rest, "") if tok == "-I" else tok[2:]).resolve()
            if not d.is_dir():
                raise ExperimentError(f"-I {d}: no such directory")
            rel = f"inc{sum(1 for f in files if f[1].startswith('inc'))}"
            files.append((d, rel + "/"))
            args += ["-I", rel]
        else:
            args.append(tok)
    return Plan(tuple(args), tuple(files))


def labelled(p: Plan, line: CommandLine, label: str) -> Plan:
    """``p`` with ``--label label`` (KEY=VALUE) added when its command takes labels."""
    return replace(p, args=(*p.args, "--label", label)) if line.takes_label else p
