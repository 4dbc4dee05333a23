"""What `compare --rev` and `bisect` share around their designs (experiments/revcompare.py,
experiments/bisect.py): the repository options (--repo, --build, -b), and `compare --rev` itself."""

from __future__ import annotations

import functools
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import click

from cyclebench.ui.options import FloatRange

if TYPE_CHECKING:
    from cyclebench.experiments.options import BuildOptions, RunnerOptions

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class RepoOptions:
    """--repo DIR (default: the current directory), --build CMD (argv, split as --cflags is),
    -b BENCH globs, and --rev REV (compare: exactly two, or none)."""

    repo: Path = Path(".")
    build: tuple[str, ...] = ()
    benches: tuple[str, ...] = ()
    revs: tuple[str, ...] = ()
    sandbox: str = "auto"  # auto | require | off (--no-sandbox): runner.sandbox
    build_timeout: float = 3600.0
    backend: str = "timing"  # or callgrind: exact Ir per op instead of time (experiments/revcounts.py)
    counts_threshold: float = 0.5  # percent of A's (GOOD's) Ir per op, under callgrind

    @property
    def counts(self) -> bool:
        """Revisions are judged by callgrind's exact instruction counts, not by time."""
        return self.backend == "callgrind"

    def workspace(self, build: BuildOptions, pin: RunnerOptions, params: tuple[int, ...] | list[int],
                  progress: Any, store: Any, benches: tuple[str, ...] | None = None, files_needed: bool = True) -> Any:
        """experiments.revcompare.workspace of these options, the database's directory hidden from
        the revisions' code as well."""
        from cyclebench.experiments.revcompare import workspace

        db = store.file
        return workspace(self.repo, self.build, build, pin, self.benches if benches is None else benches, params,
                         progress, self.sandbox, self.build_timeout, () if db is None else (db.parent,),
                         files_needed)


def repo_options(revs: bool = False, counts: str | None = None) -> Callable[[F], F]:
    """Adds --repo, --build, -b (and, with ``revs``, --rev; with ``counts``, --backend and
    --counts-threshold, ``counts`` saying in --help what the threshold judges); the command gets
    ``repo: RepoOptions``."""

    def deco(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, **kw: Any) -> Any:
            text = kw.pop("build_cmd")
            try:
                argv = tuple(shlex.split(text)) if text else ()
            except ValueError as e:
                raise click.BadParameter(str(e), param_hint="--build") from None
            if text is not None and not argv:
                raise click.BadParameter("an empty command", param_hint="--build")
            unconfined, chosen = kw.pop("no_sandbox"), kw.pop("sandbox")
            sandbox = "off" if unconfined else chosen
            backend, counts_t = (kw.pop("backend"), kw.pop("counts_threshold")) if counts else ("timing", 0.5)
            kw["repo"] = RepoOptions(kw.pop("repo_dir"), argv, tuple(kw.pop("bench_globs")),
                                     tuple(kw.pop("rev_args")) if revs else (), sandbox, kw.pop("build_timeout"),
                                     backend, counts_t)
            return f(*args, **kw)

        opts = [
            click.option("--repo", "repo_dir", type=click.Path(path_type=Path, file_okay=False), default=Path("."),
                         show_default=True, help="The git repository whose revisions are built (any directory in it)."),
            click.option("--build", "build_cmd", metavar="CMD", default=None,
                         help="Run CMD (split like --cflags, no shell) in each revision's private checkout before "
                              "building the runner; --ldflags and -I paths inside the repository, and relative "
                              "--ldflags paths, are then taken from that checkout."),
            click.option("-b", "--bench", "bench_globs", multiple=True, metavar="BENCH",
                         help="Benchmarks to measure (globs; repeatable; default: all in the files given)."),
            click.option("--sandbox", type=click.Choice(["auto", "require"]), default="auto", show_default=True,
                         help="Build and run each revision's code in a bubblewrap sandbox (its checkout writable, "
                              "the rest read-only, $HOME, the work tree and the database hidden, no network): "
                              "auto where one can be made (a line says when not), require: exit 2 where not."),
            click.option("--no-sandbox", is_flag=True, help="Build and run revisions unconfined, with the user's "
                                                            "rights and the network."),
            click.option("--build-timeout", type=FloatRange(0, 86400, min_open=True), default=3600.0,
                         show_default=True, metavar="SECONDS", help="Stop a revision's build command (and everything "
                         "it started) after SECONDS: the revision is unbuildable, its checkout removed."),
        ]
        if revs:
            opts.insert(0, click.option("--rev", "rev_args", multiple=True, metavar="REV",
                                        help="Compare two revisions of --repo (give it twice): each is checked out "
                                             "privately, built and measured paired with the other; -f files inside "
                                             "the repository are read from each revision."))
        if counts:
            opts += [
                click.option("--backend", type=click.Choice(["timing", "callgrind"]), default="timing",
                             show_default=True, help="callgrind: judge by instructions per op (Ir) counted under "
                             "callgrind, each side read twice — exact, the same on every machine — instead of "
                             "time (no timing runs; docs/revisions.md)."),
                click.option("--counts-threshold", type=FloatRange(0, 100), default=0.5, show_default=True,
                             metavar="PCT", help=f"--backend callgrind: {counts}"),
            ]
        for opt in reversed(opts):
            wrapper = opt(wrapper)
        return wrapper  # type: ignore[return-value]

    return deco


class RevArgs(Protocol):
    """What `compare --rev` reads of compare's options (``equivalence`` in %)."""

    repo: RepoOptions
    targets: tuple[str, ...]
    params: tuple[str, ...]
    build: BuildOptions
    pin: RunnerOptions
    budget: float
    equivalence: float
    alpha: float
    label_args: tuple[str, ...]
    db: str | None
    json_path: Path | None
    wide: bool
    fail_on: tuple[str, ...]


def compare_revs(a: RevArgs, unsupported: bool = False) -> None:
    """`compare --rev A --rev B`: the table (compare's), --json, --fail-on; exit 2 for bad input
    (``unsupported``: an option of compare's other forms was given)."""
    import json

    from cyclebench.experiments.comparison import fail_outcomes
    from cyclebench.experiments.revcompare import compare_revisions
    from cyclebench.experiments.revpair import Design
    from cyclebench.report import console as console_report
    from cyclebench.ui.common import err, open_store, out, parse_params, write_text
    from cyclebench.ui.finish import finishing
    from cyclebench.ui.options import parse_labels
    from cyclebench.ui.progress import progress

    if unsupported:
        raise click.UsageError("--rev writes its output with --json; --format, --plot, --allocator and --repeat "
                               "are not for revisions")
    if len(a.repo.revs) != 2:
        raise click.UsageError("--rev takes two revisions: --rev A --rev B" + (
            " (--backend callgrind counts revisions)" if a.repo.counts else ""))
    repo, targets, build, pin, budget, alpha, db = a.repo, a.targets, a.build, a.pin, a.budget, a.alpha, a.db
    params, labels, equivalence = parse_params(a.params), parse_labels(a.label_args), a.equivalence / 100
    json_path, wide, fail_on = a.json_path, a.wide, a.fail_on
    if any(t.isdigit() for t in targets):
        raise click.UsageError("--rev measures revisions; stored runs are compared without it")
    repo = replace(repo, benches=(*repo.benches, *targets))
    store = open_store(db)
    with finishing(lambda: f"the benchmarks measured so far are kept ({store.url})"), progress() as prog:
        ws = repo.workspace(build, pin, params, prog, store)
        command = ["cyclebench", *sys.argv[1:]]
        if repo.counts:  # exact counts, no timing: experiments/revcounts.py
            from cyclebench.experiments.revcounts import compare_counts

            got = compare_counts(ws, repo.revs, repo.counts_threshold / 100, store, labels, command)
        else:
            got = compare_revisions(ws, repo.revs, Design(budget=budget, alpha=alpha), equivalence, store, labels,
                                    command)
    console_report.print_comparisons(got.rows, out, title=f"run #{got.run_id} · {got.design}", alpha=alpha, wide=wide)
    if json_path is not None:
        write_text(json_path, json.dumps([r.to_dict() for r in got.rows], indent=1) + "\n")
    failed = [r for r in got.rows if r.cmp is None or r.cmp.verdict == "not exact"]
    if failed:
        err.print(f"cyclebench: {len(failed)} benchmark(s) did not produce a verdict (see notes)", style="red")
        sys.exit(1)
    hit = fail_outcomes(got.rows, fail_on)
    if hit:
        err.print(f"cyclebench: --fail-on: {hit}", highlight=False)
        sys.exit(1)
