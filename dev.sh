#!/usr/bin/env bash
# dev.sh — set up and run cyclebench on a fresh machine.
#   bash dev.sh run [cyclebench run options]   # built-in suite, results into the SQLite DB
#   bash dev.sh test [pytest options]          # lint + the test suite (slow audit cases left out):
#                                              #   on 2 xdist workers, then the `timing` tests alone
#   bash dev.sh test --audit [pytest options]  # lint + every audit case (tests/audit), the slow ones included
#   bash dev.sh setup                          # only (re)create the venv
# Installs missing system packages with apt when root (says what is missing otherwise),
# creates/refreshes .venv and installs the package with its test extras into it.
set -euo pipefail
cd "$(dirname "$0")"
VENV=${VENV:-.venv}
PY=${PYTHON:-python3}

# command-to-check → Debian package
SYSDEPS=("cc:gcc" "git:git" "objdump:binutils")
# the allocators --allocator links (docs/references.md#malloc-profiling-freebsd-2008);
# without them their rows are 'skipped', naming the package
ALLOC_SYSDEPS=("libjemalloc.so:libjemalloc-dev" "libmimalloc.so:libmimalloc-dev" "libtcmalloc.so:libgoogle-perftools-dev")
# for the tests of cross-target variants (docs/references.md#aarch64-atomics-postgresql-2021);
# tests skip, saying so, without them
TEST_SYSDEPS=("aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu" "aarch64-linux-gnu-objdump:binutils-aarch64-linux-gnu"
              "qemu-aarch64:qemu-user" "valgrind:valgrind" "libpfm.so.4:libpfm4" "perf:linux-perf"
              "uftrace:uftrace"  # cyclebench profile records -pg builds with it
              "llvm-mca:llvm"  # --predict and explain: LLVM's scheduling models (docs/method.md §12)
              "pg_ctlcluster:postgresql"  # the store's tests start a throwaway PostgreSQL cluster
              "/usr/sbin/sshd:openssh-server"  # the fleet's tests start a throwaway sshd on 127.0.0.1
              "/usr/share/benchmark/compare.py:libbenchmark-tools"  # google/benchmark's compare.py reads gbench exports
              "chromium:chromium" "chromedriver:chromium-driver"  # the report site's tests open it in Chromium
              "bwrap:bubblewrap")  # compare --rev and bisect confine each revision's build and runner with it
# --predict and explain use the newest llvm-mca: Debian's llvm-19 knows Zen 4 and Zen 5 (znver4/5),
# the default llvm (14 on Debian 12) stops at Zen 3; tried on its own, a distribution without it is fine
NEWER_LLVM=("llvm-mca-19:llvm-19")
# benchstat reads the Go-format exports: built with Go (on these machines) into the venv, where the tests look
# (golang.org/x/perf has no tags; this version builds with Go 1.26; tests/exporttools.py names the same)
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

missing_of() {  # prints the Debian packages whose command (or lib*.so* library) is missing
    for pair in "$@"; do
        local what=${pair%%:*}
        if [[ $what == lib*.so ]]; then  # a link library: where the compiler looks for -l
            [ "$(cc -print-file-name="$what" 2>/dev/null)" != "$what" ] || printf '%s\n' "${pair#*:}"
        elif [[ $what == lib*.so* ]]; then
            ldconfig -p 2>/dev/null | grep -q "$what" || printf '%s\n' "${pair#*:}"
        else
            command -v "$what" >/dev/null 2>&1 || printf '%s\n' "${pair#*:}"
        fi
    done
}

apt_install() {
    echo "dev.sh: installing $* with apt-get" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

sysdeps() {
    local missing optional
    mapfile -t missing < <(missing_of "${SYSDEPS[@]}")
    if ! "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then missing+=(python3-venv); fi
    mapfile -t optional < <(missing_of "${ALLOC_SYSDEPS[@]}")
    [ "${1:-}" = test ] && mapfile -t -O ${#optional[@]} optional < <(missing_of "${TEST_SYSDEPS[@]}")
    [ ${#missing[@]} -eq 0 ] && [ ${#optional[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt_install "${missing[@]}" "${optional[@]}"
    elif [ ${#missing[@]} -gt 0 ]; then
        echo "dev.sh: missing system packages: ${missing[*]} (not root: apt-get install ${missing[*]})" >&2
        return 1
    else
        echo "dev.sh: optional packages missing: ${optional[*]}; their tests will be skipped" >&2
    fi
}

install_benchstat() {
    [ -x "$VENV/bin/benchstat" ] && return 0
    local go bin
    case $VENV in /*) bin=$VENV/bin ;; *) bin=$PWD/$VENV/bin ;; esac
    go=$(command -v go || { [ -x /usr/local/go/bin/go ] && echo /usr/local/go/bin/go; } || true)
    if [ -z "$go" ]; then
        echo "dev.sh: no Go here to build benchstat; its export tests will be skipped" >&2
        return 0
    fi
    echo "dev.sh: installing benchstat into $VENV/bin (go install $BENCHSTAT)" >&2
    GOBIN="$bin" "$go" install "$BENCHSTAT" \
        || echo "dev.sh: benchstat could not be installed; its export tests will be skipped" >&2
}

setup() {
    sysdeps "${1:-}"
    local stamp="$VENV/.installed"
    if [ ! -x "$VENV/bin/python" ]; then
        "$PY" -m venv "$VENV"
    fi
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
        "$VENV/bin/python" -m pip install -q --upgrade pip
        "$VENV/bin/python" -m pip install -q -e '.[test,predict]'
        touch "$stamp"
    fi
    if [ "${1:-}" = test ]; then install_benchstat; install_newer_llvm; fi
}

install_newer_llvm() {
    local missing
    mapfile -t missing < <(missing_of "${NEWER_LLVM[@]}")
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt_install "${missing[@]}" \
            || echo "dev.sh: ${missing[*]} not available here; --predict uses the llvm-mca there is" >&2
    fi
}

# The tests in two phases: those that need no quiet CPU on two xdist workers, then the `timing` ones
# (they assert measured figures) alone. One build cache serves both (tests/conftest.py). The marker
# expression is pyproject's default, --audit's (every audit case, the slow ones too) or the user's -m;
# every other argument goes to both phases. A phase that selects nothing (pytest's exit 5) is no failure
# unless both do.
test_phases() {
    local expr="not audit_slow" args=() rc1=0 rc2=0 cache
    while [ $# -gt 0 ]; do
        case $1 in
            --audit) expr=audit ;;
            -m) expr=${2:?"-m needs a marker expression"}; shift ;;
            -m*) expr=${1#-m} ;;
            *) args+=("$1") ;;
        esac
        shift
    done
    cache=$(mktemp -d "${TMPDIR:-/tmp}/cyclebench-test-cache.XXXXXX")
    trap 'rm -rf -- "$CYCLEBENCH_TEST_CACHE"' EXIT  # global: the function's locals are gone at EXIT
    export CYCLEBENCH_TEST_CACHE=$cache
    # --dist loadfile: a module's fixtures (a measured database, a built corpus) are made once, on one worker;
    # --no-loadscope-reorder: the slow files first (tests/conftest.py), not the files with most tests;
    # two workers: three were ~40-70 s faster here but left a measured benchmark "disturbed" where a test
    # asked for "ok" (docs/architecture.md, Tests)
    "$VENV/bin/python" -m pytest -n 2 --dist loadfile --no-loadscope-reorder -m "($expr) and not timing" ${args[@]+"${args[@]}"} || rc1=$?
    # -n 0 last: the timing tests run alone whatever -n the user gave
    "$VENV/bin/python" -m pytest -m "($expr) and timing" ${args[@]+"${args[@]}"} -n 0 || rc2=$?
    [ $rc1 -eq 5 ] && [ $rc2 -ne 5 ] && rc1=0
    [ $rc2 -eq 5 ] && [ $rc1 -ne 5 ] && rc2=0
    [ $rc1 -ne 0 ] && return $rc1
    return $rc2
}

cmd=${1:-}
shift || true
case "$cmd" in
    setup) setup ;;
    run) setup; exec "$VENV/bin/cyclebench" run "$@" ;;
    test)
        setup test
        "$VENV/bin/ruff" check src tests bench
        "$VENV/bin/lint-imports" --no-cache   # the house's arrows (pyproject.toml, docs/architecture.md)
        test_phases "$@"
        ;;
    *) echo "usage: bash dev.sh run|test|setup [args]" >&2; exit 2 ;;
esac
