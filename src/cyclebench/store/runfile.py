"""Lossless JSON export and import of a stored run.

Format (``format: "cyclebench-run"``, ``version: 1``): the run row, and for each result
its row and its raw samples as two parallel integer lists ``iters`` and ``ticks``. Loading
the file and importing it into another database gives back the same rows and samples, so
a run can be moved between machines and re-analysed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cyclebench.store import RESULT_FIELDS, Store

FORMAT, VERSION = "cyclebench-run", 1
RUN_FIELDS = ("started_at", "finished_at", "status", "command", "host", "cpu_model", "cpu", "tool_version",
              "code_rev", "build", "calibration", "env", "summary")


class ExportError(Exception):
    """Unknown run id, or a file that is not a cyclebench run export."""


def run_to_dict(store: Store, run_id: int) -> dict[str, Any]:
    run = store.get_run(run_id)
    if run is None:
        raise ExportError(f"no run {run_id} in {store.url}")
    out_results = []
    for r in store.results(run_id):
        s = store.samples(r["id"])
        row = {k: r[k] for k in RESULT_FIELDS}
        row["samples"] = {"iters": [x[0] for x in s], "ticks": [x[1] for x in s], "cal": [x[2] for x in s],
                          "disturbed": [x[3] for x in s], "pmu": [x[4] for x in s]}
        out_results.append(row)
    return {"format": FORMAT, "version": VERSION, "run": {k: run[k] for k in RUN_FIELDS},
            "source": {"db": store.url, "run_id": run_id}, "results": out_results}


def dump(data: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(data, indent=1, allow_nan=True) + "\n")


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ExportError(f"{path}: not readable JSON ({e})") from e
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ExportError(f"{path}: not a cyclebench run export")
    if int(data.get("version", 0)) > VERSION:
        raise ExportError(f"{path}: export version {data['version']} is newer than this cyclebench")
    return data


def import_run(store: Store, data: dict[str, Any]) -> int:
    """Insert an exported run (new ids); returns the new run id."""
    run = dict(data["run"])
    run_id = store.begin_run(**{k: run.get(k) for k in RUN_FIELDS if k not in ("status",)})
    for r in data["results"]:
        smp = r.get("samples") or {}
        iters, ticks = smp.get("iters", []), smp.get("ticks", [])
        cal = smp.get("cal") or [None] * len(iters)
        dist = smp.get("disturbed") or [None] * len(iters)
        pmu = smp.get("pmu") or [None] * len(iters)
        store.add_result(run_id, r, list(zip(iters, ticks, cal, dist, pmu, strict=True)))
    store.update_run(run_id, status=run.get("status") or "complete", finished_at=run.get("finished_at"))
    return run_id
