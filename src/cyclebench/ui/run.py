"""`cyclebench run` around its design (experiments/run.py, also compare's and variants'): the
run's progress bar, the interrupt that keeps what was measured, the one-line errors, the
tables and lines it prints, and `--list`."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cyclebench.experiments.run import Prepared, RunConfig, execute, pass_plan, run_to_run
from cyclebench.model import Item, Result, suite_order
from cyclebench.report import console as console_report
from cyclebench.report.show import print_tables
from cyclebench.report.titles import SIMULATED_TITLE
from cyclebench.report.titles import run_title as title
from cyclebench.runner import RunnerError
from cyclebench.store import RunGone, StoreError
from cyclebench.ui.common import UserError, err, open_store, out, write_text, writing
from cyclebench.ui.export import deliver, export_runs, run_json
from cyclebench.ui.options import OutputOptions
from cyclebench.ui.predict import after_run
from cyclebench.ui.progress import bar

if TYPE_CHECKING:
    from cyclebench.experiments.options import PredictOptions
    from cyclebench.store import Store


def measure_one(cfg: RunConfig, prepared: Prepared, store: Store, quiet: bool, net: bool, wide: bool,
                 earlier: list[int], grouped: bool, table: bool = True) -> tuple[int, list[Result]]:
    """One run with its progress bar; Ctrl-C keeps what was measured (exit 130) and shows it
    (unless not ``table``). The run gets cfg.labels as it opens, ``summary.display`` (--net, for
    `show`) and, with ``grouped``, the group of the first of the replicate runs. Returns (run id,
    its rows in the suite's order: model.suite_order, as the store reads them back)."""
    rows: list[Result] = []
    opened: list[int] = []
    progress = bar(err, disable=quiet)

    def on_open(rid: int) -> None:
        opened.append(rid)
        # how its table was asked for, so `show` prints it so (experiments/show.py)
        store.update_run(rid, summary={"display": {"net": net}},
                         **({"group_id": (earlier or [rid])[0]} if grouped else {}))

    try:
        with progress:
            steps = len(prepared.items) * pass_plan(cfg)[1]  # planned; --target-ci may change it
            task = progress.add_task("measuring", total=steps)

            def on_start(item: Item) -> None:
                progress.update(task, description=f"{item.label:<32.32}")
                progress.advance(task)
                if progress.tasks[0].completed > (progress.tasks[0].total or 0):  # a pass beyond the planned
                    progress.update(task, total=progress.tasks[0].completed)

            run_id, _ = execute(cfg, prepared, store, on_start, lambda _i, row: rows.append(row), on_open=on_open)
    except KeyboardInterrupt:
        if not quiet and rows and table:
            console_report.print_results(suite_order(rows), out, net=net, wide=wide)
        # ours, not the DB's newest: another command may have opened a run since
        where = f"run #{opened[0]}" if opened else "no run was opened"
        err.print(f"cyclebench: interrupted: {len(rows)} result(s) kept ({where}, {store.url})")
        sys.exit(130)
    except RunnerError as e:
        raise UserError(str(e)) from None
    except RunGone as e:  # its results went with it: none is kept
        raise UserError(str(e)) from None
    except StoreError as e:
        raise UserError(f"{e} ({len(rows)} result(s) stored before it are kept)") from None
    return run_id, suite_order(rows)




def report(store: Store, run_id: int, rows: Sequence[Result], prepared: Prepared, backend: str, net: bool,
            wide: bool, table: bool = True) -> None:
    """The run's table (simulated counts under callgrind), counters when -e counted some (not
    without ``table``), and the calibration and environment lines on stderr."""
    run_row = store.get_run(run_id) or {}
    if not table:
        pass
    elif backend == "callgrind":
        console_report.print_simulated(rows, out, title=title(run_id, prepared.cpu, prepared.binary.cc_version)
                                       + SIMULATED_TITLE, wide=wide)
    else:
        print_tables(rows, title(run_id, prepared.cpu, prepared.binary.cc_version), net, wide, out)
    if backend == "timing":
        err.print(console_report.calibration_line(run_row.get("calibration")), highlight=False)
    for line in console_report.environment_lines(rows):
        err.print(line, highlight=False)


def print_list(benches: list[Any], wide: bool = False) -> None:
    from cyclebench.report.listing import bench_list_table

    out.print(bench_list_table(benches, wide))


def plot_runs(rows: Sequence[Result], ids: list[int], path: Path) -> None:
    """--plot: each result's per op with its CI, titled with the runs' ids."""
    from cyclebench.report import plots

    with writing(path, "run #" + ", #".join(map(str, ids))):
        n = plots.plot_results(rows, path, title=f"run{'s' if len(ids) > 1 else ''} #" + ", #".join(map(str, ids)))
    err.print(f"plot of {n} result(s): {path}", highlight=False)


class Replicates(Protocol):
    """What the replicate runs read of `run`'s options."""

    runs: int
    db: str | None
    quiet: bool
    net: bool
    wide: bool
    backend: str
    predict: PredictOptions | None
    json_path: Path | None
    output: OutputOptions
    plot_path: Path | None


def measure_replicates(a: Replicates, cfg: RunConfig, prepared: Prepared) -> list[Result]:
    """``a.runs`` runs one after the other (replicates, stored as one group g<first id>), each
    with its table, predictions (--predict) and --json; then the export (-o: every replicate's
    rows; json: the last run's) and --plot. Returns every run's rows, for the exit status."""
    store = open_store(a.db)
    all_rows: list[Result] = []
    ids: list[int] = []
    table = not a.output.to_stdout  # with an export on stdout, only the lines on stderr
    for _ in range(a.runs):  # replicate runs, one after the other, stored as one group (g<first id>)
        run_id, rows = measure_one(cfg, prepared, store, a.quiet, a.net, a.wide, ids, grouped=a.runs > 1, table=table)
        ids.append(run_id)
        rows = run_to_run(store, run_id, rows)
        all_rows += rows
        if not a.quiet:
            report(store, run_id, rows, prepared, a.backend, a.net, a.wide, table=table)
        after_run(a.predict, store, run_id, {"": prepared.binary.path}, a.wide, a.quiet or not table)
        if a.json_path is not None:
            write_text(a.json_path, run_json(store, run_id), stored=f"run #{run_id}")
        if not a.quiet:
            err.print(f"run #{run_id}: {len(rows)} result(s) stored in {store.url}", highlight=False)
    if a.output.asked:  # every replicate run's rows (json: the last run)
        deliver(a.output, export_runs(store, ids, a.output.fmt), stored=f"run #{ids[-1]}")
    if a.plot_path is not None and ids:
        plot_runs(all_rows, ids, a.plot_path)
    if len(ids) > 1:
        err.print(f"replicate group g{ids[0]}: runs {','.join(map(str, ids))} (compare g{ids[0]} g…)", highlight=False)
    return all_rows
