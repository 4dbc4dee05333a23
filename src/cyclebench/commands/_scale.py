"""`cyclebench scale`'s outputs: will-it-scale's CSV per benchmark and the series' tables (the
design: experiments/scale.py)."""


from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cyclebench.commands._common import UserError, out, write_text
from cyclebench.model import Series
from cyclebench.report.text import safe_text
from cyclebench.stats import scaling


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


def print_series(series: Sequence[Series], descriptions: Mapping[str, str | None], first_mode: str | None,
                 wide: bool, console: Any = out) -> None:
    """The tables of `scale` (and of `show` of its run): per series its test case's description
    (once, in the first mode), the table (report.plots.scale_table), then the efficiency chart."""
    from cyclebench.report import plots

    for s in series:
        if s.bench in descriptions and s.mode == first_mode:
            console.print(safe_text(f"{s.bench}: {descriptions[s.bench] or '(no description)'}"), highlight=False)
        console.print(plots.scale_table(s, wide=wide))
    chart = plots.text_chart(series)
    if chart:
        console.print("\n".join(chart), highlight=False, markup=False)
