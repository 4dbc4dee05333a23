"""Measured beside predicted (docs/method.md §12): each measured result's hot loop predicted by
the static models (predict/), the predictions stored with the run (store/predictions). Used by
`--predict` on run, compare and variants, and by `explain`. No printing: what happens is said
through a progress.Progress."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.options import PredictOptions
from cyclebench.experiments.progress import SILENT, Progress
from cyclebench.model import DISTURBED, OK, TIMING
from cyclebench.predict import Target
from cyclebench.prediction import Prediction
from cyclebench.store import predictions as stored

if TYPE_CHECKING:
    from cyclebench.store import Store

__all__ = ["PredictOptions", "explain", "predict_rows", "store_predictions"]


def _one(binary: Path, bench: str, param: int | None, variant: str, tgt: Target,
         opts: PredictOptions, debug: Path | None = None) -> Prediction:
    from cyclebench.predict import predict

    try:
        return predict(binary, bench, param, tgt, variant=variant, use_callgrind=opts.use_callgrind,
                       timeout=opts.timeout, debug=debug)
    except (OSError, subprocess.SubprocessError) as e:
        raise ExperimentError(f"cannot predict {bench}: {e}") from None


def predict_rows(rows: Sequence[Mapping[str, Any]], binaries: Mapping[str, Path], opts: PredictOptions,
                 progress: Progress = SILENT) -> tuple[Target, list[Prediction]]:
    """A Prediction for every measured row (status ok or disturbed, kind timing) whose variant has
    a binary in ``binaries`` (variant label → runner; "" for a command without variants).
    Returns (the predict.Target used, the predictions in the rows' order)."""
    from cyclebench.predict import target

    tgt = target(opts.mcpu)
    out = []
    for r in rows:
        if r.get("status") not in (OK, DISTURBED) or (r.get("kind") or TIMING) != TIMING:
            continue
        variant = r.get("variant") or ""
        binary = binaries.get(variant) or (binaries.get("") if len(binaries) == 1 else None)
        if binary is None:
            continue
        label = r["bench"] + ("" if r.get("param") is None else f"[{r['param']}]")
        progress.step(f"predicting {label}")
        out.append(_one(binary, r["bench"], r.get("param"), variant, tgt, opts))
    return tgt, out


def store_predictions(store: Store, run_id: int, preds: Sequence[Prediction]) -> int:
    """Store ``preds`` with run ``run_id``; returns the rows written."""
    return stored.add(store, run_id, [row for p in preds for row in stored.rows_of(p)])


def explain(binary: Path, bench: str, param: int | None, opts: PredictOptions,
            debug: Path | None = None) -> tuple[Target, Prediction]:
    """(the predict.Target used, the Prediction) of one benchmark for `explain`; ``debug``: the
    same build with -g (its line table names the blocks' source lines)."""
    from cyclebench.predict import target

    tgt = target(opts.mcpu)
    return tgt, _one(binary, bench, param, "", tgt, opts, debug)
