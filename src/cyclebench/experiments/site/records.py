"""The records `cyclebench report`'s reading makes and hands on (experiments.site): the runs
chosen, show's recipe handed in, what is kept of a result, what a batch of run or history pages
gives back from a worker, the site built."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cyclebench.model import Result, Run, measurement_of
from cyclebench.report.site import Capture, Written
from cyclebench.report.site.pages import Digest, Key, Regression, SeriesLine
from cyclebench.report.site.revisions import RevisionRun

if TYPE_CHECKING:
    from cyclebench.store import Store


@dataclass(frozen=True)
class Filters:
    """Which runs the site shows (all filters in SQL, as `runs`: Store.list_runs's): a benchmark
    glob, a host name or id, labels that must all match, the first day (UTC)."""

    bench: str | None = None
    host: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    since: dt.date | None = None

    def __bool__(self) -> bool:
        return bool(self.bench or self.host or self.labels or self.since)

    def text(self) -> str:
        """The filters as the options that chose them (every page's footer says them)."""
        parts = ([f"--bench {self.bench}"] if self.bench else []) + ([f"--host {self.host}"] if self.host else [])
        parts += [f"--label {k}={v}" for k, v in self.labels.items()]
        parts += [f"--since {self.since.isoformat()}"] if self.since else []
        return " ".join(parts)


@dataclass(frozen=True)
class Show:
    """show's recipe and compare --by host's rows, handed in by the command (experiments/ imports
    no command): ``print_run(store, run, wide, console, notes)`` prints a stored run as `show`
    does (``store``: a :class:`Snapshot` standing in for Store's read side);
    ``is_comparison``/``is_variants`` say whether a run's summary holds compare's verdicts or
    variants' rankings; ``host_rows(store, {host: [runs]})`` is compare --by host's rows."""

    print_run: Callable[[Any, Run, bool, Capture, Capture], None]
    is_comparison: Callable[[Run], bool]
    is_variants: Callable[[Run], bool]
    host_rows: Callable[[Store, dict[str, list[Run]]], Sequence[Any]]


@dataclass(frozen=True, slots=True)
class LightResult(Mapping[str, Any]):
    """What the site keeps of a valid result row for the histories and of a replicate run's row
    for the run-to-run spread (experiments.history reads either as a mapping, as it reads a
    Result): its benchmark, status, unit, per-op estimate and 95% CI, and the same in cycles~.
    A few hundred thousand are kept: slots, not a Result's 67 fields."""

    bench: str
    param: int | None
    variant: str
    status: str
    unit: str | None
    per_op: float | None
    ci_low: float | None
    ci_high: float | None
    cycles_per_op: float | None
    cycles_ci_low: float | None
    cycles_ci_high: float | None
    measurement: str  # model.measurement_of: what series it can be a point of (model.series_key)

    @classmethod
    def of(cls, r: Result) -> LightResult:
        return cls(bench=str(r.bench), param=r.param, variant=str(r.variant or ""), status=r.status, unit=r.unit,
                   per_op=r.per_op, ci_low=r.ci_low, ci_high=r.ci_high, cycles_per_op=r.cycles_per_op,
                   cycles_ci_low=r.cycles_ci_low, cycles_ci_high=r.cycles_ci_high, measurement=measurement_of(r))

    @property
    def key(self) -> Key:
        return (self.bench, self.param, self.variant)

    def __getitem__(self, key: str) -> Any:
        if key not in _LIGHT:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(_LIGHT)

    def __len__(self) -> int:
        return len(_LIGHT)


_LIGHT = frozenset(LightResult.__dataclass_fields__)


@dataclass(frozen=True, slots=True)
class Gathered:
    """A valid result of a benchmark the site shows, for its history: the row, whether it is a
    point of a history (a kind with one, report.site.pages.HISTORY_KINDS, of an ordinary run,
    model.ORDINARY: a bisect's revisions have pages of their own), the host and run it came from."""

    row: LightResult
    timed: bool
    host: str
    run: int


@dataclass(frozen=True)
class Batch:
    """What a batch of runs gave: each run's number of results, the valid results gathered, the
    compare, variants and scale runs' digests, the pages written (path → bytes), the runs that
    measured revisions (a bisect's sittings, `compare --rev`)."""

    counts: Mapping[int, int]
    gathered: tuple[Gathered, ...]
    digests: tuple[Digest, ...]
    pages: Mapping[str, int]
    revisions: tuple[RevisionRun, ...] = ()


@dataclass(frozen=True)
class HistoryBatch:
    """What a batch of history pages gave: their lines on the benchmarks index, their open
    regressions, the pages written (path → bytes)."""

    series: tuple[SeriesLine, ...]
    regressions: tuple[Regression, ...]
    pages: Mapping[str, int]


@dataclass(frozen=True)
class Built:
    """A site written: its pages (report.site.Written), the runs shown, the benchmark histories."""

    written: Written
    runs: int
    histories: int


