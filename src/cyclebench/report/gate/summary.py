"""The Markdown summary a reviewer reads (`--summary FILE`, and $GITHUB_STEP_SUMMARY): the
verdict, one line per benchmark slowest first, what Δ% and its CI are, the next step when the
gate failed (docs/ci.md, "Reading a failure"), and the sitting's facts collapsed."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from cyclebench.gate import BOTH, BROKEN, COUNTS, FAIL, Gate, GateRow
from cyclebench.report.gate.common import correction, counts, delta, headline, level, verdict
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


def _legend(g: Gate) -> str:
    """Under the table: what Δ% and its interval are, and each verdict's rule."""
    said = []
    if g.gate != COUNTS:
        said.append(f"base: its per-op figure (as history gives it); Δ%: the median of the pairs' head/base − 1, "
                    f"with its repeated {level(g) or ''} CI (every look of the sequential design at once), and head "
                    "the figure it implies, not head's own (history's); fail: the CI above the threshold, pass: "
                    "below it, undecided: the threshold inside it when the budget ended")
    if g.gate in (COUNTS, BOTH):
        said.append(f"Ir Δ%: instructions per op under callgrind, exact; fail above {100 * g.counts_threshold:g}%")
    return " ".join("; ".join(said).split()) + "."  # one space where no level was stored


BISECT_THRESHOLD, COUNTS_THRESHOLD = 0.02, 0.005  # bisect's and compare --rev's defaults: said only when not these


def _picks(rows: list[GateRow]) -> str:
    names = dict.fromkeys(r.label.split("[", 1)[0] for r in rows)  # -b takes names, not a row's [param]
    return " ".join(f"-b {shlex.quote(n)}" for n in names)


def _next_step(g: Gate) -> list[str]:
    """docs/ci.md's next step for a failed gate: reproduce with `compare --rev`, then find the
    commit with `bisect` at the threshold the benchmark failed (under callgrind, at the counts
    threshold, where only its counts failed it). The gate's -f, --build, --ldflags and -I are not
    in its record: the lines say so, they do not guess."""
    revs = f"--rev {g.base.sha} --rev {g.head.sha} -f FILE"
    span = f"--good {g.base.sha} --bad {g.head.sha} -f FILE"
    # a Google Benchmark target's rows (EXECUTABLE/NAME): compare --gbench of the two builds reproduces them
    targets = {Path(str(t.get("binary") or "")).name: str(t.get("binary")) for t in g.facts.get("gbench") or []}
    target = [r for r in g.ranked() if r.status in (FAIL, BROKEN) and r.label.split("/", 1)[0] in targets]
    timed = [r for r in g.ranked() if r.status == FAIL and r.time_status == FAIL and r not in target]
    counted = [r for r in g.ranked() if r.status == FAIL and r.time_status != FAIL and r.counts_status == FAIL]
    broken = [r for r in g.ranked() if r.status == BROKEN and r not in target]  # compare --rev shows why
    commands = []
    for exe in dict.fromkeys(r.label.split("/", 1)[0] for r in target):
        names = "|".join(re.escape(r.label.split("/", 1)[1]) for r in target if r.label.split("/", 1)[0] == exe)
        commands.append(f"cyclebench compare --gbench BASE/{targets[exe]} HEAD/{targets[exe]} --filter "
                        f"{shlex.quote(f'^({names})$')}")
    if timed or broken:
        commands.append(f"cyclebench compare {revs} {_picks(timed + broken)}")
    for t in dict.fromkeys(r.threshold for r in timed):  # bisect takes one threshold: a line for each
        at = "" if t == BISECT_THRESHOLD else f" --threshold {100 * t:g}"
        commands.append(f"cyclebench bisect {span} {_picks([r for r in timed if r.threshold == t])}{at}")
    if counted:
        ct = "" if g.counts_threshold == COUNTS_THRESHOLD else f" --counts-threshold {100 * g.counts_threshold:g}"
        commands += [f"cyclebench compare {revs} {_picks(counted)} --backend callgrind{ct}",
                     f"cyclebench bisect {span} {_picks(counted)} --backend callgrind{ct}"]
    if not commands:
        return []
    then = ", then find the commit that made it slower" if timed or counted else ""
    where = []
    if timed or counted or broken:
        where.append("with this job's `-f`, `--build`, `--ldflags` and `-I` (or its `cyclebench.toml`'s) in place "
                     "of `-f FILE`")
    if target:
        where.append("with BASE and HEAD checkouts of the two revisions built by the target's commands")
    return [f"**Next step**: reproduce it locally{then} (docs/ci.md), {'; '.join(where)}:",
            "", "```sh", *commands, "```", ""]


def summary(g: Gate) -> str:
    """GitHub-flavoured Markdown of the gate: the headline, the revisions, how their code ran
    (confined or not: report.titles.confinement_text), the table with its legend (the CI's level:
    report.gate.common.level), the next step when it failed, the sitting's facts."""
    has_counts = g.gate in (COUNTS, BOTH)
    unit = next((r.row.unit for r in g.rows if r.row is not None), "")
    ci = f"Δ% [repeated {level(g)} CI]" if level(g) else "Δ% [CI]"
    head = ["benchmark", f"base ({unit})" if unit else "base",
            f"head = base × (1 + Δ%) ({unit})" if unit else "head = base × (1 + Δ%)",
            ci, *(["Ir Δ%"] if has_counts else []), "verdict"]
    lines = [f"### {headline(g)}", "",
             f"Base {g.base.short} ({_cell(g.base.subject)}; {g.base_how}), head {g.head.short} "
             f"({_cell(g.head.subject)}).", "", _confinement(g.facts.get("confinement")), "",
             "| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 2) + ["---"]) + "|"]
    for r in g.ranked():
        lk = r.look
        cells = [f"`{r.label}`", "-" if lk is None else f"{lk.base:,.1f}", "-" if lk is None else f"{lk.head:,.1f}",
                 delta(r), *([counts(r)] if has_counts else []), verdict(r, g.counts_threshold)]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += ["", _legend(g), "", *_next_step(g)]
    f = g.facts
    builds = f.get("builds") or {}
    facts = [f"- host: {f.get('host') or '?'}, CPU: {f.get('cpu_model') or '?'} (measured on CPU {f.get('cpu')})",
             f"- load (1 min) before and after: {_load(f.get('load_before'))} → {_load(f.get('load_after'))}",
             f"- disturbed batches (preempted or migrated): {f.get('disturbed_batches', 0)}",
             *(f"- {side} build {b.get('sha', '')[:12]}: {b.get('seconds', 0):.1f} s"
               + (" (cached)" if b.get("cached") else "") for side, b in builds.items()),
             f"- {correction(g)}; budget {f.get('budget', 0):g} s a benchmark",
             f"- cyclebench run #{g.run_id} ({f.get('when', '')})"]
    lines += ["<details><summary>the sitting</summary>", "", *facts, "", "</details>", ""]
    return "\n".join(lines)
