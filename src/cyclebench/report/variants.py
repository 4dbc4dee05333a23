"""The ranked table of Molnar's alignment thread (docs/references.md#icache-alignment-linux-2015) for
`cyclebench variants`: one row per variant, ranked by the chosen metric,
each figure with its spread over replicates (stddev as %, as perf stat prints it) and its CI,
the lowest replicate (named for what it is, flagged when an outlier), Δ% and the verdict
against the baseline (marked), callgrind's events when simulated, size(1)'s text/data/bss/dec
of the benchmark file's own object, and a flag on a variant that did different work."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from cyclebench.model import BenchEntry, VariantEntry
from cyclebench.report import counts
from cyclebench.report.console import SIM_EVENTS, SIM_PRIORITY, VARIANT_FOLD, fmt
from cyclebench.report.fit import Column, FitTable, Heading
from cyclebench.report.text import safe_text

SIZE_KEYS = ("text", "data", "bss", "dec")


def sort_keys(d: BenchEntry) -> list[str]:
    """What a table of this benchmark can be sorted by: the time metric, size(1)'s columns
    and body bytes, and the callgrind events when simulated."""
    keys = ["cycles", *SIZE_KEYS, "body"]
    if any(v.get("simulated") for v in d["variants"]):
        keys += list(SIM_EVENTS)
    return keys + _counter_names(d)


def _counter_names(d: BenchEntry) -> list[str]:
    """The -e events measured for this benchmark, in the order given."""
    names: list[str] = []
    for v in d["variants"]:
        for n in v.get("counters") or {}:
            if n not in names:
                names.append(n)
    return names


def _figure(v: VariantEntry) -> tuple[float | None, float | None, float | None]:
    """A variant's per-op figure and its 95% CI: its stored result's (``per_op``), the one show
    and history give; a run stored before it was keeps the invocations' mean and t CI."""
    got = v.get("per_op")
    if got:
        return got["value"], got["ci_low"], got["ci_high"]
    return v.get("mean"), v.get("ci_low"), v.get("ci_high")


def _metric(v: VariantEntry, key: str) -> float | None:
    if key == "cycles":
        return _figure(v)[0] if not v.get("emulated") else None
    if key in SIZE_KEYS:
        size = v.get("size")
        return size.get(key) if size else None
    if key == "body":
        return v.get("body_bytes")
    if key in (v.get("counters") or {}):
        return v["counters"][key]
    # a simulated count below zero ranks as the 0 it is shown as (report.counts): Bcm of −0.2 for
    # both builds of chain/add200 is no order between them
    return counts.clipped((v.get("simulated") or {}).get(key))


def _ties(ranked: Sequence[VariantEntry], sort: str, shown: Callable[[VariantEntry], str]) -> str | None:
    """The variants that rank alike on ``sort`` (the same value, as ranked: a stable sort keeps them
    in the order they were given), with the cell each shows: ``-O1, -O2 tie on Bcm (0)``; None
    when no two do."""
    groups: dict[float, list[VariantEntry]] = {}
    for v in ranked:
        if (x := _metric(v, sort)) is not None:
            groups.setdefault(x, []).append(v)
    tied = [vs for vs in groups.values() if len(vs) > 1]
    if not tied:
        return None
    return "; ".join(f"{', '.join(v['label'] for v in vs)} tie on {sort} "
                     f"({' = '.join(dict.fromkeys(shown(v) for v in vs))})" for vs in tied) \
        + ": tied variants keep the order they were given in"


def variants_ranked(d: BenchEntry, sort: str = "cycles", run_id: int | None = None, wide: bool = False,
                    ) -> FitTable:
    """One benchmark's variants (an entry of experiments.variants.summary) ranked by ``sort``
    (sort_keys; a variant without the metric goes last). Raises ValueError for another key."""
    if sort not in sort_keys(d):
        raise ValueError(f"--sort {sort}: this table has {', '.join(sort_keys(d))}")
    name = d["bench"] + ("" if d["param"] is None else f" [{d['param']}]")
    simulated = any(v.get("simulated") for v in d["variants"])
    events = list(SIM_EVENTS) if simulated else []
    counted = _counter_names(d)  # -e events per op: asked for, so never dropped

    def rank(key: str, otherwise: int) -> int:  # the sort key is the answer: never dropped
        return 0 if key == sort else otherwise

    # Two estimators, named in the headers. "per op" (95% CI) is the variant's stored result,
    # the figure history and show give it (the invocations' mean beside it read -O2 198.3 where
    # history read 199.5); "± sd" is its invocations' spread, as perf stat prints it. "Δ% median":
    # the median of the per-round differences B − A over A's median (stats.ab.paired) — the
    # estimate the verdict's bootstrap CI and signed-rank test are about; pairing by round cancels
    # the host's drift, which a difference of the two means keeps, and the median ignores a round the host slowed. A Δ%
    # from the means could even disagree in sign with the verdict beside it, so Δ% stays the
    # paired median and need not equal the difference of the means (99.41 vs 100.1: −0.09%).
    # "lowest inv." is the lowest invocation's own estimate, not a best the build reaches: shown as
    # "best", 182.6 cycles~ for 200 dependent adds (the others 198.1–201.9) read as a floor below
    # the possible; it is as noisy as one invocation (± sd), and flagged when an outlier.
    # every variant emulated (qemu-user: correctness only): nothing was timed, so no timing column,
    # no "ranked by cycles" and no caption about means and Wilcoxon
    timed = any(not v.get("emulated") for v in d["variants"])
    cols = [
        Column("variant", justify="left", fold=VARIANT_FOLD),
        *([Column(f"per op ({d['unit'] or '-'})"), Column("± sd"), Column("95% CI", priority=4),
           Column("lowest inv.", priority=3), Column("Δ% median")] if timed else []),
        Column("verdict", justify="left"),
        # Ir is the cross-check that the variants did the same work; the other events in
        # the console's order, after the sizes
        *[Column(e, priority=rank(e, 0 if e == "Ir" else 5 + SIM_PRIORITY[e])) for e in events],
        *[Column(f"{e}/op") for e in counted],
        *[Column(k, priority=rank(k, {"dec": 1, "text": 2}.get(k, 5))) for k in SIZE_KEYS],
        Column("body B", priority=rank("body", 6)),
        Column("notes", justify="left", notes=True),
    ]
    by = f"per op ({d['unit']})" if sort == "cycles" and d.get("unit") else sort  # the column it ranks on
    how = f"ranked by {by}" if timed else "emulated by qemu-user: verified, not timed"
    table = FitTable(cols, title=f"{name} · {how}" + (f" · run #{run_id}" if run_id else ""), wide=wide,
                     caption=("per op: the variant's result over all its invocations, with its 95% CI (as show "
                              "and history give it); ± sd: the invocations' stddev (as perf stat); lowest inv.: "
                              "the lowest invocation's own estimate, as noisy as any one (± sd), not a floor; "
                              "Δ% median: median of the per-round differences vs "
                              "the baseline (*) ÷ its median (not the difference of the means), with the verdict: "
                              "paired by round, Wilcoxon + bootstrap CI, Holm; text/data/bss/dec: size(1) of the "
                              "benchmark file's own object") if timed else
                     "text/data/bss/dec: size(1) of the benchmark file's own object")
    ranked = sorted(d["variants"], key=lambda v: (_metric(v, sort) is None, _metric(v, sort) or 0.0))

    def shown(v: VariantEntry) -> str:  # the sort key's cell, as the row prints it
        if sort in events:
            return counts.cell((v.get("simulated") or {}).get(sort), fmt)
        return fmt(_metric(v, sort))

    if (ties := _ties(ranked, sort, shown)) is not None:
        table.caption = f"{table.caption}\n{ties}"
    from cyclebench.stats.repetitions import low_outlier  # not at import: show of any run stays light

    for v in ranked:
        label = safe_text(("* " if v.get("baseline") else "") + v["label"], multiline=False)
        size = v.get("size") or {}
        simulated = v.get("simulated") or {}
        tail = [*[counts.cell(simulated.get(e), fmt) for e in events],  # never a count below zero, as run's table
                *[fmt((v.get("counters") or {}).get(e)) for e in counted],
                *[str(size[k]) if size.get(k) is not None else "-" for k in SIZE_KEYS],
                str(v.get("body_bytes") or "-")]
        notes = [n for n in (v.get("different_work"), v.get("note")) if n]
        notes += [counts.clipped_note(e, simulated[e]) for e in counts.below(simulated, events)]
        if (low := low_outlier(v.get("per_invocation") or [])) is not None:
            notes.append(f"lowest inv. an outlier: {100 * low:.1f}% below the median invocation")
        if v["emulated"]:
            verdict = "verified" if v["status"] == "ok" else str(v["status"])
            why = [v["reason"]] if v.get("reason") else []
            table.add_row(label, *(["emulated", "", "", "", ""] if timed else []), verdict, *tail,
                          "; ".join(["qemu-user: correctness only, no timing", *why, *notes] if timed else
                                    [*why, *notes]))
            continue
        value, low, high = _figure(v)
        if v["status"] != "ok" or value is None:
            table.add_row(label, "-", "-", "-", "-", "-", str(v["status"]), *tail,
                          "; ".join([str(v.get("reason") or ""), *notes]),
                          style="yellow" if v["status"] == "skipped" else "red")
            continue
        c = v.get("comparison")
        sd = v.get("stddev_pct")
        ci = f"[{fmt(low)}, {fmt(high)}]" if low is not None and high is not None else "-"
        delta = f"{100 * c['rel']:+.2f}%" if c else ""
        verdict = c["verdict"] if c else ("(baseline)" if v.get("baseline") else "")
        table.add_row(label, fmt(value), f"{sd:.2f}%" if sd is not None and math.isfinite(sd) else "-", ci,
                      fmt(v.get("best")), delta, verdict, *tail, "; ".join(notes),
                      style="bold" if v is ranked[0] else "")
    return table


def print_variants(data: Sequence[BenchEntry], console: Console, run_id: int | None = None,
                   disasm: bool = False, wide: bool = False, sort: str = "cycles") -> None:
    """One ranked table per benchmark (variants_ranked: the ranked table of Molnar's alignment
    study, docs/references.md#icache-alignment-linux-2015; callgrind's events in it when
    simulated); emulated variants show verification only. With disasm: instruction classes per
    variant and the diff of each against the first."""
    for d in data:
        name = d["bench"] + ("" if d["param"] is None else f" [{d['param']}]")
        console.print(variants_ranked(d, sort, run_id, wide))
        if disasm:
            # the instruction classes: every count is the answer; a variant's flags and the calls
            # its body makes (__aarch64_cas4_acq_rel) fold at their spaces and '_', never cut
            keys = ["total", "atomic", "fence", "rep-string", "simd", "call"]
            # "call insns" counts the body's call instructions, "functions called" names their targets
            classes = FitTable([Column("variant", justify="left", fold=VARIANT_FOLD),
                                *[Column({"call": "call insns"}.get(k, k)) for k in keys],
                                Column("functions called", justify="left", fold=12)],
                               title=f"{name}: instructions in the body", wide=wide)
            for v in d["variants"]:
                cl = v.get("classes") or {}
                classes.add_row(v["label"], *[str(cl.get(k, 0)) for k in keys], ", ".join(v.get("calls") or []))
            console.print(classes)
            first = d["variants"][0]
            for v in d["variants"]:
                console.print(Heading(f"{name} · {v['label']}"))
                console.print(safe_text("\n".join(v.get("disasm") or [])))
            for v in d["variants"][1:]:
                import difflib

                lines = list(difflib.unified_diff(first.get("disasm") or [], v.get("disasm") or [], first["label"],
                                                  v["label"], lineterm="", n=1))
                console.print(Heading(f"diff {first['label']} → {v['label']}"))
                console.print(safe_text("\n".join(lines) or "(identical)"))


def _cells(*values: Any) -> list[Text]:
    """Cells for a plain rich table: every value literal (see report.text)."""
    return [safe_text(v) for v in values]
