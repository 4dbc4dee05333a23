"""Command line (click). Thin: the group, its signal handling and one error → exit-code map;
each subcommand is a recipe in ``commands/``.

Every error a user can cause ends in one line saying what to do (exit 2 for usage and
input errors), never a traceback; results already measured stay in the database.
"""

from __future__ import annotations

import importlib
import signal
import sys
from typing import Any, NoReturn

import click

from cyclebench import __version__

# Every subcommand, loaded when it is run or its help is asked for: `cyclebench --help` and a
# command that needs neither numpy nor SQLAlchemy start without importing them (0.66 s → see
# bench/startup.py). name → (module, attribute, the first paragraph of its help, shown by --help;
# tests/unit/test_cli_grammar.py checks it against the command's own).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": ("cyclebench.commands.run", "run",
            "Run the built-in suite, or the benchmarks in FILES (C files using cyclebench.h)."),
    "compare": ("cyclebench.commands.compare", "compare_cmd",
                "Compare benchmarks A B [C...] (paired, interleaved batch by batch, rounds spread over several "
                "processes; each against A), or N stored runs RUN RUN [RUN...] (unpaired; each against the "
                "first, or --baseline; more than two ranked per benchmark), with a verdict only for real "
                "differences."),
    "variants": ("cyclebench.commands.variants", "variants_cmd",
                 "Build FILES (default: the built-in suite, pick with -b) once per flag set / compiler / target / "
                 "allocator and measure the builds side by side."),
    "scale": ("cyclebench.commands.scale", "scale_cmd",
              "Throughput of BENCH (globs; several allowed) run by 1..N tasks at once: speed-up, efficiency, "
              "per-task fairness (will-it-scale done right). will-it-scale test cases given as FILE.c or with -f "
              "run unmodified, as wis/<file stem> (BENCH then optional)."),
    "stat": ("cyclebench.commands.stat", "stat_cmd",
             "Run a whole command like `perf stat -r N`: wall, user, sys and counters (enabled at its exec, "
             "children included), or simulated counts under callgrind."),
    "counters": ("cyclebench.commands.counters", "counters_group",
                 "Counter events: which ones this machine can count, and trying them all on a benchmark."),
    "annotate": ("cyclebench.commands.annotate", "annotate_cmd",
                 "Hot symbols, and the hot instructions of the hottest symbols the benchmark's body reaches: the "
                 "body, what it calls, the kernel under its system calls (perf record -e cpu-clock --call-graph "
                 "dwarf + perf annotate)."),
    "explain": ("cyclebench.commands.explain", "explain_cmd",
                "Why a benchmark costs what it does, as static models see its hot loop: llvm-mca's and OSACA's port "
                "pressure per instruction, the critical chain, and what they do not model."),
    "profile": ("cyclebench.commands.profile", "profile_cmd",
                "A flat profile (gprof's): exact calls per function, self and total per call with the probe's own "
                "cost — measured here — subtracted, % of the time."),
    "bisect": ("cyclebench.commands.bisect", "bisect_cmd",
               "Find the commit that made benchmarks slower: each step builds a revision in a private checkout and "
               "measures it paired with GOOD in one sitting, a verdict per benchmark."),
    "ci": ("cyclebench.commands.ci", "ci_cmd",
           "Gate a pull request: build its base and head, measure every benchmark paired in one sitting (and count "
           "instructions under callgrind), fail when one is slower beyond its threshold."),
    "history": ("cyclebench.commands.history", "history_cmd",
                "One benchmark's per-run estimate ± CI in time order, with its change points."),
    "report": ("cyclebench.commands.report", "report_cmd",
               "Write the lab as a static site: hosts, runs, histories with change points, comparisons, variants, "
               "scale, fleet."),
    "check": ("cyclebench.commands.check", "check_cmd",
              "What spoils measurements on this machine, and the command that fixes each (like pyperf system "
              "show)."),
    "selftest": ("cyclebench.commands.selftest", "selftest_cmd",
                 "Check cyclebench's own precision here with known effects (A/A, +1 cycle, linearity, timer)."),
    "gen": ("cyclebench.commands.gen", "gen_group", "Generate benchmark sources."),
    "runs": ("cyclebench.commands.runs", "runs_cmd",
             "List stored runs by start time, newest first, with their labels; filtered by benchmark, host, label "
             "and date."),
    "show": ("cyclebench.commands.show", "show_cmd",
             "Print a stored run (default: the last) as the command that made it printed it: a run's results "
             "(callgrind's events, the counters), compare's verdicts, variants' rankings, scale's tables, stat's, "
             "a profile."),
    "export": ("cyclebench.commands.export", "export_cmd",
               "Write a stored run (default: the last) in a format other tools read: json (lossless, `import` "
               "reads it), gbench (Google Benchmark JSON), benchstat (Go benchmark lines), pyperf, csv, markdown "
               "or text (72 columns, for mail)."),
    "import": ("cyclebench.commands.import_run", "import_cmd", "Load a run exported with --json into the database."),
    "delete": ("cyclebench.commands.delete", "delete_cmd",
               "Delete stored runs RUN... with their results and samples (asks first unless --yes)."),
    "cache": ("cyclebench.commands.cache", "cache_group",
              "The build cache: how big it is, and removing what is not used."),
    "fleet": ("cyclebench.commands.fleet", "fleet_group",
              "Run cyclebench on every host of an Ansible inventory; results into one database."),
}


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (what `timeout`, a CI cancel or a closed terminal send), raised where
    Ctrl-C would be, so every command kills its runners and keeps what it stored (a
    runner once outlived a CLI killed this way, spinning on its pinned CPU)."""


def _terminated(signum: int, _frame: Any) -> None:
    raise Terminated(signal.Signals(signum).name)


class _Cli(click.Group):
    """click's lazy group (click.palletsprojects.com, "Lazily Loading Subcommands"): a command's
    module is imported when the command is looked up, and its output files are guarded then."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            from cyclebench.ui.outputs import guard_command

            module, attr, _ = COMMANDS[cmd_name]
            cmd = getattr(importlib.import_module(module), attr)
            guard_command(cmd)  # an output that is the database or a source is refused before anything runs
            self.add_command(cmd, cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The list of --help from COMMANDS' summaries, loading no command."""
        rows = [(name, click.Command(name, help=COMMANDS[name][2]).get_short_help_str(formatter.width - 6 -
                                                                                         max(map(len, COMMANDS))))
                for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _terminated)
        if getattr(signal.getsignal(signal.SIGINT), "cyclebench_early", False):  # entry's, until the command runs
            signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # one not handled by the command itself (e.g. during a build)
            from cyclebench.ui.common import err

            err.print("cyclebench: interrupted", highlight=False)
            sys.exit(130)
        except Exception as e:  # the one error → exit-code map for what no command caught (below)
            _one_line(e)
            raise


def _one_line(e: Exception) -> None:
    """A user's database or file problem is one line and exit 2, never a traceback; what was
    stored stays. Anything else is left to propagate."""
    from cyclebench.experiments.errors import ExperimentError
    from cyclebench.store import StoreError

    if isinstance(e, (StoreError, ExperimentError)):
        fail(str(e))
    if isinstance(e, OSError) and e.filename is not None:
        fail(f"{e.filename}: {e.strerror or e}")


def all_commands(group: click.Group | None = None, prefix: str = "") -> dict[str, click.Command]:
    """Every command, loaded, by its full name ("fleet run") — for tests and the fleet's plan."""
    group = main if group is None else group
    out: dict[str, click.Command] = {}
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None:
            continue
        out[prefix + name] = cmd
        if isinstance(cmd, click.Group):
            out.update(all_commands(cmd, prefix + name + " "))
    return out


def fail(message: str) -> NoReturn:
    from rich.text import Text

    from cyclebench.ui.common import err

    err.print(Text(f"cyclebench: error: {message}", style="bold red"), soft_wrap=True)
    sys.exit(2)


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cyclebench")
def main() -> None:
    """Measure low-level code in cycles per operation."""
