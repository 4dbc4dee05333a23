from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cyclebench.build import BuildError, BuildSpec, ToolMissing, build

from conftest import DATA


def test_cache_hit_and_key_changes(tmp_path: Path) -> None:
    src = tmp_path / "b.c"
    shutil.copy(DATA / "chain.c", src)
    a = build(BuildSpec(sources=(src,)))
    assert build(BuildSpec(sources=(src,))).path == a.path  # cached
    assert build(BuildSpec(sources=(src,), cflags=("-O1",))).key != a.key  # flags
    src.write_text(src.read_text() + "\n/* edited */\n")
    assert build(BuildSpec(sources=(src,))).key != a.key  # source


def test_included_header_is_part_of_the_key(tmp_path: Path) -> None:
    (tmp_path / "n.h").write_text("#define N 10\n")
    src = tmp_path / "b.c"
    src.write_text('#include <cyclebench.h>\n#include "n.h"\n'
                   "CB_BENCH(h, x) { for (uint64_t i = 0; i < cb_iters(s) * N; i++) cb_clobber(); }\n")
    a = build(BuildSpec(sources=(src,)))
    (tmp_path / "n.h").write_text("#define N 20\n")
    assert build(BuildSpec(sources=(src,))).key != a.key


def test_errors() -> None:
    with pytest.raises(ToolMissing, match="not found"):
        build(BuildSpec(sources=(DATA / "chain.c",), cc="no-such-cc"))
    with pytest.raises(BuildError, match=r"broken\.c: does not compile") as e:
        build(BuildSpec(sources=(DATA / "broken.c",)))
    assert "this_is_not_c" in e.value.output
    with pytest.raises(FileNotFoundError):
        build(BuildSpec(sources=(DATA / "nope.c",)))


def test_user_flags_reach_only_the_benchmark(tmp_path: Path) -> None:
    # -Werror on the user's flags must not break the engine, and -D reaches the source.
    src = tmp_path / "d.c"
    src.write_text("#include <cyclebench.h>\n#ifndef MUST\n#error MUST not defined\n#endif\n"
                   "CB_BENCH(d, x) { for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber(); }\n")
    build(BuildSpec(sources=(src,), defines=("MUST=1",), cflags=("-O1", "-Werror")))
    with pytest.raises(BuildError) as e:
        build(BuildSpec(sources=(src,)))
    assert "MUST not defined" in e.value.output


def test_cache_prune_removes_unused_and_half_built_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Audit D15: the cache never shrank and .tmp-* of killed builds stayed forever."""
    import os
    import time

    from cyclebench.build.compile import cache_entries, prune

    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    b = build(BuildSpec(sources=(DATA / "chain.c",)))
    entry = b.path.parent
    half = tmp_path / "build" / ".tmp-killed"
    half.mkdir()
    (half / "x.o").write_bytes(b"\0" * 10)
    old = time.time() - 2 * 3600
    os.utime(half, (old, old))
    assert {e.path for e in cache_entries()} == {entry, half}
    assert [e.path for e in prune()] == [half]  # the fresh entry stays
    build(BuildSpec(sources=(DATA / "chain.c",)))  # a hit touches it
    assert time.time() - entry.stat().st_mtime < 60
    very_old = time.time() - 40 * 86400
    os.utime(entry, (very_old, very_old))
    assert [e.path for e in prune()] == [entry] and not entry.exists()
