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
from typing import Any

from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.revcompare import Workspace, must_build
from cyclebench.experiments.revcounts import count
from cyclebench.experiments.revisions import Built, Repo, Revision
from cyclebench.experiments.revpair import Design, PairLook, Sides, Sitting, measure, open_sitting, relative_row
from cyclebench.experiments.revpair import store_sitting as _store
from cyclebench.gate import BOTH, BROKEN, COUNTS, FAIL, NEW, PASS, REMOVED, TIME, UNDECIDED, Counted, Gate, GateRow, Ref
from cyclebench.gate import Relative as RelativeLook
from cyclebench.model import Item
from cyclebench.stats import batches

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, before it joined the standard library
    import tomli as tomllib

__all__ = ["CONFIG", "Config", "GatePlan", "ShallowClone", "base_of", "config_of", "run_gate"]

CONFIG = "cyclebench.toml"  # in the repository's root, read from the head revision ([ci] table)
TARGET_ENV = ("GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME")  # GitHub Actions, GitLab CI


class ShallowClone(ExperimentError):
    """The base is not in this clone (fetched too shallow): the message names the fetch that fixes it."""


@dataclass(frozen=True)
class Config:
    """The [ci] table of cyclebench.toml (every key optional): benchmark ``files``, the ``build``
    command, ``ldflags``, ``include`` directories, ``benchmarks`` (globs), the ``threshold`` and
    ``counts_threshold`` in percent, the ``gate``, and ``thresholds``: {glob: percent} per
    benchmark (the first glob that matches)."""

    files: tuple[str, ...] = ()
    build: tuple[str, ...] = ()
    ldflags: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    benchmarks: tuple[str, ...] = ()
    threshold: float | None = None
    counts_threshold: float | None = None
    gate: str | None = None
    thresholds: tuple[tuple[str, float], ...] = ()


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
                  tuple((str(k), number(k, per) or 0.0) for k in per))


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
             labels: dict[str, str], command: Sequence[str]) -> Gate:
    """Build both revisions, measure every benchmark both have paired in one sitting (and count
    them under callgrind for the counts gate), judge each (module doc). Raises ExperimentError:
    a base or head that does not build, a selection that matches nothing in either."""
    built = [must_build(ws, base, "base"), must_build(ws, head, "head")]
    cpu = ws.cpu()
    sides = Sides(built, [ws.runner(x, cpu) for x in built], ["base", ""], cpu)
    in_base = {i.label: i for i in _items_or_none(ws, built[0], cpu)}
    in_head = {i.label: i for i in _items_or_none(ws, built[1], cpu)}
    common = [i for k, i in in_head.items() if k in in_base]
    if not in_base and not in_head:
        raise ExperimentError("no benchmark of the selection is in base or head")
    m = max(1, len(common))
    design = replace(plan.design, alpha=plan.design.alpha / m)
    load0 = _load()
    run_id, rate = open_sitting(store, sides, 1, command, {**labels, "rev": head.sha, "base": base.sha, "ci": "1"},
                                ws.revisions(a=base.sha, b=head.sha))
    rows: list[GateRow] = []
    disturbed = 0
    with store.finishing(run_id):
        for item in common:
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
            statuses = [s for s in (time_status, counts_status) if s is not None]
            status = (BROKEN if BROKEN in statuses else FAIL if FAIL in statuses
                      else UNDECIDED if UNDECIDED in statuses else PASS)
            why = "; ".join(x for x in (
                f"time: {time_status}" + (" (the budget ended before a look: too few pairs for a CI)"
                                          if time_status == UNDECIDED and look is None else "")
                if time_status else "", f"counts: {counts_status}" if counts_status else "",
                (counts.reason or "") if counts is not None else "") if x)
            # base: its stored per-op figure (the row's A, stats.ab.anchored), the one history gives;
            # head: the figure the pairs' Δ implies, so head ÷ base − 1 is the Δ% beside it
            # (head's own median beside the median ratio read 311.5 vs 299.5 for Δ +4.16%)
            base_fig = row.cmp.median_a if row is not None and row.cmp is not None else None
            rel = None if look is None else RelativeLook(
                look.diff, look.low, look.high, look.pairs, base_fig if base_fig is not None else look.median_x,
                (base_fig if base_fig is not None else look.median_x) * (1 + look.diff))
            rows.append(GateRow(item.label, status, t, row, rel, counts, time_status, counts_status, why))
    rows += [GateRow(i.label, NEW, plan.threshold_of(i.label), why="only in head") for k, i in in_head.items()
             if k not in in_base]
    rows += [GateRow(i.label, REMOVED, plan.threshold_of(i.label), why="only in base") for k, i in in_base.items()
             if k not in in_head]
    from cyclebench.env import sysinfo
    from cyclebench.experiments.session import HOST_ENV

    facts = {"host": os.environ.get(HOST_ENV) or socket.gethostname(),
             "cpu_model": sysinfo.cpu_info().get("model_name"), "cpu": cpu, "load_before": load0,
             "load_after": _load(), "disturbed_batches": disturbed,
             "builds": {"base": {"sha": base.sha, "seconds": built[0].seconds, "cached": built[0].cached},
                        "head": {"sha": head.sha, "seconds": built[1].seconds, "cached": built[1].cached}},
             "confinement": ws.recipe.confine.recorded,
             "alpha": plan.design.alpha, "correction": f"Bonferroni over {m} benchmark{'s' * (m != 1)}",
             "budget": plan.design.budget, "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    gate = Gate(run_id, Ref(base.sha, base.short, base.subject), Ref(head.sha, head.short, head.subject), base_how,
                tuple(rows), plan.gate, plan.counts_threshold, facts)
    store.update_run(run_id, summary={"ci": gate.to_dict(),
                                      "compare": [r.row.to_dict() for r in rows if r.row is not None],
                                      "display": {"design": f"ci: {base.short} → {head.short}",
                                                  "alpha": design.alpha}})
    store.finish_run(run_id, "complete")
    return gate


def _items_or_none(ws: Workspace, b: Built, cpu: int) -> list[Item]:
    """The selection in ``b``; none (not an error) where the selection matches nothing there."""
    try:
        return ws.items(b, cpu)
    except ExperimentError:
        return []
