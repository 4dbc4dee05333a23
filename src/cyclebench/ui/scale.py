"""`cyclebench scale`'s outputs: will-it-scale's CSV per benchmark and the series' tables (the
design: experiments/scale.py)."""


from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from cyclebench.model import Series
from cyclebench.report.show import print_series
from cyclebench.stats import scaling
from cyclebench.ui.common import FAILED_STATUSES, UserError, err, out, write_text, writing


def check_wis_csv(path: Path, benches: int) -> None:
    """Before measuring: --csv-format wis names one file per benchmark ({name} in the path when
    there are several) in a directory that exists. Raises UserError."""
    if benches > 1 and "{name}" not in str(path):
        raise UserError(f"--csv-format wis writes one file per benchmark ({benches} here): put {{name}} in the "
                        "--csv path, e.g. results/{name}.csv")
    parent = Path(str(path).replace("{name}", "x")).parent
    if not parent.is_dir():
        raise UserError(f"--csv: no directory {parent}")


def write_wis_csv(series: list[Series], path: Path, stored: str) -> None:
    """--csv-format wis: will-it-scale's own CSV (stats.scaling.wis_csv_rows), one file per
    benchmark, ``{name}`` in ``path`` replaced by its name (a test case's file stem;
    group-name for the others)."""
    import csv
    import io

    by_bench: dict[tuple[str, int | None], list[Series]] = {}
    for s in series:
        by_bench.setdefault((s.bench, s.param), []).append(s)
    for (bench, param), group in by_bench.items():
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(scaling.wis_csv_rows(group))
        name = bench.removeprefix("wis/").replace("/", "-") + ("" if param is None else f"-{param}")
        write_text(Path(str(path).replace("{name}", name)), buf.getvalue(), stored)


class Outputs(Protocol):
    """What `scale` says where to write (commands/scale.ScaleArgs has these and more)."""

    plot_path: Path | None
    json_path: Path | None
    csv_path: Path | None
    csv_format: str
    wide: bool


def finish(a: Outputs, store: Any, run_id: int, series: list[Series], cpus: Sequence[int],
           descriptions: Mapping[str, str | None], first_mode: str | None) -> None:
    """The tables and the run's line, --plot, --json, --csv; exit 1, each named with its
    reason, when a task count crashed, hung or failed."""
    import csv
    import io
    import sys

    from cyclebench.report import plots
    from cyclebench.ui.export import run_json

    used = len(set(cpus))
    print_series(series, descriptions, first_mode, a.wide, out)
    pct = scaling.sampler_cpu_pct(series)
    err.print(f"run #{run_id} · tasks on CPUs {','.join(map(str, cpus))} ({used} CPUs) · sampler used "
              f"{'-' if pct is None else f'{pct:.3f}'}% of one CPU at most · stored in {store.url}", highlight=False)
    if a.plot_path is not None:
        with writing(a.plot_path, f"run #{run_id}"):
            w, h = plots.plot_scaling(series, a.plot_path, ncpus=used, title=f"cyclebench scale · run #{run_id}")
        err.print(f"plot written to {a.plot_path} ({w}×{h} px)", highlight=False)
    if a.json_path is not None:
        write_text(a.json_path, run_json(store, run_id), f"run #{run_id}")
    if a.csv_path is not None and a.csv_format == "wis":
        write_wis_csv(series, a.csv_path, f"run #{run_id}")
    elif a.csv_path is not None:
        rows, buf = scaling.csv_rows(series), io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["bench"])
        writer.writeheader()
        writer.writerows(rows)
        write_text(a.csv_path, buf.getvalue(), f"run #{run_id}")
    bad = [(s.label, p) for s in series for p in s.points if p.get("status") in FAILED_STATUSES]
    for label, p in bad:
        err.print(f"cyclebench: {label} with {p['tasks']} task(s): {p.get('reason')}", style="red", highlight=False,
                  soft_wrap=True)  # the whole reason: an assert's errno comes last
    if bad:
        sys.exit(1)
