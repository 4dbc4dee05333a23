"""`--allocator` (docs/method.md §5b): each allocator linked into its own runner and measured side by side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cyclebench.build import allocators

from conftest import FAST, cli

ALL = ["glibc", "jemalloc", "mimalloc", "tcmalloc"]
# measured and verified: ok, or disturbed (most batches shared the CPU with the other xdist worker; not a
# failure, model.FAILED_STATUSES); a pattern that fails verification is "invalid"
VERIFIED = ("ok", "disturbed")
ABSENT = [a.dev_package for n, a in allocators.ALLOCATORS.items() if allocators.missing(a)]
needs_all = pytest.mark.skipif(bool(ABSENT), reason=f"allocators not installed: apt-get install {' '.join(ABSENT)} "
                               "(bash dev.sh test installs them as root)")


@needs_all
def test_variants_judge_every_allocator_against_the_first(db: str, tmp_path: Path) -> None:
    out = tmp_path / "v.json"
    r = cli("variants", "-b", "alloc/malloc_free", "-p", "64", "--allocator", ",".join(ALL), "--min-time", "0.01",
            "--json", str(out))
    assert r.exit_code == 0, r.output
    [d] = json.loads(out.read_text())
    assert [v["label"] for v in d["variants"]] == ALL
    base, *others = d["variants"]
    assert base["baseline"] and base["comparison"] is None
    assert all(v["comparison"] is not None for v in others)
    # the default rounds let three Holm-adjusted comparisons reach a verdict (8 could not: 2/256 > 0.002)
    assert len(base["per_invocation"]) >= 13
    for v in d["variants"]:  # each runner calls its own allocator's malloc, and says which package
        assert v["status"] in VERIFIED
        lib = Path(v["allocator"]["library"]).name
        assert lib.startswith("libc.so" if v["label"] == "glibc" else f"lib{v['label']}"), lib
        assert v["allocator"]["version"]  # Debian package and version


@needs_all
def test_run_shows_one_row_per_allocator_and_the_new_patterns_verify(db: str, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = cli("run", "-b", "alloc/pool_random", "-b", "alloc/realloc_grow", "-b", "alloc/remote_free", "-p", "1000",
            "-p", "4096", "-p", "64", "--allocator", ",".join(ALL), *FAST, "--target-ci", "0", "--json", str(out))
    assert r.exit_code == 0, r.output
    res = [x for x in json.loads(out.read_text())["results"] if x["bench"].startswith("alloc/")]
    got = {(x["bench"], x["variant"]) for x in res}
    assert got == {(b, a) for b in ("alloc/pool_random", "alloc/realloc_grow", "alloc/remote_free") for a in ALL}
    assert all(x["status"] in VERIFIED for x in res), [(x["bench"], x["variant"], x["status"], x["reason"])
                                                                   for x in res]
    assert all(x["extra"]["allocator"]["name"] == x["variant"] for x in res)
    assert "alloc/remote_free [mimalloc]" in r.output


def test_a_missing_allocator_is_a_skipped_row_naming_its_package(db: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    real = allocators._library_path
    monkeypatch.setattr(allocators, "_library_path", lambda cc, lib: None if lib == "mimalloc" else real(cc, lib))
    out = tmp_path / "v.json"
    r = cli("variants", "-b", "alloc/malloc_free", "-p", "16", "--allocator", "glibc,mimalloc", "--rounds", "6",
            "--min-time", "0.01", "--json", str(out))
    assert r.exit_code == 0, r.output
    [d] = json.loads(out.read_text())
    glibc, mi = d["variants"]
    assert glibc["status"] in VERIFIED and mi["status"] == "skipped"
    assert "apt-get install libmimalloc-dev" in mi["reason"] and "libmimalloc-dev" in r.output
    r = cli("run", "-b", "alloc/malloc_free", "-p", "16", "--allocator", "glibc,mimalloc", *FAST, "--json", str(out))
    assert r.exit_code == 0, r.output
    rows = {x["variant"]: x for x in json.loads(out.read_text())["results"] if x["bench"] == "alloc/malloc_free"}
    assert rows["glibc"]["status"] in VERIFIED and rows["mimalloc"]["status"] == "skipped"


def test_bad_allocator_input(db: str) -> None:
    r = cli("run", "-b", "alloc/malloc_free", "--allocator", "glibc,hoard")
    assert r.exit_code == 2 and "unknown allocator 'hoard' (known: glibc, jemalloc, mimalloc, tcmalloc)" in r.output
    r = cli("variants", "-b", "alloc/malloc_free", "--allocator", "glibc,glibc")
    assert r.exit_code == 2 and "named twice" in r.output
    r = cli("variants", "--allocator", "glibc")
    assert r.exit_code == 2 and "-b GLOB" in r.output


def test_a_link_that_did_not_take_is_an_error_not_a_glibc_figure() -> None:
    je = allocators.ALLOCATORS["jemalloc"]
    assert allocators.check_resolved(je, "/lib/x86_64-linux-gnu/libjemalloc.so.2") is None
    why = allocators.check_resolved(je, "/lib/x86_64-linux-gnu/libc.so.6")
    assert why is not None and "not jemalloc" in why
    assert je.ldflags() == ("-Wl,--push-state,--no-as-needed", "-ljemalloc", "-Wl,--pop-state")
    assert allocators.ALLOCATORS["glibc"].ldflags() == ()


@needs_all
def test_compare_allocators_as_variants_and_fail_on(db: str, tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    r = cli("compare", "alloc/malloc_free", "-p", "16", "--allocator", "glibc,jemalloc", "--repeat", "11",
            "--min-time", "0.05", "--json", str(out))
    assert r.exit_code == 0, r.output
    [d] = json.loads(out.read_text())
    glibc, je = d["variants"]
    assert (glibc["label"], je["label"]) == ("glibc", "jemalloc") and len(je["per_invocation"]) == 11
    assert je["comparison"]["verdict"] in ("slower", "faster", "~")
    r = cli("compare", "alloc/malloc_free", "-p", "16", "--allocator", "glibc,jemalloc", "--repeat", "6",
            "--min-time", "0.02", "--fail-on", "inconclusive", "--fail-on", "different")
    assert r.exit_code == 1 and "--fail-on: alloc/malloc_free jemalloc:" in r.output, r.output
    r = cli("compare", "1", "2", "--allocator", "glibc,jemalloc")
    assert r.exit_code == 2 and "not stored runs" in r.output


@needs_all
def test_scale_sweeps_each_allocator_as_its_own_series(db: str, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    # one size of the eight (-p): the series per allocator are what is asserted, not the sizes
    r = cli("scale", "alloc/malloc_free", "-p", "16", "--allocator", "glibc,tcmalloc", "--tasks", "1,2", "--duration",
            "0.2", "--passes", "1", "--warmup", "0.05", "--json", str(out))
    assert r.exit_code == 0, r.output
    res = [x for x in json.loads(out.read_text())["results"] if x["bench"] == "alloc/malloc_free"]
    assert {x["variant"].rsplit(":alloc=", 1)[1] for x in res} == {"glibc", "tcmalloc"}
    assert all(x["status"] in VERIFIED and x["variant"].endswith(f":alloc={x['extra']['allocator']['name']}")
               for x in res)
    assert "alloc/malloc_free[16] [tcmalloc] (threads)" in r.output
    assert all(":param=16:" in x["variant"] for x in res), [x["variant"] for x in res]  # -p selects the size
