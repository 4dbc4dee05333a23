"""`compare --rev A --rev B`: two revisions of a repository built (experiments/revisions.py) and
measured paired in one sitting (experiments/revpair.py), one verdict per benchmark, judged as
compare's sequential design judges (stats/sequential.py: slower/faster outside the margin,
equivalent within ±equivalence, inconclusive when the budget ends), α split over the
benchmarks (Bonferroni, as compare's sequential design splits it over its pairs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.options import BuildOptions, RunnerOptions
from cyclebench.experiments.progress import SILENT, Progress
from cyclebench.experiments.revisions import BUILD_TIMEOUT_S, Built, Confinement, Recipe, Repo, Revision, prepare
from cyclebench.experiments.revpair import Design, PairLook, Sides, Sitting, measure, open_sitting, relative_row
from cyclebench.experiments.revpair import store_sitting as _store_sitting
from cyclebench.model import ComparisonRow, Item, Revisions
from cyclebench.runner import Runner
from cyclebench.runner.plan import plan
from cyclebench.stats.ab import MARGIN_REL

__all__ = ["RevCompare", "Workspace", "compare_revisions"]


@dataclass  # working state of one command: ``builds`` caches each revision built; not a record
class Workspace:
    """What every sitting between revisions shares: the repository, how a revision is built,
    where the runners are pinned, the benchmarks asked for (globs, parameters) and the builds
    made so far (sha → Built)."""

    repo: Repo
    recipe: Recipe
    pin: RunnerOptions
    globs: Sequence[str] = ()
    params: Sequence[int] = ()
    progress: Progress = SILENT
    builds: dict[str, Built] = field(default_factory=dict)

    def revisions(self, **sides: str | list[str]) -> Revisions:
        """What a sitting's run stores of the revisions it built (model.Revisions, its
        environment's ``revisions``): the repository, ``sides`` (``a`` and ``b``, or ``sides``:
        every side's sha), the build command, how the revisions' code ran (Confinement.recorded) and
        each side's commit depth (Repo.depth: history orders a revision series by it)."""
        shas = [s for v in sides.values() for s in ([v] if isinstance(v, str) else v)]
        depths = {s: d for s in shas if (d := self.repo.depth(s)) is not None}
        return cast(Revisions, {"repo": str(self.repo.root), **sides, "build": list(self.recipe.command),
                                "confinement": self.recipe.confine.recorded, **({"depths": depths} if depths else {})})

    def cpu(self) -> int:
        from cyclebench.env import sysinfo

        return self.pin.cpu if self.pin.cpu is not None else sysinfo.choose_cpu()

    def build(self, rev: Revision) -> Built:
        """The revision built (once per process; revisions.prepare caches across processes)."""
        if rev.sha not in self.builds:
            self.progress.step(f"building {rev.short}")
            self.builds[rev.sha] = prepare(self.repo, rev, self.recipe)
        return self.builds[rev.sha]

    def runner(self, b: Built, cpu: int) -> Runner:
        """The revision's runner, confined as its build was (it runs the revision's code)."""
        assert b.binary is not None
        launcher = self.recipe.confine.sandbox([b.directory], [b.binary.path.parent])
        return Runner(b.binary.path, cpu, fifo=self.pin.fifo, max_rss=self.pin.max_rss, launcher=launcher)

    def items(self, b: Built, cpu: int) -> list[Item]:
        """The benchmarks selected in ``b``'s runner (the engine's loop reference left out
        unless asked for). ExperimentError when the selection matches none."""
        from cyclebench.runner.plan import SelectionError

        try:
            items = plan(self.runner(b, cpu).list(), self.globs, self.params)
        except SelectionError as e:
            raise ExperimentError(str(e)) from None
        if not self.globs:
            items = [i for i in items if i.bench != "loop/empty"] or items
        return items


def must_build(ws: Workspace, rev: Revision, name: str) -> Built:
    """``rev`` built, or ExperimentError: "NAME (sha) does not build: why (log: …)"."""
    b = ws.build(rev)
    if b.binary is None:
        raise ExperimentError(f"{name} {rev.short} does not build: {b.reason} (log: {b.log})")
    return b


@dataclass(frozen=True)
class RevCompare:
    """What `compare --rev` measured: the run, the two revisions, one row per benchmark."""

    run_id: int
    a: Revision
    b: Revision
    rows: list[ComparisonRow]
    cpu: int
    design: str


def compare_rule(equivalence: float) -> Any:
    """compare's sequential decision (stats.sequential.decide) on relative figures, with the
    margin of margin_of."""

    def rule(looks: dict[tuple[int, int], PairLook], last: bool) -> str | None:
        lk = looks[(0, 1)]
        margin = margin_of(lk)
        if lk.low > margin:
            return "slower"
        if lk.high < -margin:
            return "faster"
        if -equivalence < lk.low and lk.high < equivalence and abs(lk.diff) <= margin:
            return "equivalent"
        return "inconclusive" if last else None

    return rule


def margin_of(lk: PairLook) -> float:
    """The margin between builds, relative: 0.5% of A (stats.ab's relative margin). Not compare's
    0.25 unit: two builds differ in code layout, which alone moves a figure by a few tenths of a
    percent for a whole process (Mytkowicz et al., ASPLOS 2009; docs/method.md §5)."""
    return MARGIN_REL


def compare_revisions(ws: Workspace, revs: Sequence[str], design: Design, equivalence: float, store: Any,
                      labels: dict[str, str], command: Sequence[str]) -> RevCompare:
    """Build both revisions and measure them paired (module doc). Raises ExperimentError (a
    revision that does not resolve or build, a selection that matches nothing)."""
    from dataclasses import replace

    a, b = (ws.repo.resolve(r) for r in revs)
    built = [must_build(ws, a, "A"), must_build(ws, b, "B")]
    cpu = ws.cpu()
    sides = Sides(built, [ws.runner(x, cpu) for x in built], ["base", ""], cpu)
    items = ws.items(built[0], cpu)
    design = replace(design, alpha=design.alpha / len(items))
    run_id, rate = open_sitting(store, sides, 1, command, {**labels, "rev": b.sha, "base": a.sha},
                                ws.revisions(a=a.sha, b=b.sha))
    rule = compare_rule(equivalence)
    rows: list[ComparisonRow] = []

    def keep(sit: Sitting) -> None:
        figures = _store_sitting(store, run_id, rate, sit, sides)
        lk = sit.last((0, 1))
        rows.append(relative_row(sit, (0, 1), f"{sit.item.bench} @ {a.short}", f"{sit.item.bench} @ {b.short}",
                                 sit.verdict, design.alpha, margin_of(lk) if lk else 0.0,
                                 {"equivalence": equivalence, "margin_rule": "0.5% of A"}, figures))

    with store.finishing(run_id):
        measure(sides.runners, items, [(0, 1)], design, rule, ws.progress, keep)
    how = (f"revisions {a.short} → {b.short}, paired invocations · CPU {cpu} · sequential (budget "
           f"{design.budget:g} s a benchmark, O'Brien–Fleming alpha spending, repeated CI, equivalent within "
           f"±{100 * equivalence:g}%)")
    store.update_run(run_id, summary={"compare": [r.to_dict() for r in rows],
                                      "display": {"design": how, "alpha": design.alpha}})
    store.finish_run(run_id, "complete")
    return RevCompare(run_id, a, b, rows, cpu, how)


def workspace(repo_dir: Path, build_cmd: Sequence[str], build: BuildOptions, pin: RunnerOptions,
              globs: Sequence[str], params: Sequence[int], progress: Progress = SILENT,
              sandbox: str = "off", build_timeout: float = BUILD_TIMEOUT_S, hide: Sequence[Path] = (),
              files_needed: bool = True) -> Workspace:
    """The workspace of `compare --rev` and `bisect`: the git repository ``repo_dir`` is in,
    each revision built by ``build_cmd`` (argv, run in its private checkout) and then the
    runner from ``build``'s files, both confined (``sandbox``: auto, where one can be made —
    a line says when not —, require, off: --no-sandbox; $HOME, the work tree and ``hide``
    hidden; whether and why not recorded in every run opened from it: Workspace.revisions) and
    the build stopped after ``build_timeout`` s. Raises ExperimentError (one line): no benchmark
    file (unless not ``files_needed``: the `ci` gate's Google Benchmark targets bring their own),
    not a repository, no sandbox where one is required."""
    if not build.files and files_needed:
        raise ExperimentError("give the benchmark files with -f (inside the repository: read from each revision)")
    repo = Repo(repo_dir)
    why: str | None = "--no-sandbox"
    if sandbox != "off":
        from cyclebench.runner.sandbox import unavailable

        why = unavailable()
        if why is not None and sandbox == "require":
            raise ExperimentError(f"--sandbox require: no sandbox can be made here: {why}")
        if why is not None:
            progress.note(f"revisions build and run unconfined: {why} (--sandbox require refuses to)")
    # the reason travels with the confinement: every run opened from this workspace stores it
    # (Workspace.revisions), so an unconfined run says so after the note above has scrolled away
    confine = Confinement(why is None, (Path.home(), repo.root, *hide), build_timeout, why or "")
    return Workspace(repo, Recipe(build, tuple(build_cmd), confine), pin, globs, params, progress)
