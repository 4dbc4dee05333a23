"""`cyclebench compare RUN RUN...`: stored runs compared (the design: experiments/stored.py);
here its errors as one line and, with more than two sides, the ranked table per benchmark
(report/ranked.py)."""

from __future__ import annotations

from collections.abc import Sequence

from cyclebench.commands._common import UserError, out
from cyclebench.experiments.comparison import CompareError, Row
from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.stored import judge_stored as judge
from cyclebench.report.ranked import ranked_table
from cyclebench.store import Store


def judge_stored(targets: Sequence[str], store: Store, baseline: str | None, alpha: float, include_disturbed: bool,
                 wide: bool, quiet_table: bool) -> tuple[list[Row], str]:
    """`compare RUN RUN …` / `gN gM`: every side's stored results judged against the first (or
    ``baseline``); with more than two sides, the ranked table (report.ranked) per benchmark (not when
    stdout carries an export: ``quiet_table``). Returns (rows, the table's title); UserError
    (exit 2) for what the user can fix."""
    try:
        judged = judge(targets, store, baseline, alpha, include_disturbed)
    except (CompareError, ExperimentError) as e:
        raise UserError(str(e)) from None
    rows = list(judged.rows)
    if len(judged.sides) > 2 and not quiet_table:  # every side on one line per benchmark, ranked
        for r in judged.ranked:
            out.print(ranked_table(r.label + ("" if r.param is None else f" [{r.param}]"), rows[0].unit if rows else "",
                                   r.sides, wide=wide))
    return rows, judged.title
