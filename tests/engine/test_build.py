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
