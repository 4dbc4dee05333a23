"""The titles and the lines under the tables that a command prints and `show` of its run prints
again (docs/architecture.md: report reads records; `show` rebuilds them from the stored run):
pure text from a run's figures, no console."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cyclebench.model import GbenchCost, Result, Run, WisCost

SIMULATED_TITLE = " · simulated (callgrind)"  # after the run's title, over callgrind's table
CONFINED = "bwrap"  # model.Revisions' confinement of revisions built and run in the sandbox
UNCONFINED = "unconfined"  # … and of those that were not: "unconfined: REASON"


def run_title(run_id: int, cpu: int | None, cc_version: str | None) -> str:
    """The title of `run`'s table: ``run #ID · CPU n · compiler`` (the run row's cpu and the
    build's cc_version; each left out when unknown)."""
    return " · ".join([f"run #{run_id}", *([f"CPU {cpu}"] if cpu is not None else []),
                       *([cc_version] if cc_version else [])])


def compare_title(run_id: int, design: str) -> str:
    """The title of a compare's table: its run and how it was measured and judged."""
    return f"run #{run_id} · {design}"


def wis_run_title(run_id: int, mode: str) -> str:
    """The title of `run` on will-it-scale test cases: one task in ``mode`` (threads |
    processes), the figures in interval ticks per operation."""
    return f"run #{run_id} · 1 task, {mode} mode · interval ticks / operations"


def wis_cost_lines(rows: Sequence[Result]) -> list[str]:
    """Under a test-case run's table, per result row: its description, the 1-task throughput and
    where cycles~ come from (the add chain before and after the run, not during it), and a
    second line when they are doubtful (each from the row's ``wis``)."""
    lines = []
    for r in map(Result.of, rows):
        e: WisCost = r.wis or {}
        parts = [f"{r['bench']}: {e.get('description') or '(no description)'}"]
        if e.get("ops_per_s"):
            parts.append(f"{e['ops_per_s']:.4g} ops/s at 1 task")
        if e.get("cycles_source"):
            parts.append(f"cycles~ from the {e['cycles_source']}")
        lines.append(" · ".join(parts))
        if e.get("cycles_doubtful"):
            lines.append(f"  {r['bench']}: {e['cycles_doubtful']}")
    return lines


def plain(x: float) -> str:
    """A counter's value in plain digits, never scientific: 2,977,000,000 items/s, 300 adds, 0.0123."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}" if abs(x) >= 0.001 or x == 0 else f"{x:.6f}"


def gbench_run_title(run_id: int, cpu: int | None, executable: str, version: str | None) -> str:
    """The title of `run --gbench`'s table: the run, CPU, the executable and its library's
    version; its figures are ns per iteration as the library measured them, the median over
    invocations."""
    lib = f"Google Benchmark {version}" if version else "Google Benchmark"
    return " · ".join([f"run #{run_id}", *([f"CPU {cpu}"] if cpu is not None else []), f"{executable} ({lib})",
                       "ns per iteration as the library measured it, median of invocations"])


def gbench_cost_lines(rows: Sequence[Result]) -> list[str]:
    """Under a `run --gbench` table, per row: its invocations and iterations, its threads when
    more than one, each user counter (the library's median over invocations), and where cycles~
    came from or why there is none (each from the row's ``gbench``)."""
    lines = []
    for r in map(Result.of, rows):
        g: GbenchCost = r.gbench or {}
        if not g.get("processes"):  # none ended OK: the row's reason says why
            continue
        its = g.get("iterations") or []
        parts = [f"{r.bench}: {g.get('processes', 0)} invocation(s)"
                 + (f" of {min(its):,}–{max(its):,} iterations" if its else "")]
        if g.get("figure"):
            parts.append(f"ns: the {g['figure']}")
        if (g.get("threads") or 1) > 1:
            parts.append(f"{g['threads']} threads")
        counters = g.get("user_counters") or {}
        if counters:
            parts.append("counters " + ", ".join(f"{k} {plain(v)}" for k, v in counters.items()))
        if g.get("cycles_source"):
            parts.append(f"cycles~ from {g['cycles_source']}")
        elif g.get("no_clock"):
            parts.append(f"no cycles~: {g['no_clock']}")
        lines.append(" · ".join(parts))
    return lines


def damaged_lines(run: Run, rows: Sequence[Result] = ()) -> list[str]:
    """One line for a run whose stored columns are damaged (JSON that does not decode, text in a
    number's column: store/ read them as empty, model.Run.damaged) and one for each such row
    (`show` under its tables, `runs` under its list)."""
    lines = []
    if run.damaged:
        lines.append(f"cyclebench: run #{run.id}: damaged in the database, read as empty: {', '.join(run.damaged)}")
    for r in rows:
        if r.damaged:
            name = r.bench + ("" if r.param is None else f" [{r.param}]") + (f" [{r.variant}]" if r.variant else "")
            lines.append(f"cyclebench: run #{run.id}, {name}: damaged in the database, read as empty: "
                         f"{', '.join(r.damaged)}")
    return lines


def confined(recorded: object) -> bool | None:
    """Whether a run's revisions were built and run in the sandbox, from what it recorded
    (model.Revisions' ``confinement``, the gate's facts): True, False (``unconfined: …``), None
    (not recorded: a run stored before it was, or a value no version wrote)."""
    if recorded == CONFINED:
        return True
    if isinstance(recorded, str) and recorded.split(":", 1)[0].strip() == UNCONFINED:
        return False
    return None


def confinement_text(recorded: object) -> str:
    """What the confinement ``recorded`` says, short (the site's fact beside "confinement", the
    gate's summary): the sandbox; UNCONFINED and why (the reason as recorded: --no-sandbox,
    bwrap missing or refused); or not recorded."""
    got = confined(recorded)
    if got is None:
        return "not recorded (a run stored before it was)"
    if got:
        return "bwrap sandbox (no network; $HOME, the work tree and the database hidden)"
    why = str(recorded).split(":", 1)[1].strip() if ":" in str(recorded) else ""
    # capitals: a reader skimming a page of notes must not take it for the usual confined run
    return f"UNCONFINED, with the user's rights and the network: {why or 'no reason recorded'}"


def confinement_line(recorded: object) -> str:
    """One line under a revision run's table (`show`, and so the site's run page): how its
    revisions' builds and benchmarks ran (confinement_text)."""
    got = confined(recorded)
    if got is None:
        return f"revisions' confinement {confinement_text(recorded)}"
    return f"revisions built and run {'in a ' if got else ''}{confinement_text(recorded)}"


def run_confinement(run: Run) -> object | None:
    """What a run that measured revisions (its environment's ``revisions``: compare --rev,
    bisect, ci) recorded of its confinement, "" when it recorded none; None for any other run."""
    env = run.env if isinstance(run.env, Mapping) else {}
    revisions = env.get("revisions")
    if not isinstance(revisions, Mapping):
        return None
    return revisions.get("confinement", "")
