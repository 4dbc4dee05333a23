"""run's passes (interleave.in_passes): fixed, or until a target precision
(`run --target-ci`) — the bookkeeping, with a stand-in runner (no compiler, no timing)."""

from __future__ import annotations

from typing import Any

from cyclebench.model import OK, Outcome
from cyclebench.runner import interleave
from cyclebench.runner.plan import MeasureOptions


class FakeRunner:
    """Runner.run's signature; every process takes ``wall`` seconds and succeeds."""

    def __init__(self, wall: float = 0.01, fail: str | None = None) -> None:
        self.calls: list[tuple[str, int]] = []
        self.wall, self.fail = wall, fail

    def run(self, bench: str, param: int | None, opts: MeasureOptions, timeout: float, events: Any = None) -> Outcome:
        self.calls.append((bench, opts.repeat))
        status = "crashed" if bench == self.fail else OK
        return Outcome(bench, param, status, result={"rounds": opts.repeat}, wall_s=self.wall)


def _passes(runner: FakeRunner, precision: interleave.Precision | None, max_time: float = 10.0,
            processes: int = 3) -> dict[str, int]:
    got: dict[str, int] = {}
    items = [("a/precise", None), ("b/noisy", None), ("c/crash", None)]

    def done(i: int, outs: list[Outcome], _partial: bool) -> None:
        got[items[i][0]] = len(outs)

    interleave.in_passes(runner, items, MeasureOptions(repeat=40, max_time=max_time), processes,  # type: ignore[arg-type]
                         done, precision=precision)
    return got


def test_fixed_passes_split_the_rounds() -> None:
    r = FakeRunner(fail="c/crash")
    assert _passes(r, None) == {"a/precise": 3, "b/noisy": 3, "c/crash": 1}  # a crash is not measured again
    assert {n for b, n in r.calls} == {14}  # split(40, 3)


def test_precise_items_stop_early_and_imprecise_ones_get_more() -> None:
    def needs_more(i: int, outs: list[Outcome]) -> bool:
        return i == 1  # b/noisy never reaches the target

    r = FakeRunner(fail="c/crash")
    got = _passes(r, interleave.Precision(needs_more, rounds=10, min_passes=3, max_passes=8))
    assert got == {"a/precise": 3, "b/noisy": 8, "c/crash": 1}
    assert {n for b, n in r.calls} == {10}


def test_more_passes_stop_at_the_time_cap() -> None:
    # 0.3 s a pass, --max-time 1.4 s: the planned 4 passes (40 rounds / 10) run, a fifth would
    # end at 1.5 s, past the cap, so none
    r = FakeRunner(wall=0.3)
    got = _passes(r, interleave.Precision(lambda i, o: True, rounds=10, min_passes=3, max_passes=8), max_time=1.4)
    assert got["b/noisy"] == 4 and got["a/precise"] == 4


def test_more_passes_only_where_the_target_is_within_reach() -> None:
    from cyclebench.stats.result import worth_more

    assert not worth_more(0.008, 0.01, 3, 8)  # already there
    assert worth_more(0.015, 0.01, 3, 8)  # 3 × 2.25 = 6.75 passes would do
    assert not worth_more(0.10, 0.01, 3, 8)  # 300 passes: the host's spread, not too few rounds


def test_an_item_never_extended_finishes_no_later_than_any_other() -> None:
    # run's loop reference comes first and is never extended, so it is stored before any other
    # result, whose net cost needs it (a loop/empty given more passes left chain/add400 without net)
    order: list[str] = []
    items = [("loop/empty", None), ("a/x", None), ("b/y", None)]

    def done(i: int, outs: list[Outcome], _partial: bool) -> None:
        order.append(items[i][0])

    interleave.in_passes(FakeRunner(), items, MeasureOptions(repeat=40, max_time=10.0), 3,  # type: ignore[arg-type]
                         done, precision=interleave.Precision(lambda i, o: i == 1, rounds=10, min_passes=3,
                                                              max_passes=8))
    assert order == ["loop/empty", "b/y", "a/x"]
