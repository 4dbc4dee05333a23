"""What `fleet run` sends to every host: the cyclebench command checked on the controller
(parsed by the very command it names), refused where it cannot mean the same on every host,
the user's C files mapped to copies in the job's directory, and the job's label."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import click

from cyclebench.commands._options import expand_files

# Commands that measure and store a run on the host they run on.
MEASURING = ("run", "compare", "scale", "variants", "stat", "selftest", "counters", "check", "annotate")
WHY_NOT = {
    "show": "takes a run id", "export": "takes a run id", "delete": "takes run ids", "import": "reads a local file",
    "runs": "reads the database", "history": "reads the database: run it on the controller over --db",
    "fleet": "is the fleet itself", "cache": "manages one machine's cache", "gen": "writes local files",
}
FILE_OPTS = ("-f", "--file")


@dataclass
class Plan:
    """The argv run on every host (after `cyclebench`) and the files to copy there:
    (controller path, path relative to the job's directory)."""

    args: list[str]
    files: list[tuple[Path, str]] = field(default_factory=list)


def _command(args: list[str]) -> click.Command:
    from cyclebench.cli import main

    if not args:
        raise click.UsageError("give the command to run on every host after --, e.g. -- run -b 'syscall/*'")
    name = args[0]
    if name in WHY_NOT:
        raise click.UsageError(f"'{name}' {WHY_NOT[name]}; ids and files differ per host, so a fleet does not run it")
    cmd = main.commands.get(name)
    if cmd is None or name not in MEASURING:
        raise click.UsageError(f"no command '{name}' to run on a fleet (one of: {', '.join(MEASURING)})")
    return cmd


def _dest(src: Path, taken: dict[str, Path]) -> str:
    rel = src.name  # in the job's directory itself (copy does not create a file's parent directories)
    if taken.setdefault(rel, src) != src:
        raise click.UsageError(f"two files named {src.name} ({taken[rel]}, {src}): a host gets them in one directory")
    return rel


def plan(args: list[str], job_label: str | None = None) -> Plan:
    """Check ``args`` (a cyclebench command line) for a fleet and map its C files (``-f``,
    ``--file``, positional files of run/variants, ``-I`` directories) to job-relative paths;
    the headers beside each C file go along. ``job_label`` (KEY=VALUE) is added as --label
    when the command takes labels. click.UsageError for what cannot run on every host alike."""
    cmd = _command(args)
    try:
        ctx = cmd.make_context(args[0], list(args[1:]), resilient_parsing=False)
    except click.ClickException as e:
        raise click.UsageError(f"-- {args[0]}: {e.format_message()}") from None
    params = ctx.params
    if params.get("db"):
        raise click.UsageError("the fleet decides where runs go: give --db (and --direct) to `fleet run`, not the "
                               "command")
    targets = [str(t) for t in params.get("targets") or ()]
    if args[0] == "compare" and targets and all(t.replace(",", "").isdigit() or t[:1] == "g" for t in targets):
        raise click.UsageError("compare of stored runs takes run ids, which differ per host: run `compare --by host` "
                               "on the controller")
    positional = {str(p) for p in params.get("files") or ()}
    taken: dict[str, Path] = {}
    out = Plan([args[0]])
    copied: set[Path] = set()

    def add(src: Path) -> str:
        rel = _dest(src, taken)
        if src not in copied:
            copied.add(src)
            out.files.append((src, rel))
            for h in sorted(src.parent.glob("*.h")):  # #include "x.h" beside the file
                if h.resolve() not in copied:
                    copied.add(h.resolve())
                    out.files.append((h.resolve(), _dest(h.resolve(), taken)))
        return rel

    rest = iter(args[1:])
    for tok in rest:
        if tok == "--":
            out.args += [tok, *rest]
            break
        value = None
        if tok in FILE_OPTS:
            value = next(rest, "")
        elif tok.startswith("--file="):
            value = tok.split("=", 1)[1]
        elif tok.startswith("-f") and len(tok) > 2 and not tok.startswith("--"):
            value = tok[2:]
        if value is not None:
            for src in expand_files([value]):
                out.args += ["-f", add(src)]
        elif tok in positional:
            out.args.append(add(Path(tok).resolve()))
        elif tok == "-I" or tok.startswith("-I"):
            d = Path(next(rest, "") if tok == "-I" else tok[2:]).resolve()
            if not d.is_dir():
                raise click.UsageError(f"-I {d}: no such directory")
            rel = f"inc{sum(1 for f in out.files if f[1].startswith('inc'))}"
            out.files.append((d, rel + "/"))
            out.args += ["-I", rel]
        else:
            out.args.append(tok)
    if job_label and any("--label" in getattr(p, "opts", ()) for p in cmd.params):
        out.args += ["--label", job_label]
    return out
