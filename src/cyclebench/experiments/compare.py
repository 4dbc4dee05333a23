"""`cyclebench compare`'s design: benchmarks measured side by side and judged.

Benchmarks of one binary are measured together, alternating batch by batch
(engine/measure.c), their rounds spread over several runner processes with the order
reversed in every other one (interleave.py), once per parameter; every result is stored
like a `run` result (variant "compare"), and each benchmark after the first is compared
with the first (compare.paired, CI bootstrapped over processes), p-values Holm-adjusted
across all comparisons of the command.
Two stored runs: every (benchmark, parameter, variant) present in both is compared with
compare.unpaired over the per-round costs recomputed from the stored samples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from cyclebench.experiments.comparison import Row, adjust
from cyclebench.experiments.options import Budget
from cyclebench.experiments.run import Prepared, RunConfig, begin
from cyclebench.experiments.sequential import Sequential, measure_until_known
from cyclebench.model import DISTURBED, ERROR, OK, Outcome, Result
from cyclebench.report.console import fmt
from cyclebench.runner import interleave
from cyclebench.runner.plan import SelectionError
from cyclebench.stats import clock
from cyclebench.stats.ab import ALPHA, anchored, paired
from cyclebench.stats.result import result_fields, sample_rows, usable_for_verdict

if TYPE_CHECKING:
    from cyclebench.store import Store


def param_groups(prepared: Prepared, names: Sequence[str], params: Sequence[int]) -> list[tuple[int | None, list[str]]]:
    """(param, benchmarks) sets to measure together: one per parameter."""
    info = {b.name: b for b in prepared.runner.list()}
    for n in names:
        if n not in info:
            raise SelectionError(f"unknown benchmark '{n}' (see cyclebench run --list)")
    takes = {bool(info[n].params) for n in names}
    if len(takes) > 1:
        raise SelectionError("cannot compare a benchmark that takes a parameter with one that does not")
    if takes == {False}:
        if params:
            raise SelectionError("these benchmarks take no parameter (-p)")
        return [(None, list(names))]
    if not params:
        common = set(info[names[0]].params or ())
        for n in names[1:]:
            common &= set(info[n].params or ())
        params = sorted(common)
        if not params:
            raise SelectionError("these benchmarks share no parameter: pass -p")
    return [(p, list(names)) for p in params]


def execute(
    cfg: RunConfig, prepared: Prepared, store: Store, names: Sequence[str], params: Sequence[int],
    alpha: float = ALPHA, on_done: Callable[[int | None], None] = lambda _p: None, processes: int = 4,
    on_process: Callable[[str], None] = lambda _l: None, include_disturbed: bool = False,
    budget: Budget | None = None, on_open: Callable[[int], None] = lambda _r: None,
) -> tuple[int, list[Row], list[Result]]:
    """Measure and compare. Fixed design (``budget`` None): the rounds of each set spread
    over ``processes`` runner processes, Holm across the command. Sequential (a Budget):
    processes of 10 rounds until every pair is decided or the budget ends, the first look
    after ``processes`` of them, α split over the command's pairs (Bonferroni).
    Every set is measured first, then the run is opened and everything stored at once. Returns
    (run id, comparison rows, stored result rows); ``on_open`` gets the run id as soon as the
    run is stored."""
    groups = param_groups(prepared, names, params)
    n_pairs = sum(len(b) - 1 for _, b in groups)
    sets = [_measure_set(cfg, prepared, benches, param, alpha / n_pairs, processes, on_process, include_disturbed,
                         budget, on_done) for param, benches in groups]
    run_id, rate = begin(cfg, prepared, store)
    on_open(run_id)
    rows: list[Row] = []
    results: list[Result] = []
    with store.finishing(run_id):
        for m in sets:
            _store_and_judge(store, run_id, rate, m, alpha, n_pairs, include_disturbed, budget, rows, results)
    rows = adjust(rows, alpha)
    store.update_run(run_id, summary={"compare": [r.to_dict() for r in rows]})
    store.finish_run(run_id, "complete")
    return run_id, rows, results


@dataclass(frozen=True)
class _Measured:
    """One set as measured: its benchmarks at ``param``, their outcomes, each round's process,
    and the sequential design's looks (None: judged in the fixed design)."""

    param: int | None
    benches: list[str]
    outs: list[Outcome]
    procs: np.ndarray
    seq: Sequential | None


def _measure_set(cfg: RunConfig, prepared: Prepared, benches: list[str], param: int | None, alpha: float,
                 processes: int, on_process: Callable[[str], None], include_disturbed: bool, budget: Budget | None,
                 on_done: Callable[[int | None], None]) -> _Measured:
    """Measure one set in its design (``alpha``: each pair's share); a benchmark that brought the
    shared process down leaves the others measured again without it, in the fixed design."""
    items = [(b, param) for b in benches]
    label = " vs ".join(benches) + ("" if param is None else f" [{param}]")
    step = lambda i: on_process(f"{label} process {i + 1}")  # noqa: E731
    seq = None
    if budget is not None:
        seq = measure_until_known(prepared.runner, items, cfg.options, budget.seconds * (len(items) - 1),
                                  alpha, budget.equivalence, processes, include_disturbed, step)
        outs, procs = list(seq.outs), seq.procs
    else:
        outs, procs = interleave.measure(prepared.runner, items, cfg.options, processes, on_process=step)
    spared = [k for k, o in enumerate(outs) if o.status == OK or _not_measured(o)]
    if len(spared) > 1 and len(spared) < len(outs) and any(_not_measured(outs[k]) for k in spared):
        # one benchmark brought the shared process down: measure the others again without it
        again, procs = interleave.measure(prepared.runner, [items[k] for k in spared], cfg.options, processes)
        for k, o in zip(spared, again, strict=True):
            outs[k] = o
        seq = None  # measured again in the fixed design: judged so
    on_done(param)
    return _Measured(param, benches, outs, procs, seq)


def _store_and_judge(store: Store, run_id: int, rate: float, m: _Measured, alpha: float, n_pairs: int,
                     include_disturbed: bool, budget: Budget | None, rows: list[Row], results: list[Result]) -> None:
    """Store one measured set's results (``rate``: the timer's Hz) and append its comparison rows."""
    outs, benches, param, procs, seq = list(m.outs), m.benches, m.param, m.procs, m.seq
    costs = []
    first = len(results)  # this set's stored results start here, in side order
    good = [o.result for o in outs if o.status == OK and o.result]
    shared = iter(clock.shared_round_ratio(good))  # one clock per round for all sides
    for k, o in enumerate(outs):
        fields = result_fields(o, rate, "compare")
        results.append(store.record(run_id, fields, sample_rows(o.result)))
        ratio = next(shared) if o.status == OK and o.result else None
        # a disturbed side (most batches preempted) enters no verdict unless asked
        use = usable_for_verdict(fields, include_disturbed) and o.result is not None
        costs.append(clock.round_costs(o.result, ratio) if use else None)
        if fields["status"] == DISTURBED and not include_disturbed:
            outs[k] = replace(o, status=DISTURBED, reason=fields.get("reason"))
    base = costs[0]

    def side(k: int) -> float | None:  # side k's stored per-op figure, in the unit of the costs (Result.figure)
        got = results[first + k].figure(base[1]) if base is not None else None
        return got.value if got is not None else None

    for j, (b, o, c) in enumerate(zip(benches[1:], outs[1:], costs[1:], strict=True), start=1):
        if base is None or c is None:  # the culprit first, then what it cost the other side
            bad = sorted((x for x in (outs[0], o) if x.status != OK), key=_not_measured)
            rows.append(Row(benches[0], b, param, "", None,
                            "; ".join(f"{x.bench}: {x.status}: {x.reason}" for x in bad)))
            continue
        if seq is not None:
            cmp = seq.comparison(j)
            cmp = anchored(cmp, side(0), side(j)) if cmp is not None else None
            looks = [asdict(x) for x in seq.looks.get(j, [])]
            rows.append(Row(benches[0], b, param, base[1], cmp, seq.note(j) if cmp else "no look was possible",
                            {"looks": looks, "seconds": seq.decided_s.get(j, seq.seconds), "budget": seq.budget,
                             "alpha": alpha / n_pairs, "equivalence": budget.equivalence if budget else None}))
            continue
        ok = [i for i in range(min(len(base[0]), len(c[0]))) if base[0][i] == base[0][i] and c[0][i] == c[0][i]]
        try:
            g = procs[ok] if len(procs) == len(base[0]) else None
            cmp = anchored(paired(base[0][ok], c[0][ok], alpha=alpha, groups=g), side(0), side(j))
        except ValueError as e:
            rows.append(Row(benches[0], b, param, base[1], None, str(e)))
            continue
        rows.append(Row(benches[0], b, param, base[1], cmp, process_note(base[0][ok], c[0][ok], g)))


def describe(measured: Sequence[Result], cpu: int, budget: Budget | None) -> str:
    """How a compare measured and judged, for its table's title: the design (paired, interleaved,
    rounds over N processes), the CPU, and the test (the fixed design's Wilcoxon signed-rank with
    Holm; or the sequential design's budget, alpha spending and equivalence margin)."""
    procs = max((r.processes or 1 for r in measured), default=1)
    how = ("Wilcoxon signed-rank, Holm, CI bootstrapped over processes" if budget is None else
           f"sequential (budget {budget.seconds:g} s a pair, O'Brien–Fleming alpha spending, repeated CI, "
           f"equivalent within ±{100 * budget.equivalence:g}%)")
    return f"paired, interleaved, rounds over {procs} process{'es' if procs > 1 else ''} · CPU {cpu} · {how}"


def keep_table(store: Store, run_id: int, rows: Sequence[Row], design: str, alpha: float) -> None:
    """Store the comparison's rows with how it was judged (``describe``'s text and α) in the
    run's summary, so `show` prints the same table; not the run id (an import renumbers).
    Raises StoreError."""
    store.update_run(run_id, summary={"compare": [r.to_dict() for r in rows],
                                      "display": {"design": design, "alpha": alpha}})


def _not_measured(o: Outcome) -> bool:
    """An item that lost its measurement to another's crash (runner.engine attributes it)."""
    return o.status == ERROR and (o.reason or "").startswith("not measured")


PROCESS_SPREAD = 0.05  # per-process medians of A further apart than this (relative) are worth a note


def process_note(a: np.ndarray, b: np.ndarray, groups: np.ndarray | None) -> str:
    """A note when the processes disagree: A's per-process medians spread by more than 5%
    of its median, with the range of the per-process median differences; empty otherwise.
    On the AMD VM copy/rep_movsb at 4096 B cost 157 cycles~ in some processes and 220–300
    in others, with the buffers at the same virtual page offsets in every process: physical
    placement or the host's state, which a single process cannot average out."""
    if groups is None or len(np.unique(groups)) < 2:
        return ""
    ga = [float(np.median(a[groups == k])) for k in np.unique(groups)]
    gd = [float(np.median((b - a)[groups == k])) for k in np.unique(groups)]
    mid = float(np.median(a))
    if not mid or (max(ga) - min(ga)) / abs(mid) <= PROCESS_SPREAD:
        return ""
    return (f"A differs by process: {fmt(min(ga))}–{fmt(max(ga))}; Δ per process {min(gd):+.3g} to "
            f"{max(gd):+.3g} ({len(ga)} processes)")
