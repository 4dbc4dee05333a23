"""`--predict` on run, compare and variants (docs/method.md §12): the options, and what a command
does after its run is stored — each measured result's hot loop predicted (experiments/predict),
the predictions stored with the run, the table measured beside predicted printed
(report/predict)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

mcpu_option = click.option("--mcpu", metavar="CPU", default=None,
                           help="The CPU model the static models use: an llvm-mca -mcpu name (znver4), an OSACA "
                                "arch (ZEN4), or both comma-separated. Default: from cpuid.")


def predict_options(f: F) -> F:
    """Adds --predict and --mcpu; the command gets ``predict: PredictOptions | None``."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kw: Any) -> Any:
        from cyclebench.experiments.options import PredictOptions

        on, mcpu = kw.pop("predict_flag"), kw.pop("mcpu")
        if mcpu is not None and not on:
            raise click.UsageError("--mcpu goes with --predict")
        kw["predict"] = PredictOptions(mcpu=mcpu) if on else None
        return f(*args, **kw)

    wrapper = mcpu_option(wrapper)
    wrapper = click.option("--predict", "predict_flag", is_flag=True,
                           help="Also predict each result's hot loop with llvm-mca and OSACA (static models) and "
                                "show them beside the measurement (stored with the run).")(wrapper)
    return wrapper  # type: ignore[return-value]


def after_run(predict: Any, store: Any, run_id: int, binaries: Mapping[str, Path], wide: bool = False,
              quiet: bool = False) -> None:
    """Predict the run's measured results, store the predictions, print the table (stdout) unless
    ``quiet``. Nothing when ``predict`` is None."""
    if predict is None:
        return
    from cyclebench.experiments.errors import ExperimentError
    from cyclebench.experiments.predict import predict_rows, store_predictions
    from cyclebench.report.predict import predicted_group
    from cyclebench.store import StoreError
    from cyclebench.ui.common import UserError, err, out

    rows = store.results(run_id)

    class _Status:
        def __init__(self, status: Any) -> None:
            self.status = status

        def step(self, label: str) -> None:
            self.status.update(label)

        def note(self, text: str) -> None:
            err.print(text, highlight=False)

    try:
        with err.status("predicting", spinner="dots") as status:
            tgt, preds = predict_rows(rows, binaries, predict, _Status(status))
        store_predictions(store, run_id, preds)
    except (ExperimentError, StoreError) as e:
        raise UserError(f"{e} (the measurements are stored: run #{run_id})") from None
    if not preds:
        err.print("cyclebench: --predict: no timed result of a native build to predict (simulated, emulated or "
                  "failed results are not)", style="yellow", highlight=False)
    elif not quiet:
        out.print(predicted_group(rows, preds, title=f"run #{run_id} · measured beside predicted", wide=wide,
                                  target_line=tgt.line()))


def finish_then_predict(finish: Callable[[], None], predict: Any, store: Any, run_id: int | None, build: Any,
                        wide: bool, quiet: bool) -> None:
    """``finish()`` (tables, exports, the exit status), then :func:`after_run` on the run's one
    build when --predict asked and a run was measured; shown before an exit 1 too (a failed
    benchmark, ``--fail-on``), so a failing comparison still shows what the models predicted."""
    if predict is None or run_id is None:
        return finish()
    from cyclebench.build import build as build_binary

    binaries = {"": build_binary(build.spec()).path}
    try:
        finish()
    except SystemExit:
        after_run(predict, store, run_id, binaries, wide, quiet)
        raise
    after_run(predict, store, run_id, binaries, wide, quiet)


def variant_binaries(sweep: Any, build: Any, pin: Any) -> dict[str, Path]:
    """Each native variant's runner (label → path), rebuilt from the cache as `variants` built it."""
    from cyclebench.experiments.variants import build_all

    built, _unbuilt, _skipped = build_all(sweep.variants, build, pin)
    return {b.variant.label: b.binary.path for b in built if not b.variant.emulated}
