"""Tests for cyclebench.check on fixture trees of /proc and /sys.

Fixtures (tests/fixtures): ``sysroot_kvm`` and ``sysroot_baremetal`` (see README.md there), and
``sysroot_amd``, hand-written for these tests: AMD Ryzen 5 3600 (6 cores × 2 threads, SMT
siblings N and N+6), acpi-cpufreq with governor ``ondemand`` and ``cpufreq/boost=1``, clocksource
``hpet`` with tsc no longer offered (marked unstable), no isolcpus, load 7.85 on 12 CPUs,
perf_event_paranoid 1, nmi_watchdog 0, a ``cpu`` PMU without caps, and fake processes: seven
runnable ``cc1`` on CPU 5, two runnable ``ffmpeg`` threads on CPU 11 (CPU 5's sibling), a
sleeping kworker on CPU 5.

Only the real-machine tests touch ``/``; they assert shapes, never a vendor or a status.
"""

from __future__ import annotations

import json
from pathlib import Path

from cyclebench.env.check import NAMES


def test_check_command_and_findings_stored_with_runs(tmp_path: Path, db: str) -> None:
    from cyclebench.store import Store

    from conftest import DATA, cli

    out = tmp_path / "check.json"
    r = cli("check", "--json", str(out))
    assert r.exit_code == 0, r.output
    names = [f["name"] for f in json.loads(out.read_text())]
    assert names == list(NAMES)
    r = cli("run", str(DATA / "chain.c"), "-b", "chain/add200", "-q", "--min-time", "0.01", "--repeat", "6")
    assert r.exit_code == 0
    store = Store(db)
    env = store.get_run(store.last_run_id())["env"]
    assert [f["name"] for f in env["check"]] == list(NAMES)


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_fix_dry_run_writes_nothing_and_says_how_to_revert(metal: Path) -> None:
    """--fix --dry-run on a copy of a bare-metal tree (CPU 3: powersave, turbo on, paranoid 3,
    watchdog on): the tree is unchanged, each change is printed with its revert command, and
    those commands, run after the real --fix, give back the tree as it was."""
    import re

    from conftest import cli

    before = _tree(metal)
    r = cli("check", "--sysroot", str(metal), "--cpu", "3", "--fix", "--dry-run")
    assert r.exit_code == 0, r.output
    assert _tree(metal) == before  # contents and mtimes: not a byte written
    cpu3 = "/sys/devices/system/cpu/cpu3/cpufreq/scaling_governor"
    assert (f"governor: would run: echo performance > {cpu3} (revert: echo powersave > {cpu3})"
            in r.output)
    lines = [ln for ln in r.output.splitlines() if ": would run: " in ln]
    assert [ln.split(":")[0] for ln in lines] == ["governor", "boost", "perf_event_paranoid", "nmi_watchdog"]
    reverts = [w for ln in lines for w in re.findall(r"echo (\S+) > ([^\s;)]+)", ln.split("(revert: ", 1)[1])]

    r = cli("check", "--sysroot", str(metal), "--cpu", "3", "--fix")
    assert r.exit_code == 0 and r.output.count(": fixed (revert: ") == 4, r.output
    assert (metal / cpu3.lstrip("/")).read_text() == "performance\n"
    for value, path in reverts:  # what the user would type as root
        (metal / path.lstrip("/")).write_text(value + "\n")
    assert {k: v[0] for k, v in _tree(metal).items()} == {k: v[0] for k, v in before.items()}


def test_dry_run_needs_fix_and_never_root(monkeypatch: object) -> None:
    from cyclebench.env import check, sysinfo

    from conftest import cli

    r = cli("check", "--dry-run")
    assert r.exit_code == 2 and "--dry-run goes with --fix" in r.output
    # on this machine, whoever runs it: what --fix would change is read before and after, unchanged
    planned = check.planned_fixes(check.run_checks(sysinfo.choose_cpu()))
    values = [sysinfo.read(Path("/"), p.lstrip("/")) for f in planned for p, _ in f.fix_writes]
    r = cli("check", "--fix", "--dry-run")
    assert r.exit_code == 0 and "--fix needs root" not in r.output, r.output
    assert [sysinfo.read(Path("/"), p.lstrip("/")) for f in planned for p, _ in f.fix_writes] == values
    assert all(f"{f.name}: would run: " in r.output for f in planned)


REPO = Path(__file__).resolve().parents[2]
# what dev.sh itself runs, and the three tools nothing builds without
_BASE = ("bash", "dirname", "grep", "sort", "tail", "uname", "id", "cc", "ldconfig", "git", "objdump", "apt-cache")


def _bare_path(tmp_path: Path) -> str:
    """A PATH holding only dev.sh's own commands, cc, git, objdump and the venv's python: every
    other tool of env/tools.tsv is missing there."""
    import shutil
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in _BASE:
        if (where := shutil.which(name)) is not None:
            (bin_dir / name).symlink_to(where)
    (bin_dir / "python3").symlink_to(sys.executable)
    return str(bin_dir)


def test_dev_sh_and_check_name_the_same_missing_packages(tmp_path: Path) -> None:
    """`bash dev.sh deps` (what `dev.sh run` installs as root, and lists otherwise) and `cyclebench
    check`'s tools finding read one table (env/tools.tsv): on a PATH without the run-time tools both
    name the same packages, each with the commands that need it, and install nothing."""
    import os
    import subprocess
    import sys

    from cyclebench.env import tools

    env = {"PATH": _bare_path(tmp_path), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    r = subprocess.run(["bash", str(REPO / "dev.sh"), "deps"], capture_output=True, text=True, env=env, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1, r.stderr
    listed = {line.split()[0]: line.split(None, 1)[1] for line in r.stderr.splitlines() if line.startswith("  ")}
    out = tmp_path / "check.json"
    c = subprocess.run([sys.executable, "-m", "cyclebench", "check", "--json", str(out)], capture_output=True,
                       text=True, env={**os.environ, "PATH": env["PATH"]}, timeout=120)
    assert c.returncode == 0, c.stderr
    [found] = [f for f in json.loads(out.read_text()) if f["name"] == "tools"]
    assert found["status"] == "WARN" and found["fix"].startswith(("apt-get install ", "install your distribution's"))
    named = found["fix"].removeprefix("apt-get install ").split()
    # every command-line tool of the run-time rows is missing on this PATH (libraries are not on PATH)
    must = {"bubblewrap", "uftrace", "valgrind", "gcc-aarch64-linux-gnu", "binutils-aarch64-linux-gnu", "qemu-user"}
    assert must <= set(listed), listed
    assert set(listed) == set(named) or found["fix"].startswith("install your"), (listed, named)
    for t in tools.table():
        for p in t.packages(tools.distro()):
            if p in listed:
                assert listed[p] == t.needed_by and p + " for " + t.needed_by in found["detail"], (p, listed[p])
    assert "profile" in listed["uftrace"] and "compare --rev" in listed["bubblewrap"]
    # the test-only tools are not the commands' business: dev.sh test installs them, check never names them
    assert "postgresql" not in found["detail"]


def test_tools_table_packages_per_distribution(tmp_path: Path) -> None:
    """os-release picks the names: perf is linux-perf on Debian, linux-tools-* for this kernel on
    Ubuntu (and its derivatives, by ID_LIKE); every run-time row has a Debian package."""
    import platform

    from cyclebench.env import tools

    rows = {t.probe: t for t in tools.table()}
    assert {"bwrap", "uftrace", "valgrind", "llvm-mca", "perf", "aarch64-linux-gnu-gcc", "qemu-aarch64"} <= set(rows)
    assert all(t.debian for t in rows.values())
    cases = (("debian", "", "debian"), ("ubuntu", "debian", "ubuntu"), ("linuxmint", "ubuntu debian", "ubuntu"),
             ("fedora", "", "fedora"))
    for ident, like, want in cases:
        (tmp_path / "etc").mkdir(exist_ok=True)
        (tmp_path / "etc/os-release").write_text(f'NAME="x"\nID={ident}\nID_LIKE="{like}"\n')
        assert tools.distro(tmp_path) == want
    assert rows["perf"].packages("debian") == ("linux-perf",)
    assert rows["perf"].packages("ubuntu") == ("linux-tools-common", f"linux-tools-{platform.release()}")
    assert rows["llvm-mca"].packages("debian", lambda: "llvm-21") == ("llvm-21",)
    assert rows["llvm-mca"].packages("debian", lambda: None) == ("llvm",)
    assert tools.distro(tmp_path / "nowhere") is None
