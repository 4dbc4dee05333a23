"""annotate's reading of perf script call chains (runner/perf_record.py): which samples the body
reached, and which symbols are shown. The text is the shape `perf script -F ip,sym,dso
--no-inline` prints (perf 6.1): one line per frame, leaf first, a blank line between samples."""

from __future__ import annotations

from cyclebench.runner.perf_record import hottest, reached

RUNNER = "/cache/build/0123/runner"


def sample(*frames: tuple[str, str]) -> str:
    return "\n".join(f"\t{0x1000 + i:16x} {sym} ({dso})" for i, (sym, dso) in enumerate(frames))


BODY = "cb_body_callee_fib"
UNDER = [("cb_body_callee_fib", RUNNER), ("cb_measure", RUNNER), ("_start", RUNNER)]
OUTSIDE = [("cb_calibrate", RUNNER), ("main", RUNNER), ("_start", RUNNER)]
SCRIPT = "\n\n".join(
    [sample(("fib", RUNNER), ("fib", RUNNER), *UNDER)] * 50
    + [sample(*UNDER)] * 3
    + [sample(("do_syscall_64", "[kernel.kallsyms]"), ("syscall", "/lib/libc.so.6"), *UNDER)] * 2
    + [sample(("memcpy", "/lib/libc.so.6"), *UNDER)]
    + [sample(*OUTSIDE)] * 200  # hotter than fib, but never under the body
    + [sample(("fib", RUNNER))]  # a chain cut short: not counted
) + "\n"


def test_only_samples_with_the_body_on_their_chain_count() -> None:
    counts, total = reached(SCRIPT, BODY)
    assert total == 56
    assert counts[("fib", RUNNER)] == 50 and counts[(BODY, RUNNER)] == 3
    assert counts[("do_syscall_64", "[kernel.kallsyms]")] == 2
    assert ("cb_calibrate", RUNNER) not in counts


def test_hottest_is_bounded_and_keeps_the_body() -> None:
    counts, total = reached(SCRIPT, BODY)
    assert [h.symbol for h in hottest(counts, total, 3, BODY)] == ["fib", BODY, "do_syscall_64"]
    one = hottest(counts, total, 1, BODY)  # the body comes too, after the top
    assert [(h.symbol, round(h.share, 3)) for h in one] == [("fib", round(50 / 56, 3)), (BODY, round(3 / 56, 3))]
    assert hottest(counts, 0, 3, BODY) == []
    # under 1 % of the body's samples: not annotated
    many = reached(SCRIPT + "\n\n".join([sample(("fib", RUNNER), *UNDER)] * 1000), BODY)
    assert "memcpy" not in [h.symbol for h in hottest(*many, 10, BODY)]
