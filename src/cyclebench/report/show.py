"""Each stored kind's tables printed as its command prints them — by `run`, `scale` and, from
the records experiments/show.py rebuilds out of a stored run, by `show RUN` (docs/architecture.md:
report reads records). The records here are what a table is printed from; nothing is read
from the store.

=============================  ==============================================================
record                         printed with
=============================  ==============================================================
RunTables                      console.print_results and print_counters; print_simulated
                               when callgrind simulated the rows (print_tables)
CostTables                     console.print_results, the lines of each row's cost under it
StatTables                     report.stat.stat_table
ProfileTables                  report.profile.profile_table, the probe's line on the notes
ScaleTables                    report.plots.scale_table per series, text_chart (print_series)
VariantsTables                 report.variants.print_variants
ComparisonTables               console.print_comparisons
Sitting                        report.bisect.print_sitting (under a bisect's sitting's table)
=============================  ==============================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.console import Console

from cyclebench.gate import Gate
from cyclebench.model import SIMULATED, BenchEntry, ComparisonRow, ProfileRow, Result, Run, Series
from cyclebench.prediction import Prediction
from cyclebench.report import console as console_report
from cyclebench.report import variants as variants_report
from cyclebench.report.bisect import Sitting, print_sitting
from cyclebench.report.text import safe_text
from cyclebench.report.titles import SIMULATED_TITLE, confinement_line, damaged_lines, run_confinement

if TYPE_CHECKING:
    from cyclebench.stats.repetitions import Metric

DAMAGED = (KeyError, TypeError, ValueError, AttributeError)  # what a summary an import damaged raises


@dataclass(frozen=True)
class RunTables:
    """`run`'s tables of ``rows`` (timing rows with their run-to-run spread in their
    ``run_to_run``, or callgrind's simulated rows) under ``title``; ``net``: the results
    net of the loop's own cost (run --net)."""

    rows: tuple[Result, ...]
    title: str
    net: bool = False


@dataclass(frozen=True)
class CostTables:
    """`run FILE.c` of will-it-scale test cases, `run --gbench BIN`: its results under ``title``,
    then ``cost_lines`` (report.titles.wis_cost_lines, gbench_cost_lines)."""

    rows: tuple[Result, ...]
    title: str
    cost_lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class StatTables:
    """`stat`'s table: one Metric per line (values per repetition) under ``title``."""

    metrics: tuple[Metric, ...]
    title: str


@dataclass(frozen=True)
class ProfileTables:
    """`profile`'s flat profile: ``rows`` each function's row as stats.profile.flat_profile made
    it (its result's ``profile``), in the profile's order; ``unit`` of the
    per-call costs; ``simulated`` under callgrind (Ir); at most ``limit`` functions;
    ``probe_line``: what was subtracted (None: nothing, or not stored)."""

    rows: tuple[ProfileRow, ...]
    unit: str
    title: str
    simulated: bool = False
    limit: int = 30
    probe_line: str | None = None


@dataclass(frozen=True)
class ScaleTables:
    """`scale`'s tables: a Series per benchmark and mode; ``descriptions`` test case → its
    description (printed once, above its series in ``first_mode``)."""

    series: tuple[Series, ...]
    descriptions: Mapping[str, str | None] = field(default_factory=dict)
    first_mode: str | None = None


@dataclass(frozen=True)
class VariantsTables:
    """`variants`' ranked tables: ``data`` one entry per benchmark as experiments.variants.summary
    made it (the JSON the run stored in ``summary.variants``), ranked by ``sort``; ``disasm``:
    the instruction classes and diffs too."""

    data: tuple[BenchEntry, ...]
    sort: str = "cycles"
    disasm: bool = False


@dataclass(frozen=True)
class ComparisonTables:
    """`compare`'s verdicts (Holm-adjusted, sequential looks included) under ``title``, at
    significance level ``alpha``."""

    rows: tuple[ComparisonRow, ...]
    title: str
    alpha: float


Tables = (RunTables | CostTables | StatTables | ProfileTables | ScaleTables | VariantsTables | ComparisonTables | Gate
          | Sitting)  # Sitting: under a bisect's sitting's table, what its GOOD, BAD and M are (report.bisect)


@dataclass(frozen=True)
class ShownRun:
    """A stored run as `show` prints it: ``run`` (its status, start, identity, timer), its
    result ``rows`` as stored, the ``tables`` its command printed, rebuilt; ``problem`` says why
    they could not be (a summary an import damaged: ``TypeName: message``), and then the rows
    are printed as they are."""

    run: Run
    rows: tuple[Result, ...]
    tables: tuple[Tables, ...] = ()
    problem: str | None = None
    predictions: tuple[Prediction, ...] = ()  # stored with the run (--predict): printed beside its table

    @property
    def run_id(self) -> int:
        return int(self.run.id or 0)


# ---------------------------------------------------------------- each kind's printing
def print_tables(rows: Sequence[Result], title: str, net: bool, wide: bool, console: Console) -> None:
    """The tables of a run's rows as `run` prints them: callgrind's events when they were
    simulated, else the results (net of the loop with ``net``) and, when -e counted events,
    the counters per op."""
    if any(r.get("kind") == SIMULATED for r in rows):  # a callgrind run: all its rows are
        console_report.print_simulated(rows, console, title=title + SIMULATED_TITLE, wide=wide)
        return
    console_report.print_results(rows, console, title=title, net=net, wide=wide)
    console_report.print_counters(rows, console, wide=wide)  # nothing without counters


def print_series(series: Sequence[Series], descriptions: Mapping[str, str | None], first_mode: str | None,
                 wide: bool, console: Console) -> None:
    """The tables of `scale` (and of `show` of its run): per series its test case's description
    (once, in the first mode), the table (report.plots.scale_table), then the efficiency chart."""
    from cyclebench.report import plots

    for s in series:
        if s.bench in descriptions and s.mode == first_mode:
            console.print(safe_text(f"{s.bench}: {descriptions[s.bench] or '(no description)'}"), highlight=False)
        console.print(plots.scale_table(s, wide=wide))
    chart = plots.text_chart(series)
    if chart:
        console.print("\n".join(chart), highlight=False, markup=False)


def _print(t: Tables, wide: bool, console: Console, notes: Console, run_id: int) -> None:
    if isinstance(t, RunTables):
        print_tables(t.rows, t.title, t.net, wide, console)
    elif isinstance(t, CostTables):
        console_report.print_results(t.rows, console, title=t.title, wide=wide)
        for line in t.cost_lines:
            console.print(safe_text(line), highlight=False)
    elif isinstance(t, StatTables):
        from cyclebench.report.stat import (
            stat_table,  # here: numpy comes with stat's and profile's (`runs` needs neither)
        )

        console.print(stat_table(list(t.metrics), title=t.title, wide=wide))
    elif isinstance(t, ProfileTables):
        from cyclebench.report.profile import profile_table

        console.print(profile_table(t.rows, t.unit, t.title, t.simulated, wide, t.limit))
        if t.probe_line is not None:
            notes.print(t.probe_line, highlight=False)
    elif isinstance(t, ScaleTables):
        print_series(t.series, t.descriptions, t.first_mode, wide, console)
    elif isinstance(t, VariantsTables):
        variants_report.print_variants([dict(d) for d in t.data], console, run_id=run_id, wide=wide, sort=t.sort,
                                       disasm=t.disasm)
    elif isinstance(t, Gate):
        from cyclebench.report.gate.console import gate_table

        console.print(gate_table(t, wide))
    elif isinstance(t, Sitting):
        print_sitting(t, console, notes)
    else:
        console_report.print_comparisons(t.rows, console, title=t.title, alpha=t.alpha, wide=wide)


def print_shown(shown: ShownRun, wide: bool, console: Console, notes: Console) -> None:
    """Print ``shown`` as its command printed it: its tables to ``console`` (its result rows as
    they are, after one line on ``notes`` saying so, when the stored tables could not be
    rebuilt or printed), its predictions measured beside predicted (as --predict printed them),
    then on ``notes`` its status and start, who made it, how a run of revisions ran their code
    (report.titles.confinement_line) and the timer."""
    rid, problem = shown.run_id, shown.problem
    for line in damaged_lines(shown.run, shown.rows):
        notes.print(safe_text(line, multiline=False), highlight=False, soft_wrap=True)
    if problem is None:
        try:
            for t in shown.tables:
                _print(t, wide, console, notes, rid)
        except DAMAGED as e:  # a summary an import damaged: not a traceback
            problem = f"{type(e).__name__}: {e}"
    if problem is not None:
        notes.print(safe_text(f"cyclebench: run #{rid}'s stored table is incomplete ({problem}): "
                              "its result rows as they are", multiline=False), highlight=False)
        console_report.print_results(shown.rows, console, title=f"run #{rid}", wide=wide)
    if shown.predictions:
        from cyclebench.report.predict import predicted_group

        console.print(predicted_group(shown.rows, shown.predictions, title=f"run #{rid} · measured beside predicted",
                                      wide=wide))
    run = shown.run
    notes.print(safe_text(f"run #{rid} · {run.status} · {run.started_at}", multiline=False), highlight=False)
    identity = console_report.identity_line(run)
    if identity:
        # wrapped between words at the console's width (~200 cells of host, kernel, CPU, compiler and
        # labels); a pipe without COLUMNS keeps it one line (ui/common: its console soft-wraps)
        notes.print(safe_text(identity, multiline=False), highlight=False)
    recorded = run_confinement(run)
    if recorded is not None:  # a run of revisions' code says how it ran it, confined or not
        notes.print(safe_text(confinement_line(recorded), multiline=False), highlight=False)
    if run.calibration:
        notes.print(safe_text(console_report.calibration_line(dict(run.calibration))), highlight=False)
