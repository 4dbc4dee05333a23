"""What the lab fixture's stored runs print can be believed (an audit of docs/gallery.md): no count
below zero, and a table ranked by a count ranks on what it shows and says which variants tie; no
interval of a time, a size or a count reaching below zero, the repetition that spread it named;
a repetition's count printed as a count and a spread of equal values called constant; a speed-up
with its range, and one above its ideal flagged against that range. Each rule is checked over
every stored run of its kind, against the figures the fixture stores, not against fixed strings.

Run with ``python -m pytest`` (tests/labnumbers is imported as ``tests.labnumbers``, as in
test_lab_numbers.py).
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console
from scipy import stats as sps
from tests import labnumbers

from cyclebench.model import STAT
from cyclebench.report.console import SIM_EVENTS
from cyclebench.report.variants import sort_keys, variants_ranked
from cyclebench.stats import repetitions

WIDE = labnumbers.COLUMNS  # one line a row, every column, each row's notes beside it


@pytest.fixture(scope="module")
def lab() -> Iterator[labnumbers.Lab]:
    with labnumbers.gallery.lab_copy() as db:
        yield labnumbers.Lab.of(db)


def _printed(lab: labnumbers.Lab, *argv: str) -> str:
    said = labnumbers.gallery.invoke(list(argv), lab.db, WIDE)
    assert said.error is None and said.exit_code == 0, said.error or said.output
    return said.output


def _summaries(db: Path, key: str) -> dict[int, Any]:
    con = sqlite3.connect(db)
    try:
        got = {int(i): json.loads(s or "null") for i, s in con.execute("select id, summary from runs")}
    finally:
        con.close()
    return {i: s[key] for i, s in got.items() if isinstance(s, dict) and s.get(key)}


def _runs_of(lab: labnumbers.Lab, test: Any) -> list[int]:
    return sorted({r.run_id for r in lab.stored.results if test(r) and r.run_id is not None})


# ---------------------------------------------------------------- callgrind's counts per op
def test_no_simulated_count_is_shown_below_zero_in_any_table(lab: labnumbers.Lab) -> None:
    """`show` of every run with callgrind's events (run's table, variants' ranked table): each
    event's cell is a count ≥ 0, and a count whose stored difference went below zero is shown as 0
    with a note that gives it (as `run` always did)."""
    stored_below = 0
    for rid in [*_runs_of(lab, lambda r: r.simulated), *_summaries(lab.db, "variants")]:
        for t in labnumbers.console_tables(_printed(lab, "show", str(rid), "--wide")):
            events = [h for h in t.headers if h.removesuffix("/op") in SIM_EVENTS]
            for row in t.rows:
                for h in events:
                    num = labnumbers.number(row[h])
                    assert num is None or num.value >= 0, f"show {rid}: {h} {row[h]} below zero"
                    if num is not None and num.text == "0":
                        stored_below += 1
                        assert f"{h} shown as 0: the difference of the two runs' counts gave -" in row["notes"], \
                            f"show {rid}: {h} shown as 0 without saying why: {row}"
    assert stored_below  # the fixture has such counts (Bcm −0.2 at runs 4 and 15): the rule was exercised


def test_a_table_ranked_by_a_count_ranks_on_what_it_shows_and_says_its_ties(lab: labnumbers.Lab) -> None:
    """Every stored variants benchmark with simulated events, ranked by each event: the rows in
    the order of the cells they show (a count below zero ranks as its 0), and every value two
    variants share named as a tie under the table."""
    checked = 0
    for rid, entries in _summaries(lab.db, "variants").items():
        for d in entries:
            keys = [k for k in sort_keys(d) if k in SIM_EVENTS]
            for key in keys:
                console = Console(width=WIDE, record=True)
                console.print(variants_ranked(d, key, rid, wide=True))
                text = console.export_text()
                [t] = [t for t in labnumbers.console_tables(text) if "variant" in t.headers]
                shown = [labnumbers.number(row[key]) for row in t.rows]
                values = [x.value for x in shown if x is not None]
                assert values == sorted(values), f"run {rid} ranked by {key}: {[r[key] for r in t.rows]}"
                for value in {v for v in values if values.count(v) > 1}:
                    tied = [r["variant"].removeprefix("* ") for r, x in zip(t.rows, shown, strict=True)
                            if x is not None and x.value == value]
                    assert re.search(rf"{re.escape(', '.join(tied))} tie on {key} \(", text), \
                        f"run {rid} ranked by {key}: {tied} tie, unsaid:\n{text}"
                checked += 1
    assert checked


# ---------------------------------------------------------------- stat's repetitions
def _stat_metrics(lab: labnumbers.Lab) -> Iterator[tuple[int, Any, dict[str, str]]]:
    """(run, stored row, its printed row) of every metric of every stored stat run."""
    for rid in _runs_of(lab, lambda r: r.kind == STAT):
        [t] = [t for t in labnumbers.console_tables(_printed(lab, "show", str(rid))) if t.headers[:2] == ["metric",
                                                                                                          "mean"]]
        for row in t.rows:
            r = lab.stored.find(rid, lambda x, m=row["metric"]: x.kind == STAT and x.bench.endswith("/" + m))
            assert r is not None, row
            yield rid, r, row


def _t_low(values: list[float]) -> float:
    x = np.asarray(values, dtype=float)
    return float(x.mean() - sps.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))


def test_no_interval_of_a_repetitions_mean_reaches_below_zero_and_its_spread_is_named(
        lab: labnumbers.Lab) -> None:
    """Every stat metric whose 95% t interval of the mean would start below 0 (a time, a size, a
    count: none can): its row says the interval clipped at 0, its printed low end 0, and names the
    repetition farthest off the others' median (relative to it) with the value it read; every
    other row says nothing of clipping."""
    clipped = 0
    for rid, r, row in _stat_metrics(lab):
        values = [v for v in (r.stat or {}).get("values") or [] if v is not None]
        if (r.stat or {}).get("derived") or len(values) < 2 or min(values) == max(values):
            continue
        note = row.get("notes", "")
        if _t_low(values) >= 0:
            assert "clipped" not in note, (rid, row)
            continue
        clipped += 1
        m = re.search(r"95% CI \[([^,]+), [^\]]+\]: its low end (\S+) clipped at 0 .*repetition (\d+) read ([\d.,]*\d)",
                      note)
        assert m, f"show {rid}: {row['metric']}: an interval reaching {_t_low(values):.4g} unsaid: {row}"
        low, said_low, rep, read = m.groups()
        assert labnumbers.number(low).value == 0  # type: ignore[union-attr]
        assert labnumbers.number(said_low).near(_t_low(values))  # type: ignore[union-attr]
        far = [abs(v - float(np.median(values[:k] + values[k + 1:]))) / float(np.median(values[:k] + values[k + 1:]))
               for k, v in enumerate(values)]
        k = int(np.argmax(far))
        assert int(rep) == k + 1 and labnumbers.number(read).near(values[k]), (rid, row)  # type: ignore[union-attr]
    assert clipped  # wall, user and task-clock of the fixture's `stat -r 2 -- true`


def test_a_stored_stat_interval_starts_at_zero_at_the_lowest(lab: labnumbers.Lab) -> None:
    """What `stat` stores for its rows (result_rows, from the fixture's own repetitions): no CI
    below 0, the high end the t interval's."""
    for rid in _runs_of(lab, lambda r: r.kind == STAT):
        reps = lab.stored.summary(rid)["stat"]["repetitions"]
        metrics = [repetitions.Metric(m["metric"], r.unit or "", list(m["values"]), status="derived" if m["derived"]
                                      else "ok") for r in lab.stored.results if r.run_id == rid and (m := r.stat)]
        for row in repetitions.result_rows(["true"], "timing", reps, metrics):
            if row.ci_low is not None:
                assert row.ci_low >= 0 and row.ci_high is not None and row.ci_high >= row.per_op, row


def test_counts_print_as_counts_and_equal_values_as_constant(lab: labnumbers.Lab) -> None:
    """A stat row of a count (unit count, or KiB of max RSS) prints its min and max — one
    repetition's own count each — as whole numbers; a metric every repetition read alike says
    constant, not ± 0.00% or -."""
    seen = {"count": 0, "constant": 0}
    for rid, r, row in _stat_metrics(lab):
        values = [v for v in (r.stat or {}).get("values") or [] if v is not None]
        if r.unit in ("count", "KiB"):
            seen["count"] += 1
            for h in ("min", "max"):
                assert re.fullmatch(r"\d[\d,]*", row[h]), f"show {rid}: {row['metric']} {h} {row[h]!r}: not a count"
        if len(values) >= 2 and min(values) == max(values) and not (r.stat or {}).get("derived"):
            seen["constant"] += 1
            assert row["± stddev"] == "constant", f"show {rid}: {row}"
    assert all(seen.values()), seen


# ---------------------------------------------------------------- scale's speed-up
def _scale_rows(lab: labnumbers.Lab) -> Iterator[tuple[int, str, str, dict[str, str], dict[str, Any], dict[str, Any]]]:
    """(run, bench, mode, printed row, its stored point, the 1-task point) of every scale table."""
    for rid in _runs_of(lab, lambda r: r.scale is not None and "intervals_measured" in (r.scale or {})):
        for t in labnumbers.console_tables(_printed(lab, "show", str(rid), "--wide")):
            m = re.match(r"^(.*) \((\w+)\)$", t.title)
            if "total ops/s" not in t.headers or not m:
                continue
            bench, mode = m.groups()
            points = {r.param: dict(r.scale or {}) for r in lab.stored.results
                      if r.run_id == rid and r.bench == bench and (r.variant or "").split(":")[0] == mode}
            for row in t.rows:
                yield rid, bench, mode, row, points[int(row["tasks"])], points[1]


def test_a_speed_up_has_the_range_of_its_two_task_counts(lab: labnumbers.Lab) -> None:
    """Each speed-up but 1 task's own: its range is N tasks' slowest interval over 1 task's fastest
    to N's fastest over 1's slowest (as stored), and holds the speed-up; '-' where either count
    kept one interval (no spread)."""
    ranged = 0
    for rid, bench, mode, row, p, base in _scale_rows(lab):
        where = f"show {rid}: {bench} ({mode}) {row['tasks']} tasks"
        spread = min(p["intervals_kept"], base["intervals_kept"]) >= 2
        if p["tasks"] == 1 or not spread:
            assert row["range"] == "-", where
            continue
        ranged += 1
        lo, _, hi = row["range"].partition("–")
        want = (p["total_min"] / base["total_max"], p["total_max"] / base["total_min"])
        assert labnumbers.number(lo).near(want[0]) and labnumbers.number(hi).near(want[1]), (where, row, want)  # type: ignore[union-attr]
        speedup = labnumbers.number(row["speed-up"])
        assert speedup is not None and float(lo) <= speedup.value <= float(hi), (where, row)
    assert ranged


def test_a_speed_up_above_its_ideal_is_flagged_against_its_range(lab: labnumbers.Lab) -> None:
    """A speed-up printed above its task count (on as many CPUs) is flagged superlinear, within
    its range when the range holds the ideal, beyond it when the whole range is above, and as
    having no spread to judge by without a range; no other row is."""
    flagged = 0
    for rid, bench, mode, row, p, _ in _scale_rows(lab):
        where = f"show {rid}: {bench} ({mode}) {row['tasks']} tasks"
        speedup = labnumbers.number(row["speed-up"])
        ideal = min(p["tasks"], p["cpus_used"]) if p.get("oversubscribed") and p.get("cpus_used") else p["tasks"]
        above = speedup is not None and speedup.value > ideal
        note = row.get("notes", "")
        assert ("superlinear" in note) == above, (where, row)
        if not above:
            continue
        flagged += 1
        assert note.startswith(f"superlinear: {row['speed-up']} above"), (where, note)
        if row["range"] == "-":
            assert "no spread to judge it by" in note, (where, note)
        else:
            lo = float(row["range"].partition("–")[0])
            assert ("beyond its range" in note) == (lo > ideal) and ("within its range" in note) == (lo <= ideal), \
                (where, note)
            assert f"range {row['range']}×" in note, (where, note)  # the note's range is the cell's, digit for digit
    assert flagged  # wis/getppid's threads at 2.17× on 2 tasks, and the 0.05 s chain sweep's 2.01×, 2.02×


# ---------------------------------------------------------------- one precision rule per quantity
_OFFSET = re.compile(r"^[+-]?(\d[\d,]*(?:\.\d+)?)$")


def test_every_half_width_below_ten_has_two_significant_digits(lab: labnumbers.Lab) -> None:
    """A ±CI95 cell's half-width or ends (console.fmt_ci's two significant digits below 10) keep
    both digits: '2.0', not '2' for 1.977 (show 5's and history's jemalloc cycles~), '-1.4/+5.0',
    not '-1.4/+5' (show 5's glibc per op)."""
    bad = []
    argvs = [[*a, "--wide"] for a in lab.entries if (a[0] == "show" and a[1].isdigit()) or a[0] == "history"]
    for argv in argvs:
        said = labnumbers.gallery.invoke(argv, lab.db, WIDE)
        for t in labnumbers.console_tables(said.output):
            for row in t.rows:
                for h in (h for h in t.headers if h.startswith("±CI95")):
                    for part in row[h].split("/"):
                        m = _OFFSET.match(part.strip())
                        if m and 0 < float(m.group(1).replace(",", "")) < 10:
                            digits = m.group(1).replace(".", "").lstrip("0")
                            if len(digits) < 2:
                                bad.append(f"{' '.join(argv)}: {h} {row[h]!r}")
    assert not bad, "\n".join(sorted(set(bad)))
