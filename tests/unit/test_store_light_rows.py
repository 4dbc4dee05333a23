"""Store.results_of(raw=False): every field as results_of gives it, the runner line without the
calibration chains' raw readings (RAW_EXTRA) and its other keys in their order (the counters
table's columns follow theirs) — what `cyclebench report` reads for thousands of runs."""

from __future__ import annotations

from pathlib import Path

from cyclebench.store import Store
from cyclebench.store.columns import RAW_EXTRA


def test_light_rows_are_the_rows_less_the_raw_chains(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    rid = store.begin_run(command=["cyclebench", "run"], host="h", status="complete")
    extra = {"type": "result", "chain": {"kind": "add", "short_ticks": [234] * 32}, "sched": {"policy": "SCHED_OTHER"},
             "chains": [{"kind": "add"}], "counters": {"events": {"z-event": {"per_op": 1.0}, "a-event": {}}},
             "disturb_source": "nivcsw+run_delay"}
    store.add_result(rid, {"bench": "a/b", "status": "ok", "unit": "ns", "per_op": 1.5, "extra": extra})
    store.add_result(rid, {"bench": "a/c", "status": "ok", "unit": "ns", "per_op": 2.5, "extra": None})
    full, light = store.results_of([rid])[rid], store.results_of([rid], raw=False)[rid]
    assert [r["bench"] for r in light] == [r["bench"] for r in full]
    for f, lt in zip(full, light, strict=True):  # only the runner line differs
        assert {k: v for k, v in f.items() if k != "line"} == {k: v for k, v in lt.items() if k != "line"}
    assert full[0].line is not None and light[0].line is not None
    assert set(RAW_EXTRA) <= set(full[0].line)
    assert list(light[0].line) == [k for k in extra if k not in (*RAW_EXTRA, "counters")]  # the same keys, in order
    assert light[0].counters is not None and list(light[0].counters["events"]) == ["z-event", "a-event"]
    assert light[1].line is None and light[1].counters is None
    store.close()
