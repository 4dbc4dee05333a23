"""Command line (click). Thin: the group, its signal handling and one error → exit-code map;
each subcommand is a recipe in ``commands/``.

Every error a user can cause ends in one line saying what to do (exit 2 for usage and
input errors), never a traceback; results already measured stay in the database.
"""

from __future__ import annotations

import signal
import sys
from typing import Any, NoReturn

import click
from rich.text import Text

from cyclebench import __version__
from cyclebench.commands import (
    annotate,
    cache,
    check,
    compare,
    counters,
    delete,
    fleet,
    gen,
    history,
    profile,
    results,
    run,
    scale,
    selftest,
    stat,
    variants,
)
from cyclebench.commands._common import err
from cyclebench.commands._outputs import guard as guard_outputs
from cyclebench.store import StoreError


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (what `timeout`, a CI cancel or a closed terminal send), raised where
    Ctrl-C would be, so every command kills its runners and keeps what it stored (audit D1)."""


def _terminated(signum: int, _frame: Any) -> None:
    raise Terminated(signal.Signals(signum).name)


class _Cli(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _terminated)
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # one not handled by the command itself (e.g. during a build)
            err.print("cyclebench: interrupted", highlight=False)
            sys.exit(130)
        # The one error → exit-code map for what no command caught: a user's database or file
        # problem is one line and exit 2, never a traceback (audit D9); what was stored stays.
        except StoreError as e:
            fail(str(e))
        except OSError as e:
            if e.filename is None:
                raise
            fail(f"{e.filename}: {e.strerror or e}")


def fail(message: str) -> NoReturn:
    err.print(Text(f"cyclebench: error: {message}", style="bold red"), soft_wrap=True)
    sys.exit(2)


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cyclebench")
def main() -> None:
    """Measure low-level code in cycles per operation."""


for _cmd in (run.run, compare.compare_cmd, variants.variants_cmd, scale.scale_cmd, stat.stat_cmd,
             counters.counters_group, annotate.annotate_cmd, profile.profile_cmd, history.history_cmd,
             check.check_cmd, selftest.selftest_cmd, gen.gen_group,
             results.runs_cmd, results.show_cmd, results.export_cmd, results.import_cmd, delete.delete_cmd,
             cache.cache_group, fleet.fleet_group):
    main.add_command(_cmd)
guard_outputs(main)  # an output that is the database or a source is refused before anything runs


if __name__ == "__main__":  # python -m cyclebench.cli: the program, as the console script runs it
    from cyclebench.entry import main as program

    program()
