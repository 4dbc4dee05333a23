"""What a host has shown before: the run-to-run spread of each benchmark in earlier replicate
groups (`run --runs N`) of the same build on the same host (stats/runs.py pools it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cyclebench.model import OK
from cyclebench.stats.runs import pooled_spread
from cyclebench.store import Store


def estimate_of(row: dict[str, Any]) -> tuple[float | None, str]:
    """A run's figure for a benchmark: cycles~ per op when it has one, else per op in its unit."""
    if row.get("cycles_per_op") is not None:
        return row["cycles_per_op"], "cycles~"
    return row.get("per_op"), row.get("unit") or ""


def host_spread(store: Store, run: dict[str, Any], exclude: set[int],
                before: int | None = None) -> dict[tuple[Any, ...], tuple[float, int]]:
    """(sd, df) of every benchmark's run estimates pooled over the earlier replicate groups
    (`run --runs N`) of ``run``'s build on ``run``'s host, the runs in ``exclude`` left out
    (and, with ``before``, every run from that id on: what was known when it ran): the
    run-to-run spread that benchmark has shown here."""
    replicates = replicates_of(store.list_runs(None), run, exclude, before)
    return pooled_by_bench(replicates, store.results_of([r["id"] for r in replicates]))  # one query


def replicates_of(runs: Iterable[dict[str, Any]], run: dict[str, Any], exclude: set[int],
                  before: int | None = None) -> list[dict[str, Any]]:
    """Among ``runs``, the replicate runs (of a group) host_spread pools for ``run``: its
    build on its host, complete or interrupted, not in ``exclude``, and (with ``before``)
    older than that run id."""
    build_key = (run.get("build") or {}).get("key")
    return [r for r in runs
            if r.get("group_id") is not None and r["id"] not in exclude and r.get("host_id") == run.get("host_id")
            and (before is None or r["id"] < before)
            and (r.get("build") or {}).get("key") == build_key and r.get("status") in ("complete", "interrupted")]


def pooled_by_bench(replicates: Sequence[dict[str, Any]], rows: Mapping[int, Sequence[dict[str, Any]]],
                    ) -> dict[tuple[Any, ...], tuple[float, int]]:
    """(bench, param, variant) → (sd, df) of the replicates' estimates (estimate_of), pooled
    over their groups (stats.runs.pooled_spread); ``rows``: each replicate's result rows."""
    groups: dict[tuple[Any, ...], dict[int, list[float]]] = {}
    for r in replicates:
        for x in rows[r["id"]]:
            v, _ = estimate_of(x)
            if x["status"] == OK and v is not None:
                groups.setdefault((x["bench"], x["param"], x["variant"]), {}).setdefault(r["group_id"], []).append(v)
    out = {}
    for key, by_group in groups.items():
        spread = pooled_spread(list(by_group.values()))
        if spread is not None:
            out[key] = spread
    return out
