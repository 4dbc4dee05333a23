"""The one way a measuring command ends: what stops it is one line (exit 2), Ctrl-C keeps what
was measured and says so (exit 130), and a run with failed rows exits 1 naming how many.

    with finishing(kept=lambda: f"{len(rows)} result(s) kept ({store.url})"):
        ... build and measure ...
    exit_status(rows, "benchmark(s)")
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from cyclebench.build import BuildError, ToolMissing
from cyclebench.experiments.errors import ExperimentError
from cyclebench.runner import RunnerError
from cyclebench.runner.plan import SelectionError
from cyclebench.store import StoreError
from cyclebench.ui.common import FAILED_STATUSES, UserError, err

__all__ = ["exit_status", "finishing"]


@contextmanager
def finishing(kept: Callable[[], str | None] | None = None, interrupt: bool = True) -> Iterator[None]:
    """Inside it: a build that fails prints the compiler's output, then one line (UserError,
    exit 2); a runner, selection, store or experiment error is one line; Ctrl-C (or SIGTERM,
    SIGHUP: cli.Terminated) prints ``interrupted: <kept()>`` — what is stored; ``interrupted``
    alone when there is nothing to say (no ``kept``, or it gives None) — and exits 130;
    ``interrupt=False`` leaves Ctrl-C to the caller."""
    try:
        yield
    except BuildError as e:
        if e.output:
            err.print(e.output, markup=False, highlight=False)
        above = e.output and not isinstance(e, ToolMissing)
        raise UserError(f"{e} (compiler output above)" if above else str(e)) from None
    except (RunnerError, SelectionError, StoreError, ExperimentError, FileNotFoundError) as e:
        raise UserError(str(e)) from None
    except KeyboardInterrupt:
        if not interrupt:
            raise
        said = kept() if kept is not None else None
        err.print(f"cyclebench: interrupted: {said}" if said else "cyclebench: interrupted", highlight=False)
        sys.exit(130)


def exit_status(rows: Iterable[Mapping[str, Any]], what: str = "benchmark(s)") -> None:
    """Exit 1, saying how many, when a row crashed, hung, failed verification or could not be
    built; else return (skipped and disturbed rows are not failures)."""
    bad = [r for r in rows if r.get("status") in FAILED_STATUSES]
    if bad:
        err.print(f"cyclebench: {len(bad)} {what} did not produce a valid result (see notes)", style="red")
        sys.exit(1)
