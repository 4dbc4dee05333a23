"""The plan of a measurement: which (benchmark, parameter) pairs, with which batch ladder.

The ladder itself runs inside the C engine (runner.c): batches of k·n_base operations,
k = 1..ladder, shuffled every round, ``repeat`` rounds. This module turns the user's
selection into that work list and into the runner's argv, and estimates its duration
for the progress bar.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cyclebench.model import BenchInfo, Item


class SelectionError(ValueError):
    """The user's selection matches nothing (unknown benchmark, parameter not offered)."""


@dataclass(frozen=True)
class MeasureOptions:
    """Knobs of one measurement (all times in seconds).

    min_time: about how long the timed samples of one benchmark last (it sizes n_base);
    repeat: rounds over the ladder (samples per batch size); ladder: batch sizes per round;
    warmup: untimed batches before sampling; max_time: cap for slow operations (rounds are
    cut, never below 3); min_batch_ns: shortest batch, well above the timer's resolution
    and cost (~40 ref-cycles for fenced rdtsc/rdtscp); seed: ladder shuffling (0: random).
    """

    min_time: float = 0.05
    repeat: int = 40
    ladder: int = 8
    warmup: float = 0.01
    max_time: float = 10.0
    min_batch_ns: int = 2000
    seed: int = 0

    def argv(self) -> list[str]:
        return [
            "--min-time", f"{self.min_time:g}", "--repeat", str(self.repeat), "--ladder", str(self.ladder),
            "--warmup", f"{self.warmup:g}", "--max-time", f"{self.max_time:g}",
            "--min-batch-ns", str(self.min_batch_ns), "--seed", str(self.seed),
        ]

    def expected_seconds(self) -> float:
        """Rough duration of one benchmark, process start-up included, for the ETA."""
        return self.min_time + self.warmup + 0.01

    def timeout(self) -> float:
        """Per-benchmark time limit: generous against slow operations, finite against hangs."""
        return max(20.0, 3 * (self.max_time + self.warmup) + 5)


def plan(
    benches: Sequence[BenchInfo], globs: Iterable[str] = (), params: Iterable[int] = ()
) -> list[Item]:
    """Expand a selection into work items, in listing order.

    globs: fnmatch patterns on ``group/name`` (a bare group name selects the group); none
    selects all. params: only these parameters of parameterised benchmarks; a value the
    benchmark does not list is still run when the benchmark matched by an exact name
    (``-b copy/memcpy -p 100`` measures a 100-byte copy). Raises SelectionError when
    nothing matches.
    """
    globs = list(globs)
    params = list(params)
    chosen: list[BenchInfo] = []
    for pat in globs:
        pats = [pat, f"{pat}/*"] if "/" not in pat else [pat]
        hit = [b for b in benches if any(fnmatch.fnmatchcase(b.name, p) for p in pats)]
        if not hit:
            known = ", ".join(sorted({b.group for b in benches}))
            raise SelectionError(f"no benchmark matches '{pat}' (groups here: {known}; see --list)")
        chosen += [b for b in hit if b not in chosen]
    if not globs:
        chosen = list(benches)
    exact = {g for g in globs if not any(ch in g for ch in "*?[")}
    items: list[Item] = []
    for b in chosen:
        if b.params is None:
            items.append(Item(b.name, None))
            continue
        if not params:
            items += [Item(b.name, p) for p in b.params]
        elif b.name in exact:
            items += [Item(b.name, p) for p in params]
        else:
            items += [Item(b.name, p) for p in b.params if p in params]
    if not items:
        raise SelectionError(f"no selected benchmark takes parameter(s) {', '.join(map(str, params))}")
    return items
