"""`cyclebench ci`: a pull request's gate (docs/ci.md). The base and head revisions are built
(experiments/revisions.py, confined) and every benchmark both have is measured paired in one
sitting (experiments/revpair.py, as `compare --rev` measures), so what moves between CI jobs —
a shared runner 5–20% slower for a while — moves both sides alike and cancels.

A benchmark fails the time gate as `bisect` judges a step: the lower bound of the repeated CI of
head/base − 1 above its threshold T (default 2%); it passes when the upper bound is below T; the
budget ending with T inside the CI leaves it undecided (listed, not failed). Each benchmark's
verdict holds with probability ≥ 1 − α/m for m benchmarks (Bonferroni, as `compare --rev` splits
α), so the whole gate raises a false alarm with probability ≤ α.

The counts gate (``--gate counts|both``) runs each side under callgrind twice (experiments/revcounts):
instructions per op (Ir) are exact — the same on every machine and run — so a change above the
counts threshold (default 0.5% of Ir) fails whatever the runner's speed; a side whose two readings
differ is reported "not exact" and decides nothing. Benchmarks only head has are "new", only base
has "removed": listed, never a failure.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.revcompare import Workspace, must_build
from cyclebench.experiments.revcounts import count
from cyclebench.experiments.revisions import Built, Repo, Revision
from cyclebench.experiments.revpair import Design, PairLook, Sides, Sitting, measure, open_sitting, relative_row
from cyclebench.experiments.revpair import store_sitting as _store
from cyclebench.gate import BOTH, BROKEN, COUNTS, FAIL, NEW, PASS, REMOVED, TIME, UNDECIDED, Counted, Gate, GateRow, Ref
from cyclebench.gate import Relative as RelativeLook
from cyclebench.model import ComparisonRow, Item
from cyclebench.stats import batches

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, before it joined the standard library
    import tomli as tomllib

__all__ = ["CONFIG", "Config", "GatePlan", "GbenchTarget", "ShallowClone", "base_of", "config_of", "run_gate"]

CONFIG = "cyclebench.toml"  # in the repository's root, read from the head revision ([ci] table)
TARGET_ENV = ("GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME")  # GitHub Actions, GitLab CI


class ShallowClone(ExperimentError):
    """The base is not in this clone (fetched too shallow): the message names the fetch that fixes it."""


@dataclass(frozen=True)
class GbenchTarget:
    """A Google Benchmark executable the gate judges (``[[ci.gbench]]`` in cyclebench.toml): the
    build commands run in each revision's private checkout, in order (argvs: CMake's configure
    and build are two), the executable's path there, and the library's --benchmark_filter regex
    (None: every benchmark)."""

    build: tuple[tuple[str, ...], ...]
    binary: str
    filter: str | None = None


@dataclass(frozen=True)
class Config:
    """The [ci] table of cyclebench.toml (every key optional): benchmark ``files``, the ``build``
    command, ``ldflags``, ``include`` directories, ``benchmarks`` (globs), the ``threshold`` and
    ``counts_threshold`` in percent, the ``gate``, ``thresholds``: {glob: percent} per
    benchmark (the first glob that matches), and the Google Benchmark targets (``gbench``)."""

    files: tuple[str, ...] = ()
    build: tuple[str, ...] = ()
    ldflags: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    benchmarks: tuple[str, ...] = ()
    threshold: float | None = None
    counts_threshold: float | None = None
    gate: str | None = None
    thresholds: tuple[tuple[str, float], ...] = ()
    gbench: tuple[GbenchTarget, ...] = ()


def _targets(raw: object) -> tuple[GbenchTarget, ...]:
    """``ci.gbench``: one table or an array of tables of build (a command, or a list of commands),
    binary and filter. ExperimentError naming what is wrong."""
    import shlex

    tables = [raw] if isinstance(raw, dict) else raw
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ExperimentError(f"{CONFIG}: ci.gbench must be a table, or an array of tables ([[ci.gbench]])")
    out = []
    for t in tables:
        binary, build, pattern = t.get("binary"), t.get("build", []), t.get("filter")
        if not isinstance(binary, str) or not binary:
            raise ExperimentError(f"{CONFIG}: ci.gbench.binary must be the executable's path in the repository")
        if isinstance(build, str):
            build = [build]
        if not isinstance(build, list) or not all(isinstance(c, str) and c.strip() for c in build):
            raise ExperimentError(f"{CONFIG}: ci.gbench.build must be a command, or a list of commands")
        if pattern is not None and not isinstance(pattern, str):
            raise ExperimentError(f"{CONFIG}: ci.gbench.filter must be a regex (a string)")
        out.append(GbenchTarget(tuple(tuple(shlex.split(c)) for c in build), binary, pattern))
    return tuple(out)


def config_of(text: str | None) -> Config:
    """The Config of a cyclebench.toml's text (None: no file). Raises ExperimentError naming
    what is wrong (TOML syntax, a key of the wrong type)."""
    if text is None:
        return Config()
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ExperimentError(f"{CONFIG}: {e}") from None
    ci = doc.get("ci", {})
    if not isinstance(ci, dict):
        raise ExperimentError(f"{CONFIG}: [ci] must be a table")

    def strings(key: str) -> tuple[str, ...]:
        v = ci.get(key, [])
        if isinstance(v, str):
            import shlex

            return tuple(shlex.split(v))
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise ExperimentError(f"{CONFIG}: ci.{key} must be a string or a list of strings")
        return tuple(v)

    def number(key: str, where: Mapping[str, Any] = ci) -> float | None:
        v = where.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < 1000:
            raise ExperimentError(f"{CONFIG}: ci.{key} must be a percentage (a number from 0)")
        return float(v)

    per = ci.get("thresholds", {})
    if not isinstance(per, dict):
        raise ExperimentError(f"{CONFIG}: ci.thresholds must be a table of glob = percent")
    gate = ci.get("gate")
    if gate is not None and gate not in (TIME, COUNTS, BOTH):
        raise ExperimentError(f"{CONFIG}: ci.gate must be time, counts or both")
    return Config(strings("files"), strings("build"), strings("ldflags"), strings("include"), strings("benchmarks"),
                  number("threshold"), number("counts_threshold"), gate,
                  tuple((str(k), number(k, per) or 0.0) for k in per), _targets(ci.get("gbench", [])))


def base_of(repo: Repo, given: str | None, head: Revision, env: Mapping[str, str] = os.environ
            ) -> tuple[Revision, str]:
    """The base revision and how it was chosen: ``given``; else the merge base of head with the
    pull request's target branch ($GITHUB_BASE_REF, $CI_MERGE_REQUEST_TARGET_BRANCH_NAME; as
    origin/NAME, else NAME); else with origin/HEAD; else with main or master. Raises
    ShallowClone (the base is not in this clone: the message names the git fetch that fixes it)
    or ExperimentError (nothing to compare against)."""
    if given:
        return repo.resolve(given), f"--base {given}"
    target = next(((k, env[k]) for k in TARGET_ENV if env.get(k)), None)
    if target is not None:
        name = target[1]
        candidates = [f"origin/{name}", name]
        why = f"the merge base with {target[0]}={name}"
    else:
        candidates = ["origin/HEAD", "main", "master", "origin/main", "origin/master"]
        why = "the merge base with {}"
    for ref in candidates:
        if not repo.exists(ref):
            continue
        mb = repo.merge_base(ref, head.sha)
        if mb is None:
            if repo.is_shallow():
                raise ShallowClone(f"{ref} and HEAD share no commit in this shallow clone: git fetch --unshallow "
                                   f"origin (or actions/checkout with fetch-depth: 0), then run again")
            raise ExperimentError(f"{ref} and HEAD share no commit: give --base")
        return repo.revision(mb), why.format(ref) if target is None else f"{why} ({ref})"
    if repo.is_shallow():
        name = target[1] if target else "main"
        raise ShallowClone(f"the base branch is not in this shallow clone: git fetch origin {name} --unshallow "
                           f"(or actions/checkout with fetch-depth: 0), then run again")
    raise ExperimentError("no base to compare with: give --base REV, or set GITHUB_BASE_REF "
                          "(no origin/HEAD, main or master here)")


@dataclass(frozen=True)
class GatePlan:
    """What the gate judges: thresholds relative (0.02 = 2%), per benchmark glob overriding the
    default; which gate; the measuring design (budget per benchmark, α for the whole gate)."""

    threshold: float = 0.02
    counts_threshold: float = 0.005
    gate: str = TIME
    thresholds: tuple[tuple[str, float], ...] = ()
    design: Design = field(default_factory=Design)

    def threshold_of(self, label: str) -> float:
        """The threshold for a benchmark (its label or its name): the first glob of
        ``thresholds`` that matches it, else the default."""
        bench = label.split("[", 1)[0]
        return next((t for g, t in self.thresholds if fnmatchcase(label, g) or fnmatchcase(bench, g)),
                    self.threshold)


def _time_rule(t: float) -> Any:
    """bisect's step rule on head/base − 1: fail when the CI's lower bound is above T, pass when
    its upper bound is below T, else on until the budget, then undecided."""

    def rule(looks: dict[tuple[int, int], PairLook], last: bool) -> str | None:
        lk = looks[(0, 1)]
        return FAIL if lk.low > t else PASS if lk.high < t else (UNDECIDED if last else None)

    return rule


def time_status_of(verdict: str, failed: bool) -> str:
    """A sitting's verdict as the gate's status: ``failed`` (a side crashed, hung or failed
    verification) is BROKEN; PASS, FAIL and UNDECIDED (_time_rule's) are themselves; any other
    — "inconclusive", the budget ended before a look had the pairs to judge — is UNDECIDED
    (listed, exit 3): with no CI there is nothing to pass on."""
    if failed:
        return BROKEN
    return verdict if verdict in (PASS, FAIL, UNDECIDED) else UNDECIDED


def _load() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def run_gate(ws: Workspace, base: Revision, head: Revision, base_how: str, plan: GatePlan, store: Any,
             labels: dict[str, str], command: Sequence[str], targets: Sequence[GbenchTarget] = ()) -> Gate:
    """Build both revisions, measure every benchmark both have paired in one sitting (and count
    them under callgrind for the counts gate), judge each (module doc): the `<cyclebench.h>`
    files of ``ws`` when it has any, and each Google Benchmark target's executables (timed only:
    callgrind's counts need the engine's batches). Raises ExperimentError: a base or head that
    does not build (or whose build makes no executable), a selection that matches nothing in
    either, counts asked of Google Benchmark targets alone."""
    cpu = ws.cpu()
    files = bool(ws.recipe.options.files)
    if not files and plan.gate == COUNTS:
        raise ExperimentError("--gate counts: Google Benchmark targets are timed, not counted (callgrind's Ir per "
                              "op needs the engine's batches); use --gate time")
    built: list[Built] = []
    sides = None
    in_base: dict[str, Item] = {}
    in_head: dict[str, Item] = {}
    if files:
        built = [must_build(ws, base, "base"), must_build(ws, head, "head")]
        sides = Sides(built, [ws.runner(x, cpu) for x in built], ["base", ""], cpu)
        in_base = {i.label: i for i in _items_or_none(ws, built[0], cpu)}
        in_head = {i.label: i for i in _items_or_none(ws, built[1], cpu)}
    common = [i for k, i in in_head.items() if k in in_base]
    pairs = [_gbench_pair(ws, t, base, head, cpu) for t in targets]
    if not in_base and not in_head and not any(p.listed for p in pairs):
        raise ExperimentError("no benchmark of the selection is in base or head" if files else
                              f"no benchmark of {', '.join(t.binary for t in targets)} in base or head"
                              + (" matches its filter" if any(t.filter for t in targets) else ""))
    m = max(1, len(common) + sum(len(p.shared) for p in pairs))
    design = replace(plan.design, alpha=plan.design.alpha / m)
    load0 = _load()
    tags = {**labels, "rev": head.sha, "base": base.sha, "ci": "1"}
    if sides is not None:
        run_id, rate = open_sitting(store, sides, 1, command, tags, ws.revisions(a=base.sha, b=head.sha))
    else:
        from cyclebench.experiments.session import open_run
        from cyclebench.model import REVISION

        run_id, rate = open_run(store, command, cpu, [], None, None,
                                env_extra={"revisions": ws.revisions(a=base.sha, b=head.sha)}, labels=tags,
                                purpose=REVISION)
    rows: list[GateRow] = []
    disturbed = 0
    with store.finishing(run_id):
        for item in common:
            assert sides is not None
            t = plan.threshold_of(item.label)
            look = row = None
            time_status = None
            if plan.gate in (TIME, BOTH):
                sits: list[Sitting] = measure(sides.runners, [item], [(0, 1)], design, _time_rule(t), ws.progress)
                sit = sits[0]
                figures = _store(store, run_id, rate, sit, sides)
                disturbed += sum(int(batches.disturbed(o.result).sum()) for o in sit.outcomes)
                look = sit.last((0, 1))
                row = relative_row(sit, (0, 1), f"{item.bench} @ {base.short}", f"{item.bench} @ {head.short}",
                                   sit.verdict, design.alpha, t, {"equivalence": t,
                                                                  "margin_rule": f"the threshold, {100 * t:g}%"},
                                   figures)
                time_status = time_status_of(sit.verdict, bool(sit.failed))
            counts = None
            counts_status = None
            if plan.gate in (COUNTS, BOTH):
                ws.progress.step(f"{item.label}: counting under callgrind")
                ca, cb = count(ws, built[0], item, cpu), count(ws, built[1], item, cpu)
                a, b = ca.ir, cb.ir
                counts = Counted(a, b, ca.exact and cb.exact, ca.reason or cb.reason)
                ct = plan.counts_threshold
                ch = counts.change
                counts_status = (BROKEN if a is None or b is None else UNDECIDED if not counts.exact or ch is None
                                 else FAIL if ch > ct else PASS)
            rows.append(_judged(item.label, t, look, row, time_status, counts, counts_status))
        for p in pairs if plan.gate in (TIME, BOTH) else ():
            rows += _gate_gbench(p, base, head, plan, design, store, run_id, cpu, ws.progress)
    rows += [GateRow(i.label, NEW, plan.threshold_of(i.label), why="only in head") for k, i in in_head.items()
             if k not in in_base]
    rows += [GateRow(i.label, REMOVED, plan.threshold_of(i.label), why="only in base") for k, i in in_base.items()
             if k not in in_head]
    for p in pairs:
        rows += [GateRow(n, NEW, plan.threshold_of(n), why="only in head") for n in p.added]
        rows += [GateRow(n, REMOVED, plan.threshold_of(n), why="only in base") for n in p.removed]
    from cyclebench.env import sysinfo
    from cyclebench.experiments.session import HOST_ENV

    made = built or [b for p in pairs[:1] for b in p.built]
    facts = {"host": os.environ.get(HOST_ENV) or socket.gethostname(),
             "cpu_model": sysinfo.cpu_info().get("model_name"), "cpu": cpu, "load_before": load0,
             "load_after": _load(), "disturbed_batches": disturbed,
             "builds": {"base": {"sha": base.sha, "seconds": made[0].seconds if made else 0.0,
                                 "cached": made[0].cached if made else True},
                        "head": {"sha": head.sha, "seconds": made[1].seconds if made else 0.0,
                                 "cached": made[1].cached if made else True}},
             "confinement": ws.recipe.confine.recorded,
             "alpha": plan.design.alpha, "correction": f"Bonferroni over {m} benchmark{'s' * (m != 1)}",
             "budget": plan.design.budget, "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if pairs:
        facts["gbench"] = [{"binary": p.target.binary, "library_version": p.version,
                            "filter": p.target.filter} for p in pairs]
    gate = Gate(run_id, Ref(base.sha, base.short, base.subject), Ref(head.sha, head.short, head.subject), base_how,
                tuple(rows), plan.gate, plan.counts_threshold, facts)
    store.update_run(run_id, summary={"ci": gate.to_dict(),
                                      "compare": [r.row.to_dict() for r in rows if r.row is not None],
                                      "display": {"design": f"ci: {base.short} → {head.short}",
                                                  "alpha": design.alpha}})
    store.finish_run(run_id, "complete")
    return gate


def _judged(label: str, t: float, look: PairLook | None, row: ComparisonRow | None, time_status: str | None,
            counts: Counted | None = None, counts_status: str | None = None, more: str = "") -> GateRow:
    """One benchmark's gate row from its time look (None: none) and its counts (module doc)."""
    statuses = [s for s in (time_status, counts_status) if s is not None]
    status = (BROKEN if BROKEN in statuses else FAIL if FAIL in statuses
              else UNDECIDED if UNDECIDED in statuses else PASS)
    why = "; ".join(x for x in (
        f"time: {time_status}" + (" (the budget ended before a look: too few pairs for a CI)"
                                  if time_status == UNDECIDED and look is None else "")
        if time_status else "", f"counts: {counts_status}" if counts_status else "",
        (counts.reason or "") if counts is not None else "", more) if x)
    # base: its stored per-op figure (the row's A, stats.ab.anchored), the one history gives;
    # head: the figure the pairs' Δ implies, so head ÷ base − 1 is the Δ% beside it
    # (head's own median beside the median ratio read 311.5 vs 299.5 for Δ +4.16%)
    base_fig = row.cmp.median_a if row is not None and row.cmp is not None else None
    rel = None if look is None else RelativeLook(
        look.diff, look.low, look.high, look.pairs, base_fig if base_fig is not None else look.median_x,
        (base_fig if base_fig is not None else look.median_x) * (1 + look.diff))
    return GateRow(label, status, t, row, rel, counts, time_status, counts_status, why)


@dataclass(frozen=True)
class _GbenchPair:
    """A Google Benchmark target built in base and head: its executables, their library's
    version, and the benchmarks both list (``shared``), only base (``removed``), only head
    (``added``), each labelled ``EXECUTABLE/NAME``."""

    target: GbenchTarget
    built: list[Built]
    sides: list[Any]  # runner.gbench.Gbench, base then head
    version: str
    shared: list[str]
    removed: list[str]
    added: list[str]

    @property
    def listed(self) -> bool:
        return bool(self.shared or self.removed or self.added)

    def label(self, name: str) -> str:
        return f"{Path(self.target.binary).name}/{name}"


def _gbench_pair(ws: Workspace, target: GbenchTarget, base: Revision, head: Revision, cpu: int) -> _GbenchPair:
    """``target`` built in both revisions (its build commands in each private checkout, cached by
    tree as every revision's build) and listed. ExperimentError: a build that fails, or makes no
    executable at the target's path; one that is not a Google Benchmark."""
    from cyclebench.experiments.options import BuildOptions
    from cyclebench.experiments.revisions import prepare
    from cyclebench.runner.gbench import Gbench, GbenchError

    recipe = replace(ws.recipe, options=BuildOptions(), command=target.build[0] if target.build else (),
                     then=target.build[1:], runner=False)
    built, sides = [], []
    for rev, name in ((base, "base"), (head, "head")):
        ws.progress.step(f"building {target.binary} at {rev.short}")
        b = prepare(ws.repo, rev, recipe)
        if b.reason is not None:
            raise ExperimentError(f"{name} {rev.short} does not build {target.binary}: {b.reason} (log: {b.log})")
        exe = b.directory / "src" / target.binary
        if not exe.is_file():
            raise ExperimentError(f"{name} {rev.short}: {target.binary}: not made by the build commands (log: {b.log})")
        confine = ws.recipe.confine.sandbox if ws.recipe.confine.on else None
        try:
            sides.append(Gbench(exe, cpu, confine=confine))
        except GbenchError as e:
            raise ExperimentError(f"{name} {rev.short}: {e}") from None
        built.append(b)
    try:
        names = [s.names(target.filter) for s in sides]
        version = ".".join(map(str, sides[1].version()))
    except GbenchError as e:
        raise ExperimentError(str(e)) from None
    pair = _GbenchPair(target, built, sides, version, [], [], [])
    shared = [n for n in names[1] if n in set(names[0])]
    return replace(pair, shared=shared, removed=[pair.label(n) for n in names[0] if n not in set(names[1])],
                   added=[pair.label(n) for n in names[1] if n not in set(names[0])])


def _gate_gbench(p: _GbenchPair, base: Revision, head: Revision, plan: GatePlan, design: Design, store: Any,
                 run_id: int, cpu: int, progress: Any) -> list[GateRow]:
    """Each benchmark both executables list, measured paired (experiments.gbench.gate_sitting)
    and judged by the time rule; each side's invocations stored as a row (ns, cycles~ beside)."""
    from cyclebench.experiments.gbench import MIN_TIME, gate_sitting, stored_row
    from cyclebench.model import OK

    rows = []
    for name in p.shared:
        label = p.label(name)
        t = plan.threshold_of(label)
        sit, seen = gate_sitting(p.sides, name, design, _time_rule(t), progress, timeout=120.0)
        figures: list[float | None] = []
        for s, (variant, rev) in enumerate((("base", base), ("", head))):
            bad = next((o for o in sit.outcomes[s:s + 1] if o.status != OK), None)
            row = stored_row(label, seen[s], bad, str(p.sides[s].path), p.version, cpu, MIN_TIME,
                             sum(o.wall_s for o in sit.outcomes[s:s + 1]), variant)
            store.record(run_id, replace(row, revision=rev.sha))
            figures.append(row.per_op)
        look = sit.last((0, 1))
        cmp_row = relative_row(sit, (0, 1), f"{label} @ {base.short}", f"{label} @ {head.short}", sit.verdict,
                               design.alpha, t, {"equivalence": t, "margin_rule": f"the threshold, {100 * t:g}%"},
                               figures)
        more = "counts: not for a Google Benchmark target (timed only)" if plan.gate == BOTH else ""
        rows.append(_judged(label, t, look, cmp_row, time_status_of(sit.verdict, bool(sit.failed)), more=more))
    return rows


def _items_or_none(ws: Workspace, b: Built, cpu: int) -> list[Item]:
    """The selection in ``b``; none (not an error) where the selection matches nothing there."""
    try:
        return ws.items(b, cpu)
    except ExperimentError:
        return []
