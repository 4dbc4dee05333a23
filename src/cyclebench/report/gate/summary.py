"""The Markdown summary a reviewer reads (`--summary FILE`, and $GITHUB_STEP_SUMMARY): the
verdict, one line per benchmark slowest first, and the sitting's facts collapsed."""

from __future__ import annotations

from cyclebench.gate import BOTH, COUNTS, Gate
from cyclebench.report.gate.common import counts, delta, headline, verdict
from cyclebench.report.titles import confined, confinement_text


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _load(x: object) -> str:
    return f"{x:.2f}" if isinstance(x, (int, float)) else "?"


def _confinement(recorded: object) -> str:
    """How base and head were built and run, above the table (not in the collapsed facts): a
    reviewer reads that the pull request's code ran unconfined without opening anything."""
    text, got = _cell(confinement_text(recorded)), confined(recorded)
    if got is None:
        return f"Base and head: confinement {text}."
    if got:
        return f"Base and head built and run in a {text}."
    return f"**Base and head built and run unconfined**, {text.removeprefix('UNCONFINED, ')}."


def summary(g: Gate) -> str:
    """GitHub-flavoured Markdown of the gate: the headline, the revisions, how their code ran
    (confined or not: report.titles.confinement_text), the table, the sitting's facts."""
    has_counts = g.gate in (COUNTS, BOTH)
    unit = next((r.row.unit for r in g.rows if r.row is not None), "")
    head = ["benchmark", f"base ({unit})" if unit else "base", f"head ({unit})" if unit else "head", "Δ% [CI]",
            *(["Ir Δ%"] if has_counts else []), "verdict"]
    lines = [f"### {headline(g)}", "",
             f"Base {g.base.short} ({_cell(g.base.subject)}; {g.base_how}), head {g.head.short} "
             f"({_cell(g.head.subject)}).", "", _confinement(g.facts.get("confinement")), "",
             "| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 2) + ["---"]) + "|"]
    for r in g.ranked():
        lk = r.look
        cells = [f"`{r.label}`", "-" if lk is None else f"{lk.base:,.1f}", "-" if lk is None else f"{lk.head:,.1f}",
                 delta(r), *([counts(r)] if has_counts else []), verdict(r)]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    f = g.facts
    builds = f.get("builds") or {}
    facts = [f"- host: {f.get('host') or '?'}, CPU: {f.get('cpu_model') or '?'} (measured on CPU {f.get('cpu')})",
             f"- load (1 min) before and after: {_load(f.get('load_before'))} → {_load(f.get('load_after'))}",
             f"- disturbed batches (preempted or migrated): {f.get('disturbed_batches', 0)}",
             *(f"- {side} build {b.get('sha', '')[:12]}: {b.get('seconds', 0):.1f} s"
               + (" (cached)" if b.get("cached") else "") for side, b in builds.items()),
             f"- each verdict at α {f.get('alpha', 0):g} for the gate ({f.get('correction', '')}), "
             f"budget {f.get('budget', 0):g} s a benchmark; a benchmark fails when the lower bound of Δ%'s "
             "repeated CI is above its threshold" + (f"; counts fail above {100 * g.counts_threshold:g}% of Ir, exact"
                                                    if has_counts else ""),
             f"- cyclebench run #{g.run_id} ({f.get('when', '')})"]
    lines += ["", "<details><summary>the sitting</summary>", "", *facts, "", "</details>", ""]
    return "\n".join(lines)
