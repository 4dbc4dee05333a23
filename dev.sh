#!/usr/bin/env bash
# dev.sh — set up and run cyclebench on a fresh machine.
#   bash dev.sh run [cyclebench run options]   # built-in suite, results into the SQLite DB
#   bash dev.sh test [pytest options]          # lint + the test suite (slow audit cases left out):
#                                              #   on 2 xdist workers, then the `timing` tests alone
#   bash dev.sh test --audit [pytest options]  # lint + every audit case (tests/audit), the slow ones included
#                                              #   (-m EXPR narrows either: `--audit -m audit_slow`, what CI adds)
#   bash dev.sh setup                          # only (re)create the venv
#   bash dev.sh deps [run|test]                # list the system packages missing here and what needs each
#                                              #   (installs nothing; exit 1 when some are missing)
# Installs missing system packages with apt when root (says what is missing otherwise),
# creates/refreshes .venv and installs the package with its test extras into it.
set -euo pipefail
cd "$(dirname "$0")"
VENV=${VENV:-.venv}
PY=${PYTHON:-python3}

# The system tools, their packages and the commands that need them: one table, src/cyclebench/env/tools.tsv,
# which `cyclebench check` reads too. `run` installs the rows of scope run (what the README's commands need),
# `test` those of scope test as well. Without these three nothing builds: their absence stops dev.sh.
TOOLS=src/cyclebench/env/tools.tsv
REQUIRED=("cc" "git" "objdump")
# benchstat reads the Go-format exports: built with Go (on these machines) into the venv, where the tests look
# (golang.org/x/perf has no tags; this version builds with Go 1.26; tests/exporttools.py names the same)
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

distro() {  # os-release(5)'s ID, "ubuntu" for a derivative whose ID_LIKE names it (env/tools.py: distro)
    [ -r /etc/os-release ] || return 0
    local id like
    id=$(. /etc/os-release && echo "${ID:-}")
    like=$(. /etc/os-release && echo "${ID_LIKE:-}")
    if [ "$id" != debian ] && [[ " $like " == *" ubuntu "* ]]; then echo ubuntu; else echo "$id"; fi
}

NEWEST_LLVM=
newest_llvm() {  # apt's newest llvm-N (its llvm-mca-N knows the newest cores: llvm 14 stops at Zen 3)
    if [ -z "$NEWEST_LLVM" ] && command -v apt-cache >/dev/null 2>&1; then
        NEWEST_LLVM=$(apt-cache pkgnames llvm- 2>/dev/null | grep -E '^llvm-[0-9]+$' | sort -V | tail -n 1 || true)
    fi
    echo "$NEWEST_LLVM"
}

present() {  # is a tools.tsv probe found here (the rules of env/tools.py: present)
    local what=$1 llvm
    case $what in
        llvm-mca)  # apt's newest where apt offers one, else any llvm-mca
            llvm=$(newest_llvm)
            if [ -n "$llvm" ]; then command -v "llvm-mca-${llvm#llvm-}" >/dev/null 2>&1; return; fi
            compgen -c llvm-mca | grep -qE '^llvm-mca(-[0-9]+)?$' ;;
        lib*.so) [ "$(cc -print-file-name="$what" 2>/dev/null)" != "$what" ] ;;  # where the compiler looks for -l
        lib*.so.*) { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -qF "$what" ;;  # /sbin: off a bare PATH
        /*) [ -x "$what" ] ;;
        *) command -v "$what" >/dev/null 2>&1 ;;
    esac
}

missing_rows() {  # the rows of the given scopes whose probe is missing: "probe<TAB>packages<TAB>needed by"
    local dist probe debian ubuntu scope needed pkgs
    dist=$(distro)
    while IFS=$'\t' read -r probe debian ubuntu scope needed; do
        case $probe in ''|'#'*) continue ;; esac
        [[ " $* " == *" $scope "* ]] || continue
        present "$probe" && continue
        pkgs=$debian
        [ "$dist" = ubuntu ] && [ "$ubuntu" != - ] && pkgs=$ubuntu
        pkgs=${pkgs//\$KERNEL/$(uname -r)}
        if [ "$pkgs" = "llvm-*" ]; then pkgs=$(newest_llvm); pkgs=${pkgs:-llvm}; fi
        printf '%s\t%s\t%s\n' "$probe" "$pkgs" "$needed"
    done < "$TOOLS"
}

apt_install() {  # all at once; when that fails (one not in this release), one by one, naming those that failed
    echo "dev.sh: installing $* with apt-get" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null && return 0
    local p failed=()
    for p in "$@"; do
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null 2>&1 || failed+=("$p")
    done
    [ ${#failed[@]} -eq 0 ] && return 0
    echo "dev.sh: apt-get could not install: ${failed[*]}" >&2
    return 1
}

say_missing() {  # $1: how to install; then the rows of missing_rows: package(s) and what needs each, on stderr
    local how=$1 row probe pkgs needed
    shift
    echo "dev.sh: missing system packages, and what needs each ($how):" >&2
    for row in "$@"; do
        IFS=$'\t' read -r probe pkgs needed <<< "$row"
        printf '  %-32s %s\n' "$pkgs" "$needed" >&2
    done
}

install_how() {
    local how="apt-get install"
    command -v apt-get >/dev/null 2>&1 || how="install your distribution's package of each; these are Debian's names"
    [ "$(id -u)" -eq 0 ] || how="as root: $how"
    echo "$how"
}

sysdeps() {  # $@: the scopes (run; run test)
    local rows=() row probe pkgs needed all=() r still=()
    mapfile -t rows < <(missing_rows "$@")
    "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1 || rows+=("python3-venv"$'\t'"python3-venv"$'\t'"the venv")
    [ ${#rows[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        for row in "${rows[@]}"; do
            IFS=$'\t' read -r probe pkgs needed <<< "$row"
            read -ra r <<< "$pkgs"
            all+=("${r[@]}")
        done
        apt_install "${all[@]}" && return 0
        mapfile -t rows < <(missing_rows "$@")  # what is still missing is said below
        [ ${#rows[@]} -eq 0 ] && return 0
    fi
    say_missing "$(install_how)" "${rows[@]}"
    for r in "${REQUIRED[@]}"; do present "$r" || still+=("$r"); done
    "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1 || still+=(python3-venv)
    if [ ${#still[@]} -gt 0 ]; then
        echo "dev.sh: cyclebench cannot be set up without ${still[*]}" >&2
        return 1
    fi
    echo "dev.sh: each command above says so when its tool is missing; \`cyclebench check\` lists them again" >&2
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

# The kernel's tracepoints count the interrupts taken on the measured CPU during each batch
# (engine/disturb.h; docs/method.md §4): they are read from tracefs, which a fresh machine may not have
# mounted. Mounted here when root (for the running system only); without it batches are not checked
# for interrupts, and `cyclebench check` says so.
tracefs() {
    [ -e /sys/kernel/tracing/events ] || [ -e /sys/kernel/debug/tracing/events ] && return 0
    if [ "$(id -u)" -eq 0 ] && [ -d /sys/kernel/tracing ]; then
        mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null \
            || echo "dev.sh: tracefs could not be mounted: interrupts in a batch will not be seen" >&2
    else
        echo "dev.sh: tracefs is not mounted (as root: mount -t tracefs nodev /sys/kernel/tracing):" \
             "interrupts in a batch will not be seen" >&2
    fi
}

setup() {
    if [ "${1:-}" = test ]; then sysdeps run test; else sysdeps run; fi
    tracefs
    local stamp="$VENV/.installed"
    if [ ! -x "$VENV/bin/python" ]; then
        "$PY" -m venv "$VENV"
    fi
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
        "$VENV/bin/python" -m pip install -q --upgrade pip
        "$VENV/bin/python" -m pip install -q -e '.[test,predict]'
        touch "$stamp"
    fi
    if [ "${1:-}" = test ]; then install_benchstat; fi
}

# The tests in two phases: those that need no quiet CPU on two xdist workers, then the `timing` ones
# (they assert measured figures) alone. One build cache serves both (tests/conftest.py). The marker
# expression: pyproject's default (not audit_slow) or, with --audit, every audit case (the slow ones too);
# a user's -m EXPR narrows either (`-m EXPR` alone: EXPR and not audit_slow; `--audit -m audit_slow`: the
# slow audit cases alone, as .ci/run runs them). Every other argument goes to both phases. A phase that
# selects nothing (pytest's exit 5) is no failure unless both do.
marker_expr() {  # sets EXPR (the marker expression) and ARGS (the rest) from test's arguments
    local audit=0 user=""
    ARGS=()
    while [ $# -gt 0 ]; do
        case $1 in
            --audit) audit=1 ;;
            -m) user=${2:?"-m needs a marker expression"}; shift ;;
            -m*) user=${1#-m} ;;
            *) ARGS+=("$1") ;;
        esac
        shift
    done
    if [ $audit -eq 1 ]; then EXPR=audit${user:+" and ($user)"}; else EXPR=${user:+"($user) and "}"not audit_slow"; fi
}

test_phases() {
    local expr args rc1=0 rc2=0 cache
    marker_expr "$@"
    expr=$EXPR
    args=(${ARGS[@]+"${ARGS[@]}"})
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
    deps)
        scopes=(run); [ "${1:-run}" = test ] && scopes=(run test)
        mapfile -t rows < <(missing_rows "${scopes[@]}")
        [ ${#rows[@]} -eq 0 ] && { echo "dev.sh: nothing missing (${scopes[*]})" >&2; exit 0; }
        say_missing "$(install_how)" "${rows[@]}"; exit 1 ;;
    run) setup; exec "$VENV/bin/cyclebench" run "$@" ;;
    test-expr) marker_expr "$@"; echo "$EXPR" ;;  # the marker expression test would use (its tests)
    test)
        setup test
        "$VENV/bin/ruff" check src tests bench
        "$VENV/bin/lint-imports" --no-cache   # the house's arrows (pyproject.toml, docs/architecture.md)
        test_phases "$@"
        ;;
    *) echo "usage: bash dev.sh run|test|setup|deps [args]" >&2; exit 2 ;;
esac
