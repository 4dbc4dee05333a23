"""`cyclebench report`'s records (experiments.site, report.site.pages; docs/site.md): what is
kept of a result reads as the rows experiments.history reads, the records a worker sends back
survive pickling, a run is slimmed into a new record, the options that chose the runs are said
back as given, and a run's line on the site says its command and host as show does."""

from __future__ import annotations

import dataclasses
import datetime as dt
import pickle

import pytest

from cyclebench.experiments.history import estimate_of, pooled_by_bench
from cyclebench.experiments.site.builder import _slim
from cyclebench.experiments.site.records import Batch, Filters, Gathered, HistoryBatch, LightResult
from cyclebench.model import Result, Run
from cyclebench.report.site.pages import Digest, Regression, RunLine, SeriesLine, command_name, host_of


def _result(**kw: object) -> Result:
    base: dict[str, object] = {"bench": "lab/a", "param": 64, "variant": "", "status": "ok", "unit": "ns",
                               "per_op": 2.0, "ci_low": 1.9, "ci_high": 2.1, "cycles_per_op": 7.5,
                               "cycles_ci_low": 7.0, "cycles_ci_high": 8.0,
                               "counters": {"events": {}, "derived": {}}}
    return Result(**{**base, **kw})  # type: ignore[arg-type]


def test_a_light_result_reads_as_its_row() -> None:
    r = _result()
    light = LightResult.of(r)
    assert {k: light[k] for k in light if k != "measurement"} == {k: r[k] for k in light if k != "measurement"}
    assert light["measurement"] == "counters"  # what series it is a point of (model.measurement_of)
    assert len(light) == 12 and "counters" not in light and light.get("counters") is None
    with pytest.raises(KeyError):
        light["counters"]
    assert estimate_of(light) == (7.5, "cycles~")  # type: ignore[arg-type]
    assert estimate_of(LightResult.of(_result(cycles_per_op=None))) == (2.0, "ns")  # type: ignore[arg-type]
    assert light.key == ("lab/a", 64, "")
    with pytest.raises(dataclasses.FrozenInstanceError):
        light.per_op = 1.0  # type: ignore[misc]


def test_replicates_pool_from_light_results_as_from_rows() -> None:
    runs = [{"id": i, "group_id": 1 + i // 3} for i in range(6)]
    rows = {i: [_result(cycles_per_op=7.0 + 0.1 * i + 0.05 * (i % 3))] for i in range(6)}
    light = {i: [LightResult.of(r) for r in rs] for i, rs in rows.items()}
    full = pooled_by_bench(runs, rows)  # type: ignore[arg-type]
    assert full and pooled_by_bench(runs, light) == full  # type: ignore[arg-type]


def test_a_batch_crosses_to_the_parent_whole() -> None:
    line = RunLine(id=3, started="2026-01-02 03:04", host="lab-a", kind="compare", status="complete", labels="",
                   results=4)
    batch = Batch(counts={3: 4}, gathered=(Gathered(LightResult.of(_result()), True, "lab-a", 3),),
                  digests=(Digest("compare", line, ()),), pages={"runs/3.html": 1234})
    assert pickle.loads(pickle.dumps(batch)) == batch
    done = HistoryBatch(series=(SeriesLine("lab/a", 64, "", "lab-a-0123456789.html", 2, 24, 1, 1),),
                        regressions=(Regression("lab/a [64]", "lab-a-0123456789.html", "lab-a", 9, "2026-01-02 03:04",
                                                "2026-01-02T03:04:05+00:00", "▲ slower", True, True),),
                        pages={"history/lab-a-0123456789.html": 99})
    assert pickle.loads(pickle.dumps(done)) == done


def test_a_run_is_slimmed_into_a_new_record() -> None:
    run = Run(id=5, host="lab-a", build={"key": "k1"}, env={"cpus": 8}, calibration={"timer": "rdtsc"},
              summary={"rows": []}, labels={"branch": "main"})
    slim = _slim(run)
    assert (slim.env, slim.calibration, slim.summary) == (None, None, None)
    assert (slim.id, slim.host, slim.build, slim.labels) == (5, "lab-a", {"key": "k1"}, {"branch": "main"})
    assert run.env == {"cpus": 8} and run.summary == {"rows": []}  # the one read is unchanged


def test_filters_say_the_options_that_chose_the_runs() -> None:
    assert not Filters() and Filters().text() == ""
    f = Filters(bench="lab/*", host="lab-a", labels={"branch": "main"}, since=dt.date(2026, 1, 2))
    assert f and f.text() == "--bench lab/* --host lab-a --label branch=main --since 2026-01-02"


def test_a_runs_line_says_its_command_and_host() -> None:
    run = Run(id=7, started_at="2026-01-02T03:04:05+00:00", status="complete", host=None, host_id="ab12",
              command=["cyclebench", "compare", "--fixed", "a.c", "b.c"], labels={"note": "<b>x</b>"})
    assert host_of(run) == "ab12" and command_name(run) == "compare"
    assert host_of(dataclasses.replace(run, host="lab-a")) == "lab-a"
    line = RunLine.of(run, 12)
    assert (line.id, line.started, line.host, line.kind, line.status, line.results) == (
        7, "2026-01-02 03:04", "ab12", "compare", "complete", 12)
    assert line.labels == "note=<b>x</b>"  # text: the template escapes it
    assert RunLine.of(Run(id=8, command=None), None).kind == "?" and RunLine.of(Run(id=8), None).results == ""
