"""`cyclebench report`: the lab as a static site — hosts, runs, benchmark histories with their
change points, comparisons, variant rankings, scale curves, the fleet's hosts side by side
(docs/site.md). The site is files: open index.html from disk, copy it to any web server, or
look at it now with --serve (the standard library's http.server on 127.0.0.1)."""

from __future__ import annotations

import datetime as dt
import functools
import http.server
import os
import time
from dataclasses import dataclass
from pathlib import Path

import click

from cyclebench.stats import changepoint
from cyclebench.ui.common import UserError, err, open_store, out
from cyclebench.ui.options import db_option, parse_labels
from cyclebench.ui.record import group, option, takes

DEFAULT_DIR = Path("cyclebench-report")


def serve(root: Path, port: int) -> None:
    """Serve ``root`` on 127.0.0.1:``port`` (0: any free port) until Ctrl-C; prints the URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    try:
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as e:
        raise UserError(f"--serve {port}: cannot listen on 127.0.0.1:{port}: {e.strerror or e}") from None
    with httpd:
        out.print(f"serving {root} at http://127.0.0.1:{httpd.server_address[1]}/ (Ctrl-C stops)", highlight=False,
                  soft_wrap=True)
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            err.print("cyclebench: stopped serving", highlight=False)


@dataclass(frozen=True, kw_only=True)
class ReportArgs:
    """`report`'s options (--help gives each one's meaning)."""

    output_path: Path = option("-o", "--output", type=click.Path(path_type=Path), default=DEFAULT_DIR,
                               show_default=True, help="The site's directory (a site there is replaced whole; any "
                               "other files there refuse).")
    db: str | None = group(db_option)
    bench: str | None = option("--bench", metavar="GLOB", help="Only runs with these benchmarks (as `run -b`), and "
                               "only their histories.")
    host: str | None = option("--host", help="Only runs of this host (its name or host id).")
    label_args: tuple[str, ...] = option("--label", multiple=True, metavar="KEY=VALUE",
                                         help="Only runs with this label.")
    since: dt.datetime | None = option("--since", type=click.DateTime(["%Y-%m-%d"]), metavar="YYYY-MM-DD",
                                       help="Only runs started on or after this day (UTC).")
    window: int = option("--window", type=click.IntRange(1), default=10, show_default=True, help="Runs that count as "
                         "recent: a change point among a host's last N runs of a benchmark is an open regression on "
                         "the index.")
    jobs: int | None = option("-j", "--jobs", type=click.IntRange(1), metavar="N", help="Processes writing the run "
                              "pages (default: the CPUs this process may use, at most 4).")
    serve_port: int | None = option("--serve", type=click.IntRange(0, 65535), is_flag=False, flag_value=8000,
                                    metavar="[PORT]", help="Then serve the site on 127.0.0.1:PORT (default 8000; 0: "
                                    "any free port) until Ctrl-C.")


@click.command("report")
@takes(ReportArgs)
def report_cmd(a: ReportArgs) -> None:
    """Write the lab as a static site: hosts, runs, histories with change points, comparisons, variants, scale,
    fleet.

    Every page is what a command prints: a run's is `show RUN --wide`, a benchmark's history is
    `history BENCH --host H` per host (the same change points), the fleet's is `compare --by host`.
    Plots are interactive (plotly.js, carried by the site: no network needed); the site opens
    from disk (index.html) or any web server. docs/site.md describes each page.
    """
    from cyclebench.commands.show import print_run
    from cyclebench.experiments import site
    from cyclebench.experiments.show import comparison_rows, variants_data
    from cyclebench.experiments.stored import host_rows

    filters = site.Filters(bench=a.bench, host=a.host, labels=parse_labels(a.label_args),
                           since=a.since.date() if a.since else None)
    show = site.Show(print_run=print_run, is_comparison=lambda run: comparison_rows(run) is not None,
                     is_variants=lambda run: variants_data(run) is not None, host_rows=host_rows)
    store = open_store(a.db, create=False)
    t = time.perf_counter()
    jobs = a.jobs or max(1, min(4, len(os.sched_getaffinity(0))))
    built = site.build(store, a.db, a.output_path, filters, show, a.window, changepoint.ALPHA, jobs)
    written, n_runs, n_series = built.written, built.runs, built.histories
    page, size = written.largest
    err.print(f"site: {len(written.pages)} pages ({n_runs} runs, {n_series} benchmark histories) in "
              f"{time.perf_counter() - t:.1f} s; largest page {page} {size / 2**20:.2f} MiB", highlight=False)
    out.print(f"{(a.output_path / 'index.html')}", highlight=False, soft_wrap=True)
    if a.serve_port is not None:
        serve(a.output_path, a.serve_port)
