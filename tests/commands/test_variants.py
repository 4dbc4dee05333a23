"""`cyclebench variants`: builds side by side; the aarch64 atomics codegen finding
(docs/references.md#aarch64-atomics-postgresql-2021)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import DATA, cli

EXAMPLES = Path(__file__).parents[2] / "examples"
CROSS = [t for t in ("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-objdump", "qemu-aarch64") if not shutil.which(t)]


def test_native_flag_variants(db: str, tmp_path: Path) -> None:
    out = tmp_path / "v.json"
    r = cli("variants", str(DATA / "chain.c"), "--flags", "-O1", "--flags", "-O2 -falign-functions=64",
            "-b", "chain/add200", "--rounds", "6", "--min-time", "0.01", "--json", str(out))
    assert r.exit_code == 0, r.output
    [d] = json.loads(out.read_text())
    a, b = d["variants"]
    assert (a["label"], b["label"]) == ("-O1", "-O2 -falign-functions=64")
    assert a["comparison"] is None and b["comparison"] is not None
    assert len(a["per_invocation"]) == 6 and all(x > 0 for x in a["per_invocation"])
    assert a["body_bytes"] > 600 and a["text_bytes"] > a["body_bytes"]  # 200 adds of 3 bytes
    # the same chain either way: no verdict
    assert b["comparison"]["verdict"] == "~"
    # every key stored is one model.BenchEntry / VariantEntry / ComparisonJSON names
    from typing import get_type_hints

    from cyclebench.model import BenchEntry, ComparisonJSON, VariantEntry

    assert set(d) == set(get_type_hints(BenchEntry))
    assert set(a) | set(b) <= set(get_type_hints(VariantEntry)) and {"label", "mean", "counters"} <= set(b)
    assert set(b["comparison"]) == set(get_type_hints(ComparisonJSON))


@pytest.mark.skipif(bool(CROSS), reason=f"cross toolchain not installed: {', '.join(CROSS)} "
                    "(apt-get install gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user)")
def test_aarch64_casal_only_with_lse(db: str, tmp_path: Path) -> None:
    out = tmp_path / "cas.json"
    r = cli("variants", str(EXAMPLES / "cas_counter.c"), "--target", "aarch64", "--flags", "-O2",
            "--flags", "-O2 -march=armv8.2-a", "--flags", "-O2 -mno-outline-atomics", "--disasm", "--json", str(out))
    assert r.exit_code == 0, r.output
    [d] = [x for x in json.loads(out.read_text()) if x["bench"] == "atomic/cas_counter"]
    outline, lse, llsc = d["variants"]
    assert all(v["emulated"] and v["status"] == "ok" for v in d["variants"])  # verify hooks passed under qemu
    has = lambda v, op: any(i.split()[0] == op for i in v["disasm"])  # noqa: E731
    assert has(lse, "casal") and not has(outline, "casal") and not has(llsc, "casal")
    assert has(llsc, "ldaxr") and has(llsc, "stlxr")
    assert any(c.startswith("__aarch64_cas") for c in outline["calls"])
    assert "emulated" in r.output and "casal" in r.output
    # never a time for an emulated run
    assert all(v["per_invocation"] is None and v["comparison"] is None for v in d["variants"])


def test_variant_errors(db: str) -> None:
    r = cli("variants", str(DATA / "chain.c"), "--flags", "-O2", "--flags", "-O2")
    assert r.exit_code == 2 and "same build" in r.output
    r = cli("variants", str(DATA / "chain.c"), "--cc", "no-such-cc")
    assert r.exit_code == 2 and "not found" in r.output


def test_ctrl_c_keeps_the_benchmarks_measured_on_every_variant(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """chain/add200 is measured on both variants and stored; Ctrl-C during chain/add400 keeps it."""
    from cyclebench.runner import Runner
    from cyclebench.store import Store

    real = Runner.run

    def run(self: Runner, bench: str, *a: object, **kw: object) -> object:
        if bench == "chain/add400":
            raise KeyboardInterrupt
        return real(self, bench, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Runner, "run", run)
    r = cli("variants", str(DATA / "chain.c"), "--flags", "-O1", "--flags", "-O2", "-b", "chain/add200",
            "-b", "chain/add400", "--rounds", "6", "--min-time", "0.01")
    assert r.exit_code == 130 and "1 benchmark(s)" in r.output, r.output
    s = Store(db)
    run_ = s.get_run(s.last_run_id())
    assert run_["status"] == "interrupted"
    assert sorted((x["bench"], x["variant"]) for x in s.results(run_["id"])) == [
        ("chain/add200", "-O1"), ("chain/add200", "-O2")]


def test_a_hung_variant_is_not_retried_and_the_others_are_measured(db: str, tmp_path: Path) -> None:
    """A hung variant was once re-invoked every round (6 × 35 s); then the pairing of the
    rest must not break (an IndexError once)."""
    import time

    out = tmp_path / "v.json"
    t0 = time.monotonic()
    r = cli("variants", str(DATA / "varhang.c"), "--flags", "-O2", "--flags", "-O2 -DHANG", "--flags", "-O1",
            "--rounds", "6", "--min-time", "0.01", "--timeout", "2", "--json", str(out))
    assert time.monotonic() - t0 < 60  # one 2 s timeout, not six
    assert r.exit_code == 1, r.output
    assert "Traceback" not in r.output
    [d] = json.loads(out.read_text())
    status = {v["label"]: v["status"] for v in d["variants"]}
    assert status["-O2 -DHANG"] == "timeout" and status["-O2"] == "ok" and status["-O1"] == "ok"


def test_a_variant_that_does_not_build_is_named_and_the_others_are_measured(db: str, tmp_path: Path) -> None:
    """One bad flag set once aborted every variant, without naming it."""
    out = tmp_path / "v.json"
    r = cli("variants", str(DATA / "varhang.c"), "--flags", "-O2", "--flags", "-O2 -mno-such-flag-here",
            "--rounds", "6", "--min-time", "0.01", "--json", str(out))
    assert r.exit_code == 1
    assert "variant '-O2 -mno-such-flag-here'" in r.output and "Traceback" not in r.output
    [d] = json.loads(out.read_text())
    assert [v["label"] for v in d["variants"]] == ["-O2"] and d["variants"][0]["status"] == "ok"


VALGRIND = shutil.which("valgrind")


@pytest.mark.skipif(VALGRIND is None, reason="valgrind not installed (apt-get install valgrind)")
def test_ranked_table_sizes_and_different_work(db: str, tmp_path: Path) -> None:
    """Ranked by the chosen metric, the baseline marked, size(1)'s columns of the
    benchmark file's own object, and a variant doing extra work flagged by callgrind's Ir."""
    import subprocess

    out = tmp_path / "v.json"
    r = cli("variants", str(DATA / "extra_work.c"), "--flags", "-O2 -DEXTRA=1", "--flags", "-O2", "--flags", "-Os",
            "--baseline", "-O2", "--backend", "callgrind", "--sort", "Ir", "--rounds", "6", "--min-time", "0.01",
            "--json", str(out), "--wide")
    assert r.exit_code == 0, r.output
    [d] = json.loads(out.read_text())
    v = {x["label"]: x for x in d["variants"]}
    assert d["variants"][0]["label"] == "-O2" and v["-O2"]["baseline"]  # --baseline goes first
    assert "different work: Ir +" in (v["-O2 -DEXTRA=1"]["different_work"] or "")
    assert v["-Os"]["different_work"] is None  # the same 50 adds however built
    assert v["-O2 -DEXTRA=1"]["simulated"]["Ir"] > v["-O2"]["simulated"]["Ir"] + 9
    # the table is ranked by Ir: the extra-work variant last; the baseline starred
    lines = [ln for ln in r.output.splitlines() if "-O2" in ln or "-Os" in ln]
    assert "DEXTRA" in lines[-1] and any("* -O2" in ln for ln in lines), r.output
    assert "ranked by Ir" in r.output
    # text/data/bss/dec are size(1)'s for the benchmark file's own object
    from cyclebench.build import BuildSpec, build

    obj = build(BuildSpec(sources=(DATA / "extra_work.c",), cflags=("-O2",), werror=False)).objects[0]
    size = subprocess.run(["size", str(obj)], capture_output=True, text=True, check=True).stdout
    fields = size.split("\n")[1].split()
    assert [v["-O2"]["size"][k] for k in ("text", "data", "bss", "dec")] == [int(x) for x in fields[:4]]
    assert v["-O2"]["binary_size"]["dec"] > v["-O2"]["size"]["dec"]  # the whole runner is in the JSON too
    assert v["-O2"]["stddev_pct"] is not None and v["-O2"]["ci_low"] <= v["-O2"]["mean"] <= v["-O2"]["ci_high"]


def test_variants_sort_and_baseline_errors(db: str) -> None:
    r = cli("variants", str(DATA / "chain.c"), "--flags", "-O2", "--sort", "I1mr")
    assert r.exit_code == 2 and "callgrind events need --backend callgrind" in r.output
    r = cli("variants", str(DATA / "chain.c"), "--flags", "-O2", "--baseline", "-O3", "-b", "chain/add200")
    assert r.exit_code == 2 and "--baseline '-O3' is not a variant here" in r.output


def test_variants_count_events_per_op(db: str, tmp_path: Path) -> None:
    """-e counters per variant in the same ranked table (software events here: no PMU)."""
    out = tmp_path / "v.json"
    r = cli("variants", str(DATA / "chain.c"), "-b", "chain/add200", "--flags", "-O2", "--flags", "-O1",
            "--rounds", "6", "--min-time", "0.01", "-e", "task-clock,context-switches", "--sort", "task-clock",
            "--json", str(out), "--wide")
    assert r.exit_code == 0, r.output
    [d] = json.loads(out.read_text())
    for v in d["variants"]:
        assert set(v["counters"]) == {"task-clock", "context-switches"}
        assert v["counters"]["task-clock"] > 10  # ns per op of 200 dependent adds
    assert "task-clock/op" in r.output and "ranked by task-clock" in r.output
    r = cli("variants", str(DATA / "chain.c"), "-b", "chain/add200", "--flags", "-O2", "-e", "nosuch-event")
    assert r.exit_code == 2 and "nosuch-event" in r.output
