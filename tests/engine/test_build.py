from __future__ import annotations

import os
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


def test_the_remembered_header_list_follows_every_header_and_a_new_one_beside_the_source(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache hit reuses the sources' `cc -M` list (compile._bench_reads) instead of running the
    preprocessor again, but only while it still holds: a header edited to include another, that
    other header edited later, and a header created beside the source that now shadows the one
    found through -I each change the key, as they change the binary."""
    from cyclebench.build import compile as compiler

    calls: list[object] = []
    real = compiler._read_files
    monkeypatch.setattr(compiler, "_read_files", lambda *a: calls.append(a) or real(*a))
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "n.h").write_text("#define N 10\n")
    (inc / "m.h").write_text("#define N 20\n")  # there from the start: no directory changes below
    src = tmp_path / "b.c"
    src.write_text('#include <cyclebench.h>\n#include "n.h"\n'
                   "CB_BENCH(h, x) { for (uint64_t i = 0; i < cb_iters(s) * N; i++) cb_clobber(); }\n")
    spec = BuildSpec(sources=(src,), include_dirs=(inc,))
    keys = [build(spec).key]
    n = len(calls)
    assert build(spec).key == keys[0] and len(calls) == n  # a hit: no preprocessor run
    (inc / "n.h").write_text('#include "m.h"\n')  # now reads m.h, which the remembered list lacks
    keys.append(build(spec).key)
    (inc / "m.h").write_text("#define N 30\n")
    keys.append(build(spec).key)
    (tmp_path / "n.h").write_text("#define N 40\n")  # "n.h" is looked for beside b.c before -I
    keys.append(build(spec).key)
    assert len(set(keys)) == 4, keys
    assert build(spec).key == keys[-1]


def test_engine_objects_are_shared_by_runners_of_one_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine compiles once per compiler, environment and engine, not once per runner; only
    wis.c, which a will-it-scale test case's -D items reach, is its own per test case."""
    import subprocess

    from cyclebench.build import wis
    from cyclebench.build.compile import ENGINE_SOURCES, prune

    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path / "cache"))
    objects = lambda: sorted((tmp_path / "cache" / "build").glob(".engine-*.o"))  # noqa: E731
    a, b = tmp_path / "a.c", tmp_path / "b.c"
    shutil.copy(DATA / "chain.c", a)
    shutil.copy(DATA / "spin.c", b)
    build(BuildSpec(sources=(a,)))
    shared = objects()
    assert len(shared) == len(ENGINE_SOURCES)
    inodes = [o.stat().st_ino for o in shared]
    build(BuildSpec(sources=(b,)))  # another runner: the same objects, none compiled again
    assert objects() == shared and [o.stat().st_ino for o in shared] == inodes
    shared[0].unlink()  # removed (a clean): compiled again, the others kept
    build(BuildSpec(sources=(a,), cflags=("-O1",)))
    assert objects() == shared and [o.stat().st_ino for o in shared][1:] == inodes[1:]
    case = wis.recognise(DATA / "will-it-scale" / "tests" / "getppid1.c")
    assert case is not None
    runner = build(wis.spec(BuildSpec(sources=()), case, "processes")).path
    assert len(objects()) == len(ENGINE_SOURCES) + 1  # its own wis.c
    listed = subprocess.run([str(runner), "--list"], capture_output=True, text=True, timeout=60)
    assert "wis/getppid1" in listed.stdout, listed
    prune(everything=True)
    assert objects() == []


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
    """The build cache once never shrank, and .tmp-* of killed builds stayed forever."""
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
    assert [e.path for e in prune().removed] == [half]  # the fresh entry stays
    build(BuildSpec(sources=(DATA / "chain.c",)))  # a hit touches it
    assert time.time() - entry.stat().st_mtime < 60
    very_old = time.time() - 40 * 86400
    os.utime(entry, (very_old, very_old))
    # this process holds the entry it built (a run would be using its runner): kept, and said so
    assert [e.path for e in prune().in_use] == [entry] and entry.exists()
    from cyclebench.build import compile as compile_mod

    os.close(compile_mod._held.pop(entry))  # as when the process using it has ended
    assert [e.path for e in prune().removed] == [entry] and not entry.exists()


HEADER_BENCH = ('#include <cyclebench.h>\n#include <n.h>\n'
                "CB_BENCH(h, x) { for (uint64_t i = 0; i < cb_iters(s) * N; i++) cb_clobber(); }\n")


@pytest.mark.parametrize("how", ["-isystem", "C_INCLUDE_PATH", "CPATH"])
def test_a_system_header_is_part_of_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """A header reached through -isystem DIR, C_INCLUDE_PATH or CPATH is a system header to
    `cc -MM`, which left it out of the key: after it changed, the old binary was measured."""
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "n.h").write_text("#define N 10\n")
    src = tmp_path / "b.c"
    src.write_text(HEADER_BENCH)
    if how == "-isystem":
        spec = BuildSpec(sources=(src,), cflags=("-O2", "-isystem", str(inc)))
    else:
        monkeypatch.setenv(how, str(inc))
        spec = BuildSpec(sources=(src,))
    a = build(spec)
    assert build(spec).key == a.key  # still cached while nothing changed
    (inc / "n.h").write_text("#define N 20\n")
    b = build(spec)
    assert b.key != a.key and b.path.is_file()


def test_the_environment_and_the_compiler_binary_are_part_of_the_key(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The variables gcc reads (its manual, "Environment Variables Affecting GCC") and which
    binary `cc` resolves to on $PATH change the binary; `cc --version` alone does not tell."""
    src = tmp_path / "b.c"
    shutil.copy(DATA / "chain.c", src)
    a = build(BuildSpec(sources=(src,)))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1")
    assert build(BuildSpec(sources=(src,))).key != a.key
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert build(BuildSpec(sources=(src,))).key == a.key
    real = os.path.realpath(shutil.which("cc") or "")
    other = tmp_path / "bin"
    other.mkdir()
    # a wrapper earlier on $PATH (as ccache or a distribution's hardening wrapper are): the same
    # --version line, another program
    (other / "cc").write_text(f'#!/bin/bash\nexec -a {os.path.dirname(real)}/cc {real} -fno-inline "$@"\n')
    (other / "cc").chmod(0o755)
    monkeypatch.setenv("PATH", f"{other}:{os.environ['PATH']}")
    b = build(BuildSpec(sources=(src,)))
    assert b.cc_version == a.cc_version and b.key != a.key


def test_the_remembered_compiler_version_follows_the_compiler_file(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`cc --version` is asked once per compiler file; a compiler rewritten, or another one
    found first on $PATH under the same name, is asked again."""
    from cyclebench.build import compiler_version

    bin_a, bin_b, asked = tmp_path / "a", tmp_path / "b", tmp_path / "asked"
    for d, version in ((bin_a, "1.0"), (bin_b, "2.0")):
        d.mkdir()
        (d / "xcc").write_text(f'#!/bin/sh\necho x >> {asked}\necho "xcc {version}"\n')
        (d / "xcc").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_a}:{os.environ['PATH']}")
    assert compiler_version("xcc") == "xcc 1.0" and compiler_version("xcc") == "xcc 1.0"
    assert len(asked.read_text().split()) == 1  # the second time from the memo
    (bin_a / "xcc").write_text(f'#!/bin/sh\necho x >> {asked}\necho "xcc 1.1 built again"\n')
    assert compiler_version("xcc") == "xcc 1.1 built again"
    monkeypatch.setenv("PATH", f"{bin_b}:{bin_a}:{os.environ['PATH']}")
    assert compiler_version("xcc") == "xcc 2.0"
    assert len(asked.read_text().split()) == 3


def test_the_compilers_target_is_remembered_and_the_runs_environment_takes_it(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """`cc -dumpmachine` is asked once per compiler file, remembered as its version is; a build's
    Binary carries it, and a run's environment records it without running the compiler."""
    from cyclebench.build import compile as c
    from cyclebench.env import sysinfo

    d, asked = tmp_path / "bin", tmp_path / "asked"
    d.mkdir()
    (d / "xcc").write_text(f'#!/bin/sh\necho "$1" >> {asked}\necho "xcc-linux-gnu"\n')
    (d / "xcc").chmod(0o755)
    monkeypatch.setenv("PATH", f"{d}:{os.environ['PATH']}")
    assert c.compiler_target("xcc") == "xcc-linux-gnu" and c.compiler_target("xcc") == "xcc-linux-gnu"
    assert asked.read_text().split() == ["-dumpmachine"]  # the second time from the memo
    (d / "xcc").write_text(f'#!/bin/sh\necho "$1" >> {asked}\nexit 1\n')  # rewritten: asked again, no answer
    assert c.compiler_target("xcc") is None and asked.read_text().split() == ["-dumpmachine"] * 2
    b = build(BuildSpec(sources=(DATA / "chain.c",)))
    assert b.cc_target == sysinfo.compiler_info("cc")["target"] and b.cc_target


def test_make_dependency_quoting_is_undone(tmp_path: Path) -> None:
    """gcc -M writes a space as '\\ ', '$' as '$$' and '#' as '\\#' (libcpp/mkdeps.cc); the key
    split its output on blanks and read '.../My\\', so a path with a space did not build."""
    from cyclebench.build.compile import parse_make_deps

    d = tmp_path / "My Benchmarks $HOME #1\\x"
    d.mkdir()
    (d / "n h.h").write_text("#define N 10\n")
    src = d / "a b.c"
    src.write_text(HEADER_BENCH.replace("<n.h>", '"n h.h"'))
    import subprocess

    out = subprocess.run(["cc", "-M", "-MT", "cyclebench-deps", "-I", str(Path(__file__).parents[2] / "src"
                                                                                    / "cyclebench" / "engine"),
                          str(src)], capture_output=True, check=True).stdout
    deps = parse_make_deps(out)
    assert os.fsencode(src) in deps and os.fsencode(d / "n h.h") in deps
    assert all(os.path.exists(p) for p in deps)
    a = build(BuildSpec(sources=(src,)))
    (d / "n h.h").write_text("#define N 20\n")
    assert build(BuildSpec(sources=(src,))).key != a.key


def test_latin1_source_and_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    """A compiler message quoting a Latin-1 line, and a file name in Latin-1, ended in a
    UnicodeDecodeError traceback: messages are decoded with replacement, names kept as bytes."""
    src = tmp_path / "w.c"
    src.write_bytes(b"#include <cyclebench.h>\n/* caf\xe9 */\n#warning caf\xe9\n"
                    b"CB_BENCH(l, x) { for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber(); }\n")
    assert build(BuildSpec(sources=(src,))).path.is_file()
    bad = tmp_path / "e.c"
    bad.write_bytes(b"#include <cyclebench.h>\n#error caf\xe9\n")
    with pytest.raises(BuildError) as e:
        build(BuildSpec(sources=(bad,)))
    assert "caf\ufffd" in e.value.output
    name = Path(os.fsdecode(bytes(tmp_path) + b"/n\xe9.c"))
    shutil.copy(DATA / "chain.c", name)
    assert build(BuildSpec(sources=(name,))).path.is_file()


def test_a_compiler_started_after_its_build_was_killed_is_killed_at_once() -> None:
    """A pool thread that took its job just before an interrupted build swept its compilers
    registers its process after the sweep: killed then, at once, not left to run to its end (the
    interpreter's exit waits for that thread)."""
    import time

    from cyclebench.build import compile as cc

    group = cc.Compilers()
    cc._kill_live(group)  # the sweep, before this compiler exists
    t0 = time.monotonic()
    done = cc._run_bytes(["sleep", "30"], group=group)
    assert time.monotonic() - t0 < 10 and done.returncode != 0, done
    assert not group and not cc._live  # reaped and forgotten
    alive = cc.Compilers()  # a build not swept: its compilers run to their end
    assert cc._run_bytes(["true"], group=alive).returncode == 0


def test_a_failed_build_leaves_nothing_in_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A source that fails stops the build and kills the compiles still running; gcc killed
    mid-way left its cc*.s in $TMPDIR. The compilers' temporaries now live in the build's
    own directory."""
    import tempfile

    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr(tempfile, "tempdir", None)
    slow = tmp_path / "slow.c"  # ~1 s of cc1 at -O2 here: still compiling when broken.c fails
    body = "".join(f"x = x * {i} + (x >> {i % 13});\n" for i in range(20000))
    slow.write_text("#include <cyclebench.h>\nunsigned long f(unsigned long x) {\n" + body + "return x; }\n")
    with pytest.raises(BuildError, match="broken"):
        build(BuildSpec(sources=(DATA / "broken.c", slow)))
    assert list(tmpdir.iterdir()) == []


def _plant(cache: Path, spec: BuildSpec, marker: Path) -> Path:
    """Build ``spec`` into ``cache``, then replace its runner by a script owned by nobody that
    leaves ``marker`` when run (what another user could put at the computable key)."""
    b = build(spec)
    runner = b.path
    runner.unlink()
    runner.write_text(f"#!/bin/sh\ntouch {marker}\n")
    runner.chmod(0o755)
    os.chown(runner, 65534, 65534)
    return runner


@pytest.mark.skipif(os.geteuid() != 0, reason="planting a file owned by another user needs root (os.chown)")
def test_a_planted_runner_or_a_shared_cache_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A runner planted by nobody at build/<key>/runner in a shared cache was run as root,
    silently: a cache or an entry another user owns or can write is refused, naming it."""
    from cyclebench.build.compile import UnsafeCache
    from cyclebench.runner import Runner

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(shared))
    spec = BuildSpec(sources=(DATA / "chain.c",))
    with pytest.raises(UnsafeCache, match=f"{shared} is writable by other users"):
        build(spec)
    shared.chmod(0o700)
    marker = tmp_path / "planted-ran"
    runner = _plant(shared, spec, marker)
    from cyclebench.build import compile as compile_mod

    while compile_mod._held:  # as in a new process: nothing held yet
        os.close(compile_mod._held.popitem()[1])
    with pytest.raises(UnsafeCache, match=f"{runner} is owned by nobody"):
        Runner(build(spec).path).list()
    os.chown(runner, 0, 0)
    os.chown(runner.parent, 65534, 65534)
    with pytest.raises(UnsafeCache, match=f"{runner.parent} is owned by nobody"):
        build(spec)
    os.chown(runner.parent, 0, 0)
    runner.parent.chmod(0o777)
    with pytest.raises(UnsafeCache, match="writable by other users"):
        build(spec)
    assert not marker.exists()
    runner.parent.chmod(0o700)
    runner.unlink()  # the defaults: a private cache builds and runs as before
    assert Runner(build(spec).path).list()
