"""The numbers every reader prints of the lab fixture (tests/data/lab), read back and held to what is
stored: a registry of readers (the command lines that print a stored result or comparison, and how
to read what they print) and of tables (each table a reader prints, known by its headers, and which
stored figure each of its columns is), and the invariants over what they read:

* one figure per stored thing: each printed number is the stored figure it stands for, within the
  rounding of the digits printed, and every reader that prints it agrees with every other;
* one interval: a printed CI is the stored one (both ends, within the rounding), and it holds its
  estimate;
* Δ agrees with its sides where a table shows them: |Δ − (B − A)| within the rounding of the three
  cells, never of the other sign, and Δ% is Δ ÷ A;
* counts (samples, rounds, processes, calls, pairs, a simulated count per op…) are never below zero.

A new reader joins by one ``Reader`` in ``READERS``; a new table by one ``TableKind`` in ``TABLES``
(a table no kind reads is itself a breach, so a new table cannot slip by unread). The readers are
run with the table at a width where nothing folds (``COLUMNS`` below, ``--wide``): the figures do
not depend on the width, and tests/commands/test_lab_readers.py holds the layout at 60, 80 and 200.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import gallery

from cyclebench.model import Result
from cyclebench.store import reads, rows
from cyclebench.ui.options import EXPORT_FORMATS

COLUMNS = 1000  # wide enough that no name folds and no header wraps: one line a row
EPS = 1e-9  # relative: a full-precision number (csv, json) against the stored float

Key = tuple[Any, ...]


# ---------------------------------------------------------------- numbers as printed
@dataclass(frozen=True)
class Num:
    """A number as a cell prints it: ``value`` and ``slack``, half a unit of its last digit (the
    number it stands for lies within value ± slack); ``claim`` for the cells that are no digits:
    ``≈0`` (a net figure whose CI holds zero) or ``<0`` (one wholly below zero)."""

    text: str
    value: float
    slack: float
    claim: str | None = None

    def near(self, x: float, more: float = 0.0) -> bool:
        return abs(self.value - x) <= self.slack + more + EPS * max(1.0, abs(x))


_NUM = re.compile(r"^([+-]?)(\d[\d,]*)(?:\.(\d*))?(?:e([+-]?\d+))?([kMG%×]?)$")
_SCALE = {"k": 1e3, "M": 1e6, "G": 1e9}


def number(text: str) -> Num | None:
    """The number ``text`` prints (``140.5``, ``+200.0``, ``1,080``, ``17.7M``, ``+3.94%``, ``1e-05``,
    ``<0.001``, ``≈0``, ``<0``); None for a cell that holds none (``-``, ``exact``, words)."""
    t = text.strip().replace("−", "-")
    if t in ("≈0", "<0"):
        return Num(t, 0.0, 0.0, claim=t)
    if t.lstrip("+-") == "<0.001":  # a half-width, or a CI's end beside its estimate, below 0.001
        return Num(t, -0.0005 if t.startswith("-") else 0.0005, 0.0005)
    m = _NUM.match(t)
    if not m:
        return None
    sign, ints, decimals, exp, suffix = m.groups()
    digits = len(decimals or "")
    scale = _SCALE.get(suffix, 1.0)
    e = int(exp or 0)
    value = float(f"{sign}{ints.replace(',', '')}.{decimals or '0'}e{e}") * scale
    return Num(t, value, 0.5 * 10.0 ** (e - digits) * scale)


def exact(x: Any) -> Num | None:
    """A number a data format (csv, json) gives in full precision: exact, within EPS."""
    if isinstance(x, str):
        if not x.strip():
            return None
        try:
            x = float(x)
        except ValueError:
            return None
    if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x):
        return None
    return Num(repr(x), float(x), 0.0)


def given(x: Any) -> Num:
    """A number a data format must give (a gbench entry's time, a csv's replicate): exact()."""
    got = exact(x)
    if got is None:
        raise ValueError(f"not a number: {x!r}")
    return got


@dataclass(frozen=True)
class Interval:
    """A printed CI: ``offsets`` — its ends as distances from the estimate (the ±CI95 columns:
    ``0.21`` is −0.21/+0.21, ``-0.18/+0.25`` the two) — or its ends themselves (``[+198.5, +200.4]``)."""

    text: str
    low: Num
    high: Num
    offsets: bool


def _two_digits(n: Num | None) -> Num | None:
    """Both ends of a lopsided CI are given to two significant digits (console._offset): +1,200
    stands for 1,150–1,250, not 1,199.5–1,200.5."""
    if n is None or abs(n.value) < 100:
        return n
    return Num(n.text, n.value, max(n.slack, 0.5 * 10 ** (math.floor(math.log10(abs(n.value))) - 1)))


def offsets(text: str) -> Interval | None:
    """A ±CI95 cell: one half-width or both signed ends (``-x/+y``); None for ``-``."""
    t = text.strip()
    if "/" in t:
        lo, _, hi = t.partition("/")
        a, b = number(lo), number(hi)
        return Interval(t, _two_digits(a), _two_digits(b), True) if a is not None and b is not None else None
    h = number(t)
    if h is None:
        return None
    return Interval(t, Num(h.text, -h.value, h.slack), h, True)


_ENDS = re.compile(r"\[([^,\]]+),\s*([^\]]+)\]")


def ends(text: str) -> Interval | None:
    """A CI printed by its ends, ``[lo, hi]`` (its numbers as :func:`number` reads them)."""
    m = _ENDS.search(text)
    if not m:
        return None
    a, b = number(m.group(1)), number(m.group(2))
    return Interval(m.group(0), a, b, False) if a is not None and b is not None else None


# ---------------------------------------------------------------- what a reader printed
@dataclass(frozen=True)
class Printed:
    """One figure a reader printed: of ``key`` (``("result", run, bench, param, variant)``,
    ``("comparison", source, a, b, param)``, ``("gate", run, bench)``, ``("variant", run, bench,
    label)``), the stored figure ``what`` it stands for (``per_op``, ``cycles``, ``A``, ``B``,
    ``A+Δ``, ``delta``, ``rel``, ``count:n_samples``, ``rep:ns:0``…), the number and its CI as
    printed. ``sides``: a table showing A, B and Δ together, which rule 1 holds to Δ = B − A."""

    reader: str
    key: Key
    what: str
    num: Num
    interval: Interval | None = None
    sides: bool = False


@dataclass
class Table:
    """A table as printed: its headers, one dict a row (header → cell; a repeated header, such
    as ±CI95, keeps its cells in order under ``header#2``…), the name printed on a line above a
    row (a narrow table's), and the lines above it (its title)."""

    headers: list[str]
    rows: list[dict[str, str]] = field(default_factory=list)
    title: str = ""


def _keyed(headers: Sequence[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for h in headers:
        seen[h] = seen.get(h, 0) + 1
        out.append(h if seen[h] == 1 else f"{h}#{seen[h]}")
    return out


_GAP = re.compile(r"\S+(?: \S+)*")  # a cell: words one space apart (columns are two or more apart)


def _spans(line: str) -> list[tuple[str, int, int]]:
    return [(m.group(0), m.start(), m.end()) for m in _GAP.finditer(line)]


def _aligned(line: str, heads: list[tuple[str, int, int]]) -> dict[int, str] | None:
    """The cells of a row under ``heads`` (header, start, end), by alignment: a cell ends where a
    right-aligned header ends or starts where a left-aligned one starts, and crosses no other
    header; None when a piece of the line is under no header (a caption, prose)."""
    cells: dict[int, str] = {}
    for text, a, b in _spans(line):
        for j, (_, s, e) in enumerate(heads):
            if (b == e or a == s) and not any(k != j and a < e2 and s2 < b for k, (_, s2, e2) in enumerate(heads)):
                cells[j] = text
                break
        else:
            return None
    return cells


def console_tables(text: str) -> list[Table]:
    """Every table of a console's output (report.fit's layout: a header line, a rule of ─, rows
    aligned under it), read by the headers' positions."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if i == 0 or not line.strip() or set(line.strip()) != {"─"}:
            continue
        heads = _spans(lines[i - 1])
        table = Table(_keyed([h for h, _, _ in heads]), title=lines[i - 2].strip() if i >= 2 else "")
        for row in lines[i + 1:]:
            if not row.strip():
                continue  # the blank line between groups
            cells = _aligned(row, heads)
            if cells is None:
                break
            table.rows.append({table.headers[j]: cells.get(j, "") for j in range(len(heads))})
        out.append(table)
    return out


def _unescape(cell: str) -> str:
    return re.sub(r"\\(.)", r"\1", cell.strip())


def markdown_tables(text: str) -> list[Table]:
    """The pipe table of a markdown export (its cells unescaped), the bold title above it."""
    lines = text.splitlines()
    title = next((x.strip("*") for x in lines if x.startswith("**")), "")
    body = [x for x in lines if x.startswith("|")]
    if len(body) < 2:
        return []

    def cells(line: str) -> list[str]:
        return [_unescape(c) for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]

    table = Table(_keyed(cells(body[0])), title=title)
    for line in body[2:]:
        table.rows.append(dict(zip(table.headers, cells(line), strict=True)))
    return [table]


def text_tables(text: str) -> list[Table]:
    """The boxed table of the text export: its header (words wrapped over lines joined back), rows
    whose borders stand under the header's, a name printed on a line of its own above its row
    (``name``), a name folded onto the next line joined back, notes under a row skipped."""
    lines = text.splitlines()
    top = next((i for i, x in enumerate(lines) if x.startswith("+-")), None)
    if top is None:
        return []
    rule = next(i for i in range(top + 1, len(lines)) if lines[i].startswith("|-"))
    bars = [i for i, ch in enumerate(lines[top + 1]) if ch == "|"]

    def cells(line: str) -> list[str]:
        return [line[a + 1:b].strip() for a, b in itertools.pairwise(bars)]

    parts = [cells(x) for x in lines[top + 1:rule]]
    headers = [" ".join(p[k] for p in parts if p[k]) for k in range(len(bars) - 1)]
    table = Table(_keyed(headers), title=lines[top - 1].strip() if top >= 1 else "")
    name = ""
    for line in lines[rule + 1:]:
        if line.startswith("+"):
            break
        if all(len(line) > b and line[b] == "|" for b in bars):
            got = dict(zip(table.headers, cells(line), strict=True))
            first = table.headers[0]
            if table.rows and got[first] and not any(v for k, v in got.items() if k != first):
                table.rows[-1][first] = unfold(table.rows[-1][first], got[first])  # a name folded on
                continue
            if name:
                got["name"], name = name, ""
            table.rows.append(got)
        elif line[1:2].strip():  # a name on its own line, above its row (or its next line)
            name = unfold(name, line.strip("|").strip()) if name else line.strip("|").strip()
    return [table]


def unfold(head: str, tail: str) -> str:
    """A name report.fit folded (after a ``/``, an ``_`` or a space: fit.pieces) joined back."""
    return head + tail if head.endswith(("/", "_")) else f"{head} {tail}"


# ---------------------------------------------------------------- the stored figures
@dataclass(frozen=True)
class Figure:
    value: float | None
    low: float | None = None
    high: float | None = None


def _f(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


class Stored:
    """What the fixture stores, read as every reader reads it (store.reads, store.rows): each
    result and each stored run's summary (its comparisons, its variants, its gate)."""

    def __init__(self, db: Path) -> None:
        got = reads.open_head(f"sqlite:///{db}")
        assert got is not None, db
        self.runs = {int(r["id"]): r for r in got.list_runs(None)}
        self.results = [rows.result_of(x) for x in got.results_of(sorted(self.runs))]
        self._by: dict[Key, Result] = {}
        for r in self.results:
            self._by.setdefault(result_key(r), r)

    def result(self, key: Key) -> Result | None:
        return self._by.get(key)

    def find(self, run: int, test: Callable[[Result], bool]) -> Result | None:
        return next((r for r in self.results if r.run_id == run and test(r)), None)

    def summary(self, run: int) -> Mapping[str, Any]:
        s = (self.runs.get(run) or {}).get("summary")
        return s if isinstance(s, dict) else {}

    def figure(self, key: Key, what: str) -> Figure | None:
        """The stored figure ``what`` of ``key``; None when nothing is stored under it."""
        kind = key[0]
        if kind == "result":
            r = self.result(key)
            return None if r is None else result_figure(r, what)
        if kind == "comparison":
            return self._comparison(key, what)
        if kind == "gate":
            return self._gate(key, what)
        if kind == "variant":
            return self._variant(key, what)
        if kind == "stored-compare":
            return self._stored_side(key, what)
        raise AssertionError(f"no stored figures of {kind!r}")

    def _comparison(self, key: Key, what: str) -> Figure | None:
        _, run, a, b, param = key
        for d in self.summary(run).get("compare") or []:
            if (d["a"], d["b"], d.get("param")) == (a, b, param) and d.get("comparison"):
                return comparison_figure(d["comparison"], what)
        return None

    def _gate(self, key: Key, what: str) -> Figure | None:
        _, run, bench = key
        for d in (self.summary(run).get("ci") or {}).get("rows") or []:
            if d["benchmark"] == bench:
                t, c = d.get("time") or {}, d.get("counts") or {}
                if what == "change":
                    return Figure(100 * t["change"], 100 * t["low"], 100 * t["high"])
                if what == "counts_change":
                    return Figure(100 * c["change"])
                return Figure(_f(t.get(what)))
        return None

    def _variant(self, key: Key, what: str) -> Figure | None:
        _, run, bench, label = key
        for entry in self.summary(run).get("variants") or []:
            if entry["bench"] != bench:
                continue
            for v in entry["variants"]:
                if v["label"] == label:
                    if what == "mean":
                        return Figure(_f(v.get("mean")), _f(v.get("ci_low")), _f(v.get("ci_high")))
                    if what == "per_op":  # its stored result's, where the run stored it (model.VariantEntry)
                        got = v.get("per_op") or {}
                        return Figure(_f(got.get("value")), _f(got.get("ci_low")), _f(got.get("ci_high")))
                    if what == "rel":
                        c = v.get("comparison")
                        return Figure(100 * c["rel"]) if c else None
        return None

    def side(self, run: int, name: str, param: int | None) -> Result | None:
        """The stored result a comparison's side of run ``run`` stands for, by its name as the
        row gives it: ``bench`` (rounds of one process: its result of that param), or ``bench @
        SHORT …`` (a revision: the result of that benchmark built at SHORT)."""
        bench, _, rest = name.partition(" @ ")
        short = rest.split(" ")[0]
        return self.find(run, lambda r: r.bench == bench and r.param == param and r.kind != "emulated"
                         and (not short or (r.revision or "").startswith(short)))

    def _stored_side(self, key: Key, what: str) -> Figure | None:
        """A side of `compare RUN… RUN…` (stored runs compared live: nothing stored of the
        comparison itself): the mean of the side's runs' figures, where its name lists them."""
        _, _, a, b, param = key
        if what not in ("A", "B"):
            return None
        bench = a.split(" ")[0]
        m = re.search(r"#([\d,]+)$", a if what == "A" else b)
        if not m:
            return None
        values = []
        for run in map(int, m.group(1).split(",")):
            r = self.result(("result", run, bench, param, ""))
            best = r.best if r is not None else None
            if best is None:
                return None
            values.append(best.value)
        return Figure(sum(values) / len(values))


def result_key(r: Result) -> Key:
    return ("result", r.run_id, r.bench, r.param, r.variant or "")


def _replicates(r: Result, key: str) -> list[float]:
    per = (r.per_process or {}).get(key)
    if isinstance(per, list) and per:
        return [float(x) for x in per]
    v = _f(r.get(key))
    return [] if v is None else [v]


def result_figure(r: Result, what: str) -> Figure | None:
    """A result's stored figure ``what`` (the names the tables' columns map to)."""
    g = r.get
    if what == "per_op":  # a scaling row's per op is its median total ops/s (docs/exports.md)
        value = g("per_op") if g("per_op") is not None else g("median")
        return Figure(_f(value), _f(g("ci_low")), _f(g("ci_high")))
    columns = {"cycles": ("cycles_per_op", "cycles_ci_low", "cycles_ci_high"),
               "net": ("net_per_op", "net_ci_low", "net_ci_high"),
               "net_cycles": ("cycles_net", "cycles_net_ci_low", "cycles_net_ci_high")}
    if what in columns:
        v, lo, hi = columns[what]
        return Figure(_f(g(v)), _f(g(lo)), _f(g(hi)))
    if what in ("ns", "min", "median", "total"):
        return Figure(_f(g({"ns": "ns_per_op", "total": "median"}.get(what, what))))
    if what == "rcv":
        return Figure(None if g("rcv") is None else 100 * g("rcv"))
    if what in ("ns_net", "min_net"):
        per, net = _f(g("per_op")), _f(g("net_per_op"))
        if per is None or net is None:
            return None
        if what == "ns_net":
            return Figure(None if g("ns_per_op") is None or not per else g("ns_per_op") * net / per)
        return Figure(None if g("min") is None else g("min") - (per - net))
    if what.startswith("count:"):
        name = what.split(":", 1)[1]
        if name == "calls":
            return Figure(_f(getattr(r.profile, "calls", None)))
        if name == "tasks":  # a scaling row's parameter is its task count
            return Figure(_f(r.param))
        return Figure(_f(getattr(r, name, None)))  # processes: the runner line's (Result.processes)
    if what.startswith("counter:"):
        ev = ((r.counters or {}).get("events") or {}).get(what.split(":", 1)[1]) or {}
        return Figure(_f(ev.get("per_op")))
    if what.startswith("sim:"):
        return Figure(_f(((r.simulated or {}).get("events") or {}).get(what.split(":", 1)[1])))
    if what in ("stat_min", "stat_max"):
        values = (r.stat or {}).get("values") or []
        return Figure((min if what == "stat_min" else max)(values)) if values else None
    if what.startswith("rep:"):
        _, unit, i = what.split(":")
        reps = replicates_of(r, unit)
        return Figure(reps[int(i)]) if int(i) < len(reps) else None
    raise AssertionError(f"no stored figure {what!r} of a result")


def replicates_of(r: Result, unit: str) -> list[float]:
    """A result's replicates as the tool formats give them (docs/exports.md): each process's
    estimate in the timer's unit (``timer``), cycles~ (``cycles``), ns (``ns``: with the row's
    own ratio ns_per_op / per_op), or a stat row's value per repetition (``stat``, its unit)."""
    if unit == "stat":
        return [float(x) for x in (r.stat or {}).get("values") or []]
    if unit == "cycles":
        return _replicates(r, "cycles_per_op")
    timer = _replicates(r, "per_op")
    if unit == "timer":
        return timer
    if r.unit == "ns":
        return timer
    per, ns = _f(r.per_op), _f(r.ns_per_op)
    return [x * ns / per for x in timer] if per and ns is not None else []


def comparison_figure(c: Mapping[str, Any], what: str) -> Figure | None:
    """A stored comparison's figure (model.ComparisonJSON): A, B (B's own median), A+Δ (the B a
    paired table shows), delta (with its CI), rel (Δ ÷ A, in %)."""
    if what == "A":
        return Figure(_f(c["median_a"]))
    if what == "B":
        return Figure(_f(c["median_b"]))
    if what == "A+Δ":
        return Figure(_f(c["median_a"] + c["diff"]))
    if what == "delta":
        return Figure(_f(c["diff"]), _f(c["ci_low"]), _f(c["ci_high"]))
    if what == "rel":  # in %, its CI Δ's relative to A (what a bisect's steps print beside it)
        a, lo, hi = _f(c["median_a"]), _f(c["ci_low"]), _f(c["ci_high"])
        ci = (100 * lo / a, 100 * hi / a) if a and lo is not None and hi is not None else (None, None)
        return Figure(None if _f(c["rel"]) is None else 100 * c["rel"], *ci)
    if what == "count:pairs":
        return Figure(_f(c["pairs"]))
    raise AssertionError(f"no stored figure {what!r} of a comparison")


# ---------------------------------------------------------------- the tables, by their headers
@dataclass(frozen=True)
class Context:
    """What a reader's command line says of what it prints: the run (show, export), the series
    (history), the source of its comparisons (a run's id, or ``stored:ARGS`` for stored runs
    compared live)."""

    reader: str
    stored: Stored
    run: int | None = None
    series: tuple[str, int | None, str] | None = None
    source: Any = None


def _param(cell: str) -> int | None:
    return int(cell) if cell.strip().lstrip("-").isdigit() else None


def _name(row: Mapping[str, str], header: str) -> str:
    return row.get(header) or row.get("name", "")


def split_variant(name: str) -> tuple[str, str]:
    """``bench [variant]`` as the results tables name a row → (bench, variant)."""
    m = re.match(r"^(.*?) \[(.*)\]$", name)
    return (m.group(1), m.group(2)) if m else (name, "")


def _value_and_ci(row: Mapping[str, str], head: str, ci: str | None, reader: str, key: Key, what: str,
                  ends_ci: bool = False, sides: bool = False) -> list[Printed]:
    num = number(row.get(head, ""))
    if num is None:
        return []
    interval = None
    if ci is not None and row.get(ci, "-").strip() not in ("", "-", "exact"):
        interval = (ends if ends_ci else offsets)(row[ci])
        if interval is None:
            raise AssertionError(f"{reader}: {what} of {key}: CI {row[ci]!r} unread")
    return [Printed(reader, key, what, num, interval, sides)]


RESULT_COLUMNS = {"per op": "per_op", "net per op": "net", "cycles~": "cycles", "cycles~ net": "net_cycles",
                  "ns/op": "ns", "ns/op net": "ns_net", "min": "min", "min net": "min_net", "rCV": "rcv"}


_WITH_CI = ("per op", "net per op", "cycles~", "cycles~ net")  # the figures a ±CI95 column follows


def results_rows(t: Table, ctx: Context) -> list[Printed]:
    """console.results_table (run, show of a run) and the markdown and text exports' result table:
    each column the stored figure it is, a ±CI95 column the CI of the nearest figure before it
    that has one (per op, cycles~, or their net)."""
    ci_of: dict[str, str] = {}
    figure = None
    for h in t.headers:
        if h.split("#")[0] in _WITH_CI:
            figure = h
        elif h.startswith("±CI95") and figure is not None:
            ci_of[figure] = h
    out: list[Printed] = []
    for row in t.rows:
        bench, variant = split_variant(_name(row, "benchmark"))
        key = ("result", ctx.run, bench, _param(row.get("param", "")), variant)
        for h in t.headers:
            what = RESULT_COLUMNS.get(h.split("#")[0])
            if what is not None:
                out += _value_and_ci(row, h, ci_of.get(h), ctx.reader, key, what)
    return out


def history_rows(t: Table, ctx: Context) -> list[Printed]:
    """report.history.history_table: a run a row, its figure (cycles~ where the series has them)
    and its ±CI95."""
    assert ctx.series is not None
    bench, param, variant = ctx.series
    head = next(h for h in t.headers if h.startswith("per op ("))
    what = "cycles" if head == "per op (cycles~)" else "per_op"
    out: list[Printed] = []
    for row in t.rows:
        key = ("result", int(row["run"]), bench, param, variant)
        out += _value_and_ci(row, head, "±CI95", ctx.reader, key, what)
    return out


def comparison_rows(t: Table, ctx: Context) -> list[Printed]:
    """console.comparisons_table and the markdown and text exports' table of comparisons: A and
    B per op (B = A + Δ where the table says so), Δ with its CI, Δ% — the sides a table shows, so
    rule 1 holds Δ to them."""
    h = t.headers
    a_head = next((x for x in h if x.startswith(("A per op", "A ("))), None)  # the text export may drop A and B
    b_head = next((x for x in h if x.startswith(("B per op", "B = A + Δ", "B ("))), None)
    d_head = next(x for x in h if x in ("Δ (B−A)", "median paired Δ"))
    ci = next((x for x in h if x.endswith("CI of Δ")), None)
    out: list[Printed] = []
    for row in t.rows:
        if "A → B" in row or ("name" in row and "A" not in row):
            a, _, b = _name(row, "A → B").partition(" → ")
        else:
            a, b = row["A"], row["B"]
        key = ("comparison", ctx.source, a, b, _param(row.get("param", "")))
        if a_head is not None:
            out += _value_and_ci(row, a_head, None, ctx.reader, key, "A", sides=True)
        if b_head is not None:
            out += _value_and_ci(row, b_head, None, ctx.reader, key, "A+Δ" if b_head.startswith("B = A + Δ") else "B",
                                 sides=True)
        out += _value_and_ci(row, d_head, ci, ctx.reader, key, "delta", ends_ci=True, sides=True)
        out += _value_and_ci(row, "Δ%", None, ctx.reader, key, "rel", sides=True)
    return out


def _event_rows(t: Table, ctx: Context, quantity: Callable[[str], str | None]) -> list[Printed]:
    """Each result row's figure under every header ``quantity`` names (None: not an event's column)."""
    out: list[Printed] = []
    for row in t.rows:
        key = ("result", ctx.run, row["benchmark"], _param(row.get("param", "")), "")
        for h in t.headers:
            if (q := quantity(h)) is not None:
                out += _value_and_ci(row, h, None, ctx.reader, key, q)
    return out


def counters_rows(t: Table, ctx: Context) -> list[Printed]:
    """console.counters_table: each event's count per op."""
    return _event_rows(t, ctx, lambda h: None if h in ("benchmark", "param", "derived / notes")
                       else "counter:" + h.removesuffix(" (ns)"))


def simulated_rows(t: Table, ctx: Context) -> list[Printed]:
    """console.simulated_table: each callgrind event per op (a count: never shown below zero)."""
    return _event_rows(t, ctx, lambda h: "sim:" + h.removesuffix("/op") if h.endswith("/op") else None)


def predicted_rows(t: Table, ctx: Context) -> list[Printed]:
    """report.predict's measured-beside-predicted table: its measured cycles~ (the rest are the
    models' predictions, nothing stored of the result)."""
    return [p for row in t.rows for p in _value_and_ci(
        row, "cycles~", None, ctx.reader, ("result", ctx.run, row["benchmark"], _param(row.get("param", "")), ""),
        "cycles")]


def stat_rows(t: Table, ctx: Context) -> list[Printed]:
    """report.stat.stat_table: each metric's mean (its result's per op), min and max."""
    out: list[Printed] = []
    for row in t.rows:
        r = ctx.stored.find(ctx.run or 0, lambda x, m=row["metric"]: x.kind == "stat" and x.bench.endswith("/" + m))
        if r is None:
            raise AssertionError(f"{ctx.reader}: no stored stat row of {row['metric']}")
        key = result_key(r)
        out += _value_and_ci(row, "mean", None, ctx.reader, key, "per_op")
        out += _value_and_ci(row, "min", None, ctx.reader, key, "stat_min")
        out += _value_and_ci(row, "max", None, ctx.reader, key, "stat_max")
    return out


def profile_rows(t: Table, ctx: Context) -> list[Printed]:
    """report.profile.profile_table: calls (a count), the self cost per call with its ± (the
    function's result: per op and CI), or callgrind's exact self Ir per call."""
    out: list[Printed] = []
    self_head = next((h for h in t.headers if h.startswith("self/call")), None)
    for row in t.rows:
        key = ("result", ctx.run, row["function"], None, "")
        out += _value_and_ci(row, "calls", None, ctx.reader, key, "count:calls")
        if self_head is not None:
            out += _value_and_ci(row, self_head, "±", ctx.reader, key, "per_op")
        elif "self Ir/call" in row:
            out += _value_and_ci(row, "self Ir/call", None, ctx.reader, key, "per_op")
    return out


def scale_rows(t: Table, ctx: Context) -> list[Printed]:
    """report.plots.scale_table of one benchmark and mode (its title ``bench (mode)``): tasks (a
    count) and the median total ops/s."""
    m = re.match(r"^(.*) \((\w+)\)$", t.title)
    assert m, t.title
    out: list[Printed] = []
    for row in t.rows:
        key = ("result", ctx.run, m.group(1), int(row["tasks"]), m.group(2))
        out += _value_and_ci(row, "tasks", None, ctx.reader, key, "count:tasks")
        out += _value_and_ci(row, "total ops/s", None, ctx.reader, key, "total")
    return out


def variants_rows(t: Table, ctx: Context) -> list[Printed]:
    """report.variants' ranked table (its title ``bench · ranked by …``): each variant's mean per
    op with its 95% CI and its Δ% median, from the run's stored summary."""
    bench = t.title.split(" · ")[0]
    head = next(h for h in t.headers if h.startswith(("per op", "mean per op")))
    what = "mean" if head.startswith("mean") else "per_op"
    out: list[Printed] = []
    for row in t.rows:
        key = ("variant", ctx.run, bench, row["variant"].removeprefix("* "))
        out += _value_and_ci(row, head, "95% CI", ctx.reader, key, what, ends_ci=True)
        out += _value_and_ci(row, "Δ% median", None, ctx.reader, key, "rel")
    return out


def gate_rows(t: Table, ctx: Context) -> list[Printed]:
    """report.gate's table (`ci`, show of its run): base and head per op, Δ% with its CI, the
    counts' Δ%. Its Δ% is the median of the pairs' ratios, not head ÷ base − 1 (report.gate's)."""
    base = next(h for h in t.headers if h.startswith("base"))
    head = next(h for h in t.headers if h.startswith("head"))
    out: list[Printed] = []
    for row in t.rows:
        key = ("gate", ctx.run, row["benchmark"])
        out += _value_and_ci(row, base, None, ctx.reader, key, "base")
        out += _value_and_ci(row, head, None, ctx.reader, key, "head")
        change = next((v for k, v in row.items() if k.startswith("Δ% [")), "")
        num, interval = number(change.split(" [")[0]), ends(change)
        if num is not None:
            out.append(Printed(ctx.reader, key, "change", num, interval))
        out += _value_and_ci(row, "Ir Δ%", None, ctx.reader, key, "counts_change")
    return out


def bisect_rows(t: Table, ctx: Context) -> list[Printed]:
    """report.bisect's steps (`show --bisect ID`): each step's Δ% vs GOOD with its repeated CI,
    the comparison its run stored (a sitting stores one)."""
    out: list[Printed] = []
    for row in t.rows:
        run = int(row["run"])
        [d] = [d for d in ctx.stored.summary(run).get("compare") or [] if d.get("comparison")]
        key = ("comparison", run, d["a"], d["b"], d.get("param"))
        num = number(row["Δ% vs GOOD"])
        ci = next(h for h in t.headers if h.startswith("repeated CI"))
        if num is not None:
            out.append(Printed(ctx.reader, key, "rel", num, ends(f"[{row[ci]}]")))
    return out


def ranked_rows(t: Table, ctx: Context) -> list[Printed]:
    """report.ranked's table (`compare` of N stored runs; its title ``bench [variant] [param] (unit),
    ranked``): a one-run side's per op with its own CI (the run's stored figure), a side of several
    runs' mean, each side's Δ% vs the baseline with its CI (keyed as the comparisons table's row of
    the same two sides, so one figure across views holds them to it)."""
    m = re.match(r"^(.*?)(?: \[(\d+)\])? \((.+)\), ranked$", t.title)
    assert m, t.title
    label, param, unit = m.group(1), int(m.group(2)) if m.group(2) else None, m.group(3)
    bench, variant = split_variant(label)
    names = [row["run"].removesuffix(" [baseline]") for row in t.rows]
    [base] = [n for n, row in zip(names, t.rows, strict=True) if row["run"].endswith(" [baseline]")]
    out: list[Printed] = []
    for name, row in zip(names, t.rows, strict=True):
        ids = re.search(r"#([\d,]+)$", name)
        assert ids, name
        runs = ids.group(1).split(",")
        if len(runs) == 1:
            key = ("result", int(runs[0]), bench, param, variant)
            out += _value_and_ci(row, "per op", "±", ctx.reader, key, "cycles" if unit == "cycles~" else "per_op")
        if name == base:
            if len(runs) > 1:
                out += [p for other in names if other != base for p in _value_and_ci(
                    row, "per op", None, ctx.reader, ("comparison", ctx.source, f"{label} {base}", other, param), "A")]
            continue
        pair = ("comparison", ctx.source, f"{label} {base}", name, param)
        if len(runs) > 1:
            out += _value_and_ci(row, "per op", None, ctx.reader, pair, "B")
        rel = number(row["Δ% vs baseline"])
        if rel is not None:
            out.append(Printed(ctx.reader, pair, "rel", rel, ends(row["95% CI of Δ%"])))
    return out


def no_figures(t: Table, ctx: Context) -> list[Printed]:
    """A table that prints no figure of a stored result or comparison (`runs`' runs, the
    instruction classes of a variants run's bodies)."""
    return []


@dataclass(frozen=True)
class TableKind:
    """A table a reader prints: ``matches`` its headers; ``read`` its rows' figures."""

    name: str
    matches: Callable[[list[str]], bool]
    read: Callable[[Table, Context], list[Printed]]


TABLES: tuple[TableKind, ...] = (
    TableKind("results", lambda h: "unit" in h and ("per op" in h or "net per op" in h),
              results_rows),
    TableKind("history", lambda h: h[0] == "run" and any(x.startswith("per op (") for x in h), history_rows),
    TableKind("comparisons", lambda h: any(x in h for x in ("Δ (B−A)", "median paired Δ")), comparison_rows),
    TableKind("counters", lambda h: "derived / notes" in h, counters_rows),
    TableKind("simulated", lambda h: "Ir/op" in h, simulated_rows),
    TableKind("predicted", lambda h: "llvm-mca" in h, predicted_rows),
    TableKind("stat", lambda h: h[:2] == ["metric", "mean"], stat_rows),
    TableKind("profile", lambda h: "calls" in h and "function" in h, profile_rows),
    TableKind("scale", lambda h: "tasks" in h and "total ops/s" in h, scale_rows),
    TableKind("variants", lambda h: "variant" in h and any(x.startswith(("per op", "mean per op")) for x in h),
              variants_rows),
    TableKind("gate", lambda h: any(x.startswith("Δ% [") for x in h), gate_rows),
    TableKind("bisect steps", lambda h: "Δ% vs GOOD" in h, bisect_rows),
    TableKind("ranked", lambda h: "Δ% vs baseline" in h, ranked_rows),
    TableKind("runs", lambda h: h[:3] == ["run", "started", "status"], no_figures),
    TableKind("instruction classes", lambda h: h[:2] == ["variant", "total"], no_figures),
    # variants all emulated (qemu-user): a verdict of correctness and sizes, nothing timed
    TableKind("emulated variants", lambda h: h[:2] == ["variant", "verdict"], no_figures),
)


def read_tables(tables: Iterable[Table], ctx: Context) -> Iterator[Printed | str]:
    """Each table's figures by its kind; a table of two columns or more that no kind reads is a
    breach (a one-column "table" is a disassembly's rules, not a table)."""
    for t in tables:
        if len(t.headers) < 2:
            continue
        kind = next((k for k in TABLES if k.matches(t.headers)), None)
        if kind is None:
            yield f"{ctx.reader}: a table no TableKind reads (register it in tests/labnumbers.py): {t.headers}"
            continue
        yield from kind.read(t, ctx)


# ---------------------------------------------------------------- the data formats
CSV_FIGURES = (("per_op", "per_op", "ci_low", "ci_high"),
               ("cycles", "cycles_per_op", "cycles_ci_low", "cycles_ci_high"),
               ("net", "net_per_op", "net_ci_low", "net_ci_high"),
               ("net_cycles", "cycles_net", "cycles_net_ci_low", "cycles_net_ci_high"),
               ("ns", "ns_per_op", None, None), ("min", "min", None, None), ("median", "median", None, None))
COUNTS = ("n_samples", "n_disturbed", "n_trimmed", "outliers", "rounds", "processes")


def _exact_figures(reader: str, key: Key, d: Mapping[str, Any]) -> list[Printed]:
    """A result's figures, counts and CIs as the csv and the run file give them: every column."""
    out = []
    for what, col, lo, hi in CSV_FIGURES:
        num = exact(d.get(col))
        if num is None:
            continue
        a, b = (exact(d.get(lo)), exact(d.get(hi))) if lo else (None, None)
        interval = Interval(f"[{d.get(lo)}, {d.get(hi)}]", a, b, False) if a is not None and b is not None else None
        out.append(Printed(reader, key, what, num, interval))
    for c in COUNTS:
        num = exact(d.get(c))
        if num is not None:
            out.append(Printed(reader, key, "count:" + c, num))
    return out


def _comparison_figures(reader: str, key: Key, c: Mapping[str, Any]) -> list[Printed]:
    """A comparison as csv and json give it: median_a, median_b (B's own), diff with its CI, rel.
    Not ``sides``: their diff is documented as the median of the pairs' differences where the
    sides were paired (docs/exports.md), not median_b − median_a."""
    out = []
    for what, col in (("A", "median_a"), ("B", "median_b"), ("count:pairs", "pairs")):
        num = exact(c.get(col))
        if num is not None:
            out.append(Printed(reader, key, what, num))
    d, lo, hi = exact(c.get("diff")), exact(c.get("ci_low")), exact(c.get("ci_high"))
    if d is not None:
        out.append(Printed(reader, key, "delta", d, Interval("ci", lo, hi, False) if lo and hi else None))
    rel = exact(c.get("rel"))
    if rel is not None:
        out.append(Printed(reader, key, "rel", Num(rel.text, 100 * rel.value, 0.0)))
    return out


def _cell(text: str) -> str:
    """A csv text cell as written before the csv writer guarded it against being read as a
    formula (docs/exports.md: a leading ``'`` before ``=``, ``+``, ``-``, ``@``, tab or CR)."""
    return text[1:] if text[:1] == "'" and text[1:2] in ("=", "+", "-", "@", "\t", "\r") else text


def read_csv(text: str, ctx: Context) -> list[Printed]:
    got = [{k: _cell(v or "") for k, v in d.items()} for d in csv.DictReader(io.StringIO(text))]
    out: list[Printed] = []
    for d in got:
        if "run_id" in d:
            key = ("result", int(d["run_id"]), d["bench"], _param(d["param"]), d["variant"])
            out += _exact_figures(ctx.reader, key, d)
            for unit, col in (("timer", "per_process"), ("cycles", "cycles_per_process")):
                for i, x in enumerate((d.get(col) or "").split()):
                    out.append(Printed(ctx.reader, key, f"rep:{unit}:{i}", given(x)))
        else:
            key = ("comparison", ctx.source, d["a"], d["b"], _param(d["param"]))
            out += _comparison_figures(ctx.reader, key, d)
    return out


def read_json(text: str, ctx: Context) -> list[Printed]:
    """The run file (its results' columns, its stored comparisons) or compare's rows as JSON."""
    doc = json.loads(text)
    out: list[Printed] = []
    if isinstance(doc, list):  # compare --format json: its rows
        for d in doc:
            if d.get("comparison"):
                key = ("comparison", ctx.source, d["a"], d["b"], d.get("param"))
                out += _comparison_figures(ctx.reader, key, d["comparison"])
        return out
    for d in doc["results"]:
        key = ("result", ctx.run, d["bench"], d.get("param"), d.get("variant") or "")
        out += _exact_figures(ctx.reader, key, d)
    for d in ((doc["run"].get("summary") or {}).get("compare") or []):
        if d.get("comparison"):
            key = ("comparison", ctx.run, d["a"], d["b"], d.get("param"))
            out += _comparison_figures(ctx.reader, key, d["comparison"])
    return out


def _slash_key(ctx: Context, name: str, sep: str) -> Key:
    """gbench's and benchstat's ``bench/PARAM/variant{sep}V`` (scaling: ``/tasks{sep}N``) as a key."""
    name, _, variant = name.partition(f"/variant{sep}")
    param = None
    m = re.match(rf"^(.*)/(?:tasks{re.escape(sep)})?(\d+)$", name)
    if m:
        name, param = m.group(1), int(m.group(2))
    return ("result", ctx.run, name, param, variant)


def _replicate(ctx: Context, key: Key, unit: str, i: int, num: Num) -> Printed:
    """A replicate as a tool format prints it, in the unit the stored replicates have: a stat
    row's ms (gbench: ns; benchstat, pyperf: seconds), pyperf's seconds per op as ns."""
    r = ctx.stored.result(key)
    if r is not None and r.kind == "stat" and unit in ("ns", "s"):
        k = {"ns": 1e-6, "s": 1e3}[unit] if r.unit == "ms" else (1 / 1024 if unit == "s" else 1.0)
        return Printed(ctx.reader, key, f"rep:stat:{i}", Num(num.text, num.value * k, num.slack * k))
    if unit == "s":
        return Printed(ctx.reader, key, f"rep:ns:{i}", Num(num.text, num.value * 1e9, num.slack * 1e9))
    return Printed(ctx.reader, key, f"rep:{unit}:{i}", num)


def read_gbench(text: str, ctx: Context) -> list[Printed]:
    """Google Benchmark's JSON: each iteration entry one replicate (ns per op, cycles~ and the
    timer's unit as counters); the aggregates the mean, median and stddev of them."""
    out: list[Printed] = []
    got: dict[str, dict[str, list[float]]] = {}
    for b in json.loads(text)["benchmarks"]:
        key = _slash_key(ctx, b["run_name"], ":")
        for c in ("repetitions", "iterations"):  # the entry's, not the result's: counted, never looked up
            # a Google Benchmark's invocation has its library's own iterations: one count per replicate
            at = f":{b['repetition_index']}" if c == "iterations" and b["run_type"] == "iteration" else ""
            out.append(Printed(ctx.reader, key, f"count:~gbench {b['run_type']} {c}{at}", given(b[c])))
        if b["run_type"] == "iteration":
            i = b["repetition_index"]
            out.append(_replicate(ctx, key, "ns", i, given(b["real_time"])))
            for unit, col in (("cycles", "cycles_per_op"), ("timer", "ref_cycles_per_op"), ("timer", "ticks_per_op")):
                if col in b:
                    out.append(Printed(ctx.reader, key, f"rep:{unit}:{i}", given(b[col])))
            got.setdefault(b["run_name"], {}).setdefault("real_time", []).append(b["real_time"])
        else:
            xs = got.get(b["run_name"], {}).get("real_time") or []
            agg = b["aggregate_name"]
            want = {"mean": sum(xs) / len(xs), "median": sorted(xs)[len(xs) // 2] if len(xs) % 2 else
                    sum(sorted(xs)[len(xs) // 2 - 1:len(xs) // 2 + 1]) / 2}.get(agg)
            if agg == "stddev":  # a spread: never below zero
                out.append(Printed(ctx.reader, key, "count:~gbench stddev", given(b["real_time"])))
            elif want is not None and not given(b["real_time"]).near(want, 1e-9 * abs(want)):
                raise AssertionError(f"{ctx.reader}: {b['name']} is not the {agg} of its repetitions")
    return out


_BENCHSTAT = {"cycles/op": "cycles", "ns/op": "ns", "ref-cycles/op": "timer", "ticks/op": "timer", "sec/op": "s"}


def read_benchstat(text: str, ctx: Context) -> list[Printed]:
    """Go's benchmark format: a line a replicate, value–unit pairs (timing: cycles~, ns, the
    timer's; stat: each metric per run; simulated: each event per op, a count; scaling: ops/s)."""
    out: list[Printed] = []
    seen: dict[Key, int] = {}
    for line in text.splitlines():
        if not line.startswith("Benchmark"):
            continue
        name, _, *pairs = line.split("\t")
        key = _slash_key(ctx, name.removeprefix("Benchmark"), "=")
        i = seen[key] = seen.get(key, -1) + 1
        r = ctx.stored.result(key)
        for pair in pairs:
            value, unit = pair.split(" ", 1)
            num = number(value)
            assert num is not None, line
            if r is not None and r.kind == "simulated":
                out.append(Printed(ctx.reader, key, "sim:" + unit.removesuffix("/op"), num))
            elif r is not None and r.kind == "scaling":
                out.append(Printed(ctx.reader, key, "total", num))
            elif r is not None and r.kind == "stat" and unit != "sec/op":
                out.append(Printed(ctx.reader, key, f"rep:stat:{i}", num))
            else:
                out.append(_replicate(ctx, key, _BENCHSTAT[unit], i, num))
    return out


def read_pyperf(text: str, ctx: Context) -> list[Printed]:
    """pyperf's JSON: a benchmark a result (``bench[PARAM] (variant)``), a run a replicate, in
    seconds (per op, or a stat metric's per run) or bytes."""
    out: list[Printed] = []
    for b in json.loads(text)["benchmarks"]:
        m = re.match(r"^(.*?)(?:\[(\d+)\])?(?: \((.*)\))?$", b["metadata"]["name"])
        assert m, b["metadata"]["name"]
        key = ("result", ctx.run, m.group(1), int(m.group(2)) if m.group(2) else None, m.group(3) or "")
        for i, run in enumerate(b["runs"]):
            [value] = run["values"]
            out.append(_replicate(ctx, key, "s", i, given(value)))
    return out


def read_console(text: str, ctx: Context) -> Iterator[Printed | str]:
    return read_tables(console_tables(text), ctx)


FORMATS: dict[str, Callable[[str, Context], Iterable[Printed | str]]] = {
    "json": read_json, "gbench": read_gbench, "benchstat": read_benchstat, "pyperf": read_pyperf, "csv": read_csv,
    "markdown": lambda text, ctx: read_tables(markdown_tables(text), ctx),
    "text": lambda text, ctx: read_tables(text_tables(text), ctx),
}
assert set(FORMATS) == set(EXPORT_FORMATS), "a new export format: register its reader in FORMATS"


# ---------------------------------------------------------------- the readers
@dataclass(frozen=True)
class Lab:
    """The fixture's copy a matrix reads: its stored figures, its runs and the command lines of
    tests/commands/test_lab_readers.py's matrix (bench/gallery.py's entries), which the readers
    below extend (``--wide``, every export format of every run) and must cover."""

    db: Path
    stored: Stored
    runs: tuple[int, ...]
    entries: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, db: Path) -> Lab:
        runs = tuple(r for s in gallery.manifest() for r in s["runs"])  # type: ignore[union-attr]
        entries = tuple(tuple(argv) for _, _, commands in gallery.entries(db) for argv in commands)
        return cls(db, Stored(db), runs, entries)

    def commands(self, test: Callable[[tuple[str, ...]], bool], *more: str) -> list[list[str]]:
        """The matrix's command lines that ``test`` picks, with ``more`` options."""
        return [[*argv, *more] for argv in self.entries if test(argv)]


@dataclass(frozen=True)
class Reader:
    """A command that prints stored results or comparisons: ``argvs`` its command lines on the lab,
    ``context`` what each says of what it prints, ``parse`` how its output reads."""

    name: str
    argvs: Callable[[Lab], list[list[str]]]
    context: Callable[[list[str], Lab], Context]
    parse: Callable[[str, Context], Iterable[Printed | str]]


def _run_context(argv: list[str], lab: Lab) -> Context:
    run = int(argv[1])
    return Context(" ".join(argv), lab.stored, run=run, source=run)


def _history_context(argv: list[str], lab: Lab) -> Context:
    param = int(argv[argv.index("-p") + 1]) if "-p" in argv else None
    variant = argv[argv.index("--variant") + 1] if "--variant" in argv else ""
    return Context(" ".join(argv), lab.stored, series=(argv[1], param, variant))


def _stored_context(argv: list[str], lab: Lab) -> Context:
    sides = [a for a in argv[1:] if not a.startswith("--") and a not in EXPORT_FORMATS]
    return Context(" ".join(argv), lab.stored, source="stored:" + " ".join(sides))


def _plain(argv: list[str], lab: Lab) -> Context:
    return Context(" ".join(argv), lab.stored)


def _stored_compares(lab: Lab) -> list[list[str]]:
    """The matrix's stored runs compared (not --by host: a fixture of one host has none)."""
    return lab.commands(lambda a: a[0] == "compare" and "--by" not in a)


def _by_format(fmt: str) -> Callable[[str, Context], Iterable[Printed | str]]:
    return lambda text, ctx: FORMATS[fmt](text, ctx)


def _shows(a: tuple[str, ...]) -> bool:
    return a[0] == "show" and a[1].isdigit()


READERS: list[Reader] = [
    Reader("show", lambda lab: lab.commands(_shows, "--wide"), _run_context, read_console),
    Reader("show --bisect", lambda lab: lab.commands(lambda a: a[:2] == ("show", "--bisect"), "--wide"), _plain,
           read_console),
    Reader("history", lambda lab: lab.commands(lambda a: a[0] == "history", "--wide"), _history_context,
           read_console),
    Reader("runs", lambda lab: lab.commands(lambda a: a[0] == "runs"), _plain, read_console),
    Reader("compare (stored runs)", lambda lab: [[*a, "--wide"] for a in _stored_compares(lab)], _stored_context,
           read_console),
    Reader("compare --by host", lambda lab: lab.commands(lambda a: a[:3] == ("compare", "--by", "host")), _plain,
           read_console),
    *[Reader(f"compare (stored runs) --format {f}",
             lambda lab, f=f: [[*a, "--format", f] for a in _stored_compares(lab)], _stored_context, _by_format(f))
      for f in ("json", "csv", "markdown", "text")],
    *[Reader(f"export --format {f}", lambda lab, f=f: [["export", str(r), "--format", f] for r in lab.runs],
             _run_context, _by_format(f)) for f in EXPORT_FORMATS],
    *[Reader(f"show --format {f}", lambda lab, f=f: [["show", str(r), "--format", f] for r in lab.runs],
             _run_context, _by_format(f)) for f in EXPORT_FORMATS],
]


def documented_exit(argv: list[str], code: int, output: str) -> bool:
    """A non-zero exit the documentation gives for what ``argv`` met (docs/cli.md): a series with
    no per-op figure to follow (history, 2), a regression (history --fail-on-regression, 1), one
    host (compare --by host, 2)."""
    if argv[0] == "history":
        return (code == 2 and "has no per-op figure" in output) or (code == 1 and "--fail-on-regression" in argv)
    return code == 2 and argv[:3] == ["compare", "--by", "host"] and "needs runs of two hosts" in output


def read(reader: Reader, argv: list[str], lab: Lab) -> tuple[list[Printed], list[str]]:
    """What ``argv`` printed, read: (its figures, its breaches so far: a failed command, a table
    nothing reads, output that does not parse)."""
    said = gallery.invoke(argv, lab.db, COLUMNS)
    name = "cyclebench " + " ".join(argv)
    if said.error:
        return [], [f"{name}: {said.error}"]
    if said.exit_code != 0 and not documented_exit(argv, said.exit_code, said.output):
        return [], [f"{name}: exit {said.exit_code}: {said.output[-500:]}"]
    ctx = reader.context(argv, lab)
    ctx = Context(name, ctx.stored, ctx.run, ctx.series, ctx.source)
    # a data format's stdout is the export alone; notes go to stderr, which click's runner mixes in
    text = "\n".join(x for x in said.output.splitlines() if not x.startswith("cyclebench: "))
    try:
        got = list(reader.parse(text, ctx))
    except (AssertionError, KeyError, ValueError, RuntimeError, json.JSONDecodeError) as e:
        return [], [f"{name}: output unread: {type(e).__name__}: {e}"]
    return [p for p in got if isinstance(p, Printed)], [p for p in got if isinstance(p, str)]


def read_all(lab: Lab, readers: Sequence[Reader] = tuple(READERS),
             only: Callable[[list[str]], bool] = lambda argv: True) -> tuple[list[Printed], list[str]]:
    printed: list[Printed] = []
    problems: list[str] = []
    for reader in readers:
        for argv in reader.argvs(lab):
            if only(argv):
                p, b = read(reader, argv, lab)
                printed += p
                problems += b
    return printed, problems


# ---------------------------------------------------------------- the invariants
COUNT_LIKE = ("count:", "sim:", "counter:")  # never below zero: counts, a count per op, a spread


def _describe(key: Key) -> str:
    if key[0] == "result":
        _, run, bench, param, variant = key
        return f"run #{run} {bench}" + (f" [{param}]" if param is not None else "") + (f" [{variant}]" if variant
                                                                                       else "")
    if key[0] in ("comparison", "stored-compare"):
        return f"comparison {key[2]} · {key[3]}" + (f" [{key[4]}]" if key[4] is not None else "") + f" of {key[1]}"
    return " ".join(map(str, key))


def _stored_key(p: Printed) -> Key:
    if p.key[0] == "comparison" and isinstance(p.key[1], str):
        return ("stored-compare", *p.key[1:])
    return p.key


def check_stored(p: Printed, stored: Stored) -> list[str]:
    """The printed figure against the stored one: its number, its CI's ends, the claims ≈0 and <0,
    a count per op shown as 0 where the difference of two counts went below zero."""
    key = _stored_key(p)
    if p.what.startswith("count:~"):  # a count of the view's own (a tool format's entries): nothing stored
        return []
    fig = stored.figure(key, p.what)
    where = f"{p.reader}: {_describe(p.key)} {p.what}"
    if fig is None:
        return [] if key[0] == "stored-compare" else [f"{where}: printed {p.num.text}, nothing stored"]
    out = []
    if p.num.claim == "≈0":
        if not ((fig.low is not None and fig.low <= 0) or (fig.value is not None and fig.value <= 0)):
            out.append(f"{where}: printed ≈0, stored {fig.value:.6g} [{fig.low}, {fig.high}] holds no zero")
    elif p.num.claim == "<0":
        if not (fig.high is not None and fig.high < 0):
            out.append(f"{where}: printed <0, stored CI high {fig.high}")
    elif fig.value is None:
        out.append(f"{where}: printed {p.num.text}, stored none")
    elif not p.num.near(fig.value) and not (p.what.startswith("sim:") and fig.value < 0 and p.num.value == 0):
        out.append(f"{where}: printed {p.num.text}, stored {fig.value:.10g}")
    if p.interval is not None:
        if fig.low is None or fig.high is None or fig.value is None:
            out.append(f"{where}: printed CI {p.interval.text}, stored none")
        else:
            lo, hi = (fig.low - fig.value, fig.high - fig.value) if p.interval.offsets else (fig.low, fig.high)
            if not (p.interval.low.near(lo) and p.interval.high.near(hi)):
                form = "-x/+y" if p.interval.offsets else "[lo, hi]"
                out.append(f"{where}: printed CI {p.interval.text}, stored {form} {lo:+.6g}/{hi:+.6g} "
                           f"([{fig.low:.6g}, {fig.high:.6g}])")
    if fig.value is not None and fig.low is not None and fig.high is not None and \
            not (fig.low - EPS * abs(fig.low) <= fig.value <= fig.high + EPS * abs(fig.high)):
        out.append(f"stored: {_describe(p.key)} {p.what} {fig.value:.6g} outside its CI "
                   f"[{fig.low:.6g}, {fig.high:.6g}]")
    return out


def check_interval(p: Printed) -> list[str]:
    """A printed CI holds its printed estimate (within the rounding of both)."""
    if p.interval is None or p.num.claim:
        return []
    i = p.interval
    lo, hi = (0.0, 0.0) if i.offsets else (p.num.value, p.num.value)
    slack = 0.0 if i.offsets else p.num.slack
    if i.low.value - i.low.slack > lo + slack or i.high.value + i.high.slack < hi - slack:
        return [f"{p.reader}: {_describe(p.key)} {p.what} {p.num.text}: its CI {i.text} does not hold it"]
    return []


def check_counts(p: Printed) -> list[str]:
    if p.what.startswith(COUNT_LIKE) and p.num.value + p.num.slack < 0:
        return [f"{p.reader}: {_describe(p.key)} {p.what} {p.num.text} below zero"]
    return []


def check_sides(printed: Sequence[Printed]) -> list[str]:
    """Rule 1 over each reader's row of a comparison: Δ is B − A of the sides it shows (within the
    rounding of the three cells) and never of the other sign; Δ% is Δ ÷ A (every reader)."""
    rows: dict[tuple[str, Key], dict[str, Printed]] = {}
    for p in printed:
        if p.key[0] == "comparison":
            rows.setdefault((p.reader, p.key), {})[p.what] = p
    out = []
    for (reader, key), got in rows.items():
        a, d, rel = got.get("A"), got.get("delta"), got.get("rel")
        b = got.get("A+Δ") or got.get("B")
        where = f"{reader}: {_describe(key)}"
        if a is not None and b is not None and d is not None and d.sides:
            sides = b.num.value - a.num.value
            if not d.num.near(sides, a.num.slack + b.num.slack):
                out.append(f"{where}: Δ {d.num.text} is not B − A ({b.num.text} − {a.num.text} = {sides:+.6g})")
            if sides * d.num.value < 0 and abs(sides) > a.num.slack + b.num.slack:  # both: B − A is not zero either
                out.append(f"{where}: Δ {d.num.text} and B − A ({sides:+.6g}) of opposite sign")
        if a is not None and d is not None and rel is not None and a.num.value:
            want = 100 * d.num.value / a.num.value
            more = 100 * (d.num.slack / abs(a.num.value) + abs(d.num.value) * a.num.slack / a.num.value ** 2)
            if not rel.num.near(want, more):
                out.append(f"{where}: Δ% {rel.num.text} is not Δ ÷ A ({d.num.text} ÷ {a.num.text} = {want:+.4g}%)")
    return out


def check_across(printed: Sequence[Printed]) -> list[str]:
    """One figure across views: every reader's number of the same stored figure within the
    roundings of both (what check_stored holds each to; here also where nothing is stored, as for
    stored runs compared live), and one interval too."""
    by: dict[tuple[Key, str], list[Printed]] = {}
    for p in printed:
        if not p.num.claim:
            by.setdefault((p.key, p.what), []).append(p)
    out = []
    for (key, what), ps in by.items():
        lo = max(ps, key=lambda p: p.num.value - p.num.slack)
        hi = min(ps, key=lambda p: p.num.value + p.num.slack)
        if lo.num.value - lo.num.slack > hi.num.value + hi.num.slack + EPS * max(1.0, abs(hi.num.value)):
            out.append(f"{_describe(key)} {what}: {lo.reader} prints {lo.num.text}, {hi.reader} {hi.num.text}")
    return out


def check_one_figure(printed: Sequence[Printed], stored: Stored) -> list[str]:
    """One stored result, one per-op figure (cycles~ where it has them, else the timer's) in every
    view: the A of a stored comparison (its side's result, Stored.side) and a variant's per op
    are that result's figure, within their rounding, as history and show print it."""
    out = []
    for p in printed:
        r: Result | None = None
        if p.key[0] == "comparison" and p.what == "A" and isinstance(p.key[1], int):
            r = stored.side(p.key[1], str(p.key[2]), p.key[4])  # type: ignore[arg-type]
        elif p.key[0] == "variant" and p.what in ("per_op", "mean"):
            _, run, bench, label = p.key
            r = stored.find(int(run), lambda x, b=bench, v=label: x.bench == b and (x.variant or "") == v)
        best = r.best if r is not None else None
        if best is not None and not p.num.claim and not p.num.near(best.value):
            out.append(f"{p.reader}: {_describe(p.key)} {p.what} printed {p.num.text}, its result "
                       f"(#{r.id if r else '?'}) {best.value:.6g}")
    return out


def check_replicates(printed: Sequence[Printed], stored: Stored) -> list[str]:
    """Every replicate of a result printed once in a tool format: as many as are stored."""
    seen: dict[tuple[str, Key, str], set[int]] = {}
    for p in printed:
        if p.what.startswith("rep:"):
            _, unit, i = p.what.split(":")
            seen.setdefault((p.reader, p.key, unit), set()).add(int(i))
    out = []
    for (reader, key, unit), got in seen.items():
        r = stored.result(key)
        want = len(replicates_of(r, unit)) if r is not None else 0
        if got != set(range(want)):
            out.append(f"{reader}: {_describe(key)}: replicates {sorted(got)} printed, {want} stored")
    return out


def breaches(printed: Sequence[Printed], stored: Stored) -> list[str]:
    """Every invariant broken by what was read (an empty list: none)."""
    out: list[str] = []
    for p in printed:
        out += check_stored(p, stored) + check_interval(p) + check_counts(p)
    out += (check_sides(printed) + check_across(printed) + check_replicates(printed, stored)
            + check_one_figure(printed, stored))
    return list(dict.fromkeys(out))
