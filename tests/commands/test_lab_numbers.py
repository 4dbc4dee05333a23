"""The numbers of every reader of every stored kind of the lab fixture agree (tests/labnumbers.py: its
registry of readers and tables, the invariants): one figure and one interval per result across
`show`, `history`, `runs`, stored `compare` and every export format, each as stored within the
rounding of its digits, every CI holding its estimate, Δ agreeing with the sides a table shows, no
count below zero. Each invariant is then broken on purpose in one formatter, and the checker is
asked to say so: a check that cannot fail would pass whatever the tables print."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from tests import labnumbers
from tests.labnumbers import Interval, Num, Printed

from cyclebench.report import console
from cyclebench.report.export import _rows


@dataclass(frozen=True)
class Read:
    lab: labnumbers.Lab
    printed: list[Printed]
    problems: list[str]


@pytest.fixture(scope="module")
def everything() -> Iterator[Read]:
    """Every reader's every command line on one copy of the fixture, read once (~15 s): the
    invariants below are over all of it together (one figure across views needs every view)."""
    with labnumbers.gallery.lab_copy() as db:
        lab = labnumbers.Lab.of(db)
        printed, problems = labnumbers.read_all(lab)
        yield Read(lab, printed, problems)


def _say(found: list[str]) -> str:
    return f"{len(found)} breach(es):\n" + "\n".join(found[:60])


def test_every_reader_reads_and_every_table_is_known(everything: Read) -> None:
    """No command failed, no output was unread, no table was printed that no TableKind reads."""
    assert not everything.problems, _say(everything.problems)


INVARIANTS: dict[str, Callable[[Read], list[str]]] = {
    "each figure and CI as stored": lambda r: [b for p in r.printed for b in labnumbers.check_stored(p, r.lab.stored)],
    "each CI holds its estimate": lambda r: [b for p in r.printed for b in labnumbers.check_interval(p)],
    "no count below zero": lambda r: [b for p in r.printed for b in labnumbers.check_counts(p)],
    "Δ agrees with its sides, Δ% with Δ ÷ A": lambda r: labnumbers.check_sides(r.printed),
    "one figure across views": lambda r: labnumbers.check_across(r.printed),
    "every replicate once": lambda r: labnumbers.check_replicates(r.printed, r.lab.stored),
    "one result, one per-op figure": lambda r: labnumbers.check_one_figure(r.printed, r.lab.stored),
}


@pytest.mark.parametrize("invariant", INVARIANTS)
def test_the_invariant_holds_over_every_reader(everything: Read, invariant: str) -> None:
    found = INVARIANTS[invariant](everything)
    assert not found, _say(found)


def test_every_reader_every_table_kind_and_every_stored_result_is_read(everything: Read) -> None:
    """The matrix is whole: every registered reader (but `runs`, whose rows are runs) printed
    figures, every registered TableKind read a table, and every stored result with a figure was
    read from some reader — a reader, table or kind that no longer printed, or printed unread,
    would otherwise pass by reading nothing."""
    by_reader = {p.reader for p in everything.printed}
    for reader in labnumbers.READERS:
        if reader.name in ("runs", "compare --by host"):  # runs' rows are runs; one host has no hosts to compare
            continue
        argvs = ["cyclebench " + " ".join(a) for a in reader.argvs(everything.lab)]
        assert any(a in by_reader for a in argvs), f"{reader.name}: no figure read"
    printed_kinds = {p.key[0] for p in everything.printed}
    assert {"result", "comparison", "gate", "variant"} <= printed_kinds
    read = {p.key for p in everything.printed}
    unread = [labnumbers.result_key(r) for r in everything.lab.stored.results
              if r.status == "ok" and r.kind != "emulated" and labnumbers.result_key(r) not in read]
    assert not unread, unread
    # every kind in the registry met its table (each header as printed today)
    seen: set[str] = set()

    def kinds(text: str) -> set[str]:
        return {k.name for t in labnumbers.console_tables(text) for k in labnumbers.TABLES
                if len(t.headers) > 1 and k.matches(t.headers)}

    with labnumbers.gallery.lab_copy() as db:
        argvs = [["show", str(r), "--wide"] for r in everything.lab.runs]
        argvs += [["show", "--bisect", b] for b in labnumbers.gallery.bisects(db, list(everything.lab.runs))]
        argvs += [["runs", "-n", "100"], ["history", "chain/add200", "--wide"]]
        argvs += [["compare", "1", "2", "3", "--wide"]]  # the ranked table: only N stored runs compared print it
        for argv in argvs:
            seen |= kinds(labnumbers.gallery.invoke(argv, db, labnumbers.COLUMNS).output)
    assert seen == {k.name for k in labnumbers.TABLES}, {k.name for k in labnumbers.TABLES} - seen


def test_the_registry_covers_the_readers_matrix(everything: Read) -> None:
    """Every command line tests/commands/test_lab_readers.py runs over the fixture (bench/gallery.py's
    entries) is one a Reader here reads, its numbers held too: a reader added there joins here."""
    lab = everything.lab
    ours = {tuple(a for a in argv if a != "--wide") for reader in labnumbers.READERS for argv in reader.argvs(lab)}
    missing = [" ".join(argv) for argv in lab.entries if argv not in ours]
    assert not missing, f"register a Reader in tests/labnumbers.py for: {missing}"


# ---------------------------------------------------------------- the checker on figures made by hand
def _num(text: str) -> Num:
    got = labnumbers.number(text)
    assert got is not None, text
    return got


def test_numbers_read_with_the_rounding_of_their_digits() -> None:
    assert (_num("140.5").value, _num("140.5").slack) == (140.5, 0.05)
    assert _num("1,080").value == 1080 and _num("1,080").slack == 0.5
    assert _num("+200.0").value == 200.0 and _num("-0.030").slack == 0.0005
    assert math.isclose(_num("17.7M").value, 17.7e6) and math.isclose(_num("17.7M").slack, 0.05e6)
    assert _num("+3.94%").value == 3.94 and _num("1e-05").value == 1e-5
    assert _num("<0.001").near(0.0009) and not _num("<0.001").near(0.0011)
    assert _num("≈0").claim == "≈0" and labnumbers.number("-") is None and labnumbers.number("exact") is None
    i = labnumbers.offsets("-5.9/+19")
    assert i is not None and (i.low.value, i.high.value) == (-5.9, 19.0) and i.offsets
    i = labnumbers.offsets("12.40")
    assert i is not None and (i.low.value, i.high.value) == (-12.4, 12.4)
    i = labnumbers.ends("[+198.5, +200.4]")
    assert i is not None and (i.low.value, i.high.value) == (198.5, 200.4) and not i.offsets


def _row(what: str, text: str, interval: Interval | None = None, key: tuple[object, ...] = ("comparison", 1, "a", "b",
                                                                                           None)) -> Printed:
    return Printed("hand", key, what, _num(text), interval, sides=True)


def test_the_checker_names_each_breach_made_by_hand() -> None:
    """Each invariant on figures made by hand: A 100.6, B 100.8 and Δ −0.030 (what show 25 printed
    before) breaks rule 1's sign; Δ +200.0 beside 199.8 and 400.1 its arithmetic; a CI that does not
    hold its estimate; a count below zero; two views of one figure apart beyond their rounding."""
    sign = [_row("A", "100.6"), _row("B", "100.8"), _row("delta", "-0.030"), _row("rel", "-0.03%")]
    assert any("opposite sign" in b for b in labnumbers.check_sides(sign))
    arithmetic = [_row("A", "199.8"), _row("B", "400.1"), _row("delta", "+200.0"), _row("rel", "+100.11%")]
    assert any("is not B − A" in b for b in labnumbers.check_sides(arithmetic))
    percent = [_row("A", "299.2"), _row("A+Δ", "311.0"), _row("delta", "+11.80"), _row("rel", "+4.94%")]
    assert [b for b in labnumbers.check_sides(percent) if "is not Δ ÷ A" in b]
    assert not labnumbers.check_sides([*percent[:3], _row("rel", "+3.94%")])  # the same row, right
    outside = Printed("hand", ("result", 1, "x", None, ""), "per_op", _num("287.0"), labnumbers.offsets("+5.9/+19"))
    assert labnumbers.check_interval(outside)
    assert not labnumbers.check_interval(Printed("hand", outside.key, "per_op", _num("287.0"),
                                                 labnumbers.offsets("-5.9/+19")))
    assert labnumbers.check_counts(Printed("hand", outside.key, "sim:Bcm", _num("-0.2")))
    apart = [Printed("console", outside.key, "cycles", _num("199.8")), Printed("csv", outside.key, "cycles",
                                                                              _num("199.558401801916"))]
    assert labnumbers.check_across(apart)
    # a paired table's A as the median over its pairs (299.6), not its result's figure (299.3)
    side = ("comparison", 24, "lib/work @ 71e7168 (GOOD)", "lib/work @ d0c0d22 (M)", None)
    with labnumbers.gallery.lab_copy() as db:
        stored = labnumbers.Lab.of(db).stored
        assert labnumbers.check_one_figure([Printed("hand", side, "A", _num("299.6"))], stored)
        assert not labnumbers.check_one_figure([Printed("hand", side, "A", _num("299.3"))], stored)
    assert not labnumbers.check_across([apart[0], Printed("csv", outside.key, "cycles", _num("199.83"))])


# ---------------------------------------------------------------- breaches planted in the formatters
def _read(argvs: list[list[str]]) -> list[str]:
    """The breaches in what ``argvs`` print (each through its reader in the registry)."""
    with labnumbers.gallery.lab_copy() as db:
        lab = labnumbers.Lab.of(db)
        printed, problems = [], []
        for argv in argvs:
            reader = next(r for r in labnumbers.READERS if argv in r.argvs(lab))
            p, b = labnumbers.read(reader, argv, lab)
            printed += p
            problems += b
        return problems + labnumbers.breaches(printed, lab.stored)


def _scaled_fmt(x: float | None) -> str:
    return _fmt(None if x is None else x * 1.01)


_fmt = console.fmt
_replicates = _rows.replicates
_fmt_ci = console.fmt_ci
_figures = console.comparison_figures


def _mean_half(value: float | None, low: float | None, high: float | None) -> str:
    """The ± cyclebench printed before: the mean half-width, whatever the CI's shape."""
    return "-" if low is None or high is None else _fmt_ci((high - low) / 2)


def _flipped(value: float | None, low: float | None, high: float | None) -> str:
    """Both ends above the estimate: a CI that does not hold it."""
    assert value is not None and low is not None and high is not None
    return f"+{_fmt_ci(value - low)}/+{_fmt_ci(high - value)}"


def _rel_doubled(c: console.Comparison, paired: bool) -> tuple[str, str, str, str, str, str]:
    a, b, d, _, ci, p = _figures(c, paired)
    return a, b, d, f"{200 * c.rel:+.2f}%", ci, p


def _diff_off(c: console.Comparison, paired: bool) -> tuple[str, str, str, str, str, str]:
    a, b, _, rel, ci, p = _figures(c, paired)
    return a, b, console.signed(c.diff + 0.05), rel, ci, p


@dataclass(frozen=True)
class Plant:
    """A breach put in one formatter: ``target`` (module, name) replaced by ``by``; what
    ``argvs`` print must then break ``says`` (a piece of each breach message expected)."""

    target: tuple[str, str]
    by: object
    argvs: tuple[tuple[str, ...], ...]
    says: tuple[str, ...]


PLANTS = {
    "a per-op figure off by 1%": Plant(("cyclebench.report.console", "fmt"), _scaled_fmt, (("show", "1", "--wide"),),
                                      ("run #1 chain/add400 per_op: printed 289.9, stored 287.0",)),
    "a lopsided CI printed as one ±": Plant(
        ("cyclebench.report.console", "fmt_interval"), _mean_half, (("show", "1", "--wide"),),
        ("run #1 chain/add400 per_op: printed CI 12.40, stored -x/+y -5.94053/+18.8541",)),
    "a CI that does not hold its estimate": Plant(
        ("cyclebench.report.console", "fmt_interval"), _flipped, (("show", "1", "--wide"),),
        ("chain/add400 per_op 287.0: its CI +5.9/+18.85 does not hold it",)),
    "B shown as B's own median beside the median paired Δ": Plant(
        ("cyclebench.report.console", "paired_table"), lambda rows: False,
        (("show", "25", "--wide"), ("show", "12", "--wide"), ("show", "22", "--wide")),
        ("lib/flat @ d0c0d22 · lib/flat @ 069bbd9 of 25: Δ -0.030 and B − A (+0.1) of opposite sign",
         "chain/add200 · chain/add400 of 12: Δ +200.0 is not B − A (400.3 − 199.6 = +200.7)",
         "(GOOD) · lib/work @ cf27b68 (BAD) of 22: Δ +11.80 is not B − A (310.2 − 299.2 = +11)")),
    "Δ% that is not Δ ÷ A": Plant(("cyclebench.report.console", "comparison_figures"), _rel_doubled,
                                  (("show", "12", "--wide"),), ("Δ% +200.48% is not Δ ÷ A",)),
    "a count per op below zero": Plant(("cyclebench.report.export.benchstat", "max"), lambda a, b: a,
                                       (("export", "4", "--format", "benchstat"),),
                                       ("run #4 chain/add200 sim:Bcm -0.2 below zero",)),
    "a replicate left out of the tool formats": Plant(
        ("cyclebench.report.export._rows", "replicates"), lambda row, key: _replicates(row, key)[:1],
        (("export", "1", "--format", "gbench"), ("export", "1", "--format", "pyperf")),
        ("export 1 --format gbench: run #1 chain/add400: replicates [0] printed, 2 stored",
         "export 1 --format pyperf: run #1 chain/add400: replicates [0] printed, 2 stored")),
    "a variant's invocations' mean shown as its per-op figure": Plant(
        ("cyclebench.report.variants", "_figure"), lambda v: (v.get("mean"), v.get("ci_low"), v.get("ci_high")),
        (("show", "15", "--wide"),), ("variant 15 chain/add200 -O2 per_op printed 198.3, its result",)),
    "one view of a figure nothing stores apart from another": Plant(
        ("cyclebench.report.export._rows", "comparison_figures"), _diff_off,
        (("compare", "g6", "g9", "--wide"), ("compare", "g6", "g9", "--format", "markdown")),
        ("comparison chain/add200 build=a #6,7,8 · build=b #9,10,11 of stored:g6 g9 delta: cyclebench compare g6 g9 "
         "--format markdown prints +0.491, cyclebench compare g6 g9 --wide +0.441",)),
}


@pytest.mark.parametrize("plant", PLANTS)
def test_a_planted_breach_is_caught(plant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    p = PLANTS[plant]
    argvs = [list(a) for a in p.argvs]
    assert not _read(argvs), "the views are sound before the plant"
    module, name = p.target
    monkeypatch.setattr(f"{module}.{name}", p.by, raising=name != "max")  # max: a builtin, shadowed
    found = _read(argvs)
    for piece in p.says:
        assert any(piece in b for b in found), f"{plant}: no breach says {piece!r}:\n" + "\n".join(found)
