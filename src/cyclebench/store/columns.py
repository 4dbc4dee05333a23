"""The newest schema's tables and columns as names and types, known without importing SQLAlchemy.

store/schema.py is the schema (SQLAlchemy's tables, Alembic's revisions follow it); this module
says the same as plain names, for what runs without SQLAlchemy: the check that a database holds
every table and column (migrate.damage), the standard library's sqlite3 reading a file
(store/reads.py) and writing it (store/writes.py) with the conversions SQLAlchemy's types make,
and the records' damaged-column rule (rows.sound). A test checks every set against store/schema.py.
"""

from __future__ import annotations

# Every table of the newest schema and its columns, in store/schema.py's order (metadata.sorted_tables).
HEAD_COLUMNS: dict[str, tuple[str, ...]] = {
    "fleet_jobs": ("id", "started_at", "finished_at", "status", "inventory", "command", "mode"),
    "meta": ("key", "value"),
    "runs": ("id", "started_at", "finished_at", "status", "command", "host", "cpu_model", "cpu", "tool_version",
             "code_rev", "build", "calibration", "env", "summary", "host_id", "pid", "heartbeat_at", "pid_start",
             "labels", "group_id", "kernel_release", "kernel_version", "boot_id", "microcode", "compiler",
             "code_dirty", "purpose"),
    "fleet_hosts": ("id", "job_id", "host", "status", "reason", "finished_at", "check", "run_ids", "machine"),
    "predictions": ("id", "run_id", "bench", "param", "variant", "tool", "status", "reason", "tool_version", "mcpu",
                    "cpu_model", "cycles_per_iter", "trips_per_op", "cycles_per_op", "throughput", "lcd", "coverage",
                    "detail", "created_at"),
    "results": ("id", "run_id", "bench", "param", "variant", "status", "reason", "unit", "per_op", "ci_low",
                "ci_high", "intercept", "median", "median_ci_low", "median_ci_high", "min", "mad", "mean", "cv",
                "rcv", "confidence", "method", "rounds", "ns_per_op", "cycles_per_op", "cycles_ci_low",
                "cycles_ci_high", "cycles_min", "cycles_rcv", "core_ghz", "ratio_rcv", "chain_agreement",
                "n_disturbed", "n_trimmed", "pmu_cycles_per_op", "pmu_ci_low", "pmu_ci_high", "pmu_agreement",
                "net_per_op", "net_ci_low", "net_ci_high", "cycles_net", "cycles_net_ci_low", "cycles_net_ci_high",
                "n_samples", "outliers", "timer_overhead", "wall_s", "created_at", "extra", "kind", "plan_index"),
    "samples": ("result_id", "idx", "iters", "ticks", "cal", "disturbed", "pmu"),
}

# The columns of each type that SQLAlchemy converts (JSON: json.dumps in, json.loads out; Boolean:
# 0/1 on SQLite) or that a record reads as a number (Integer and BigInteger, Float); every other
# column is text, written and read as it is.
INTEGER: dict[str, frozenset[str]] = {
    "fleet_jobs": frozenset(("id",)),
    "meta": frozenset(),
    "runs": frozenset(("id", "cpu", "pid", "pid_start", "group_id")),
    "fleet_hosts": frozenset(("id", "job_id")),
    "predictions": frozenset(("id", "run_id", "param")),
    "results": frozenset(("id", "run_id", "param", "rounds", "n_disturbed", "n_trimmed", "n_samples", "outliers",
                          "plan_index")),
    "samples": frozenset(("result_id", "idx", "iters", "ticks", "cal", "disturbed", "pmu")),
}
FLOAT: dict[str, frozenset[str]] = {
    "fleet_jobs": frozenset(),
    "meta": frozenset(),
    "runs": frozenset(),
    "fleet_hosts": frozenset(),
    "predictions": frozenset(("cycles_per_iter", "trips_per_op", "cycles_per_op", "throughput", "lcd", "coverage")),
    "results": frozenset(HEAD_COLUMNS["results"][HEAD_COLUMNS["results"].index("per_op"):]) - {
        "method", "rounds", "n_disturbed", "n_trimmed", "n_samples", "outliers", "created_at", "extra", "kind",
        "plan_index"},
    "samples": frozenset(),
}
JSON: dict[str, frozenset[str]] = {
    "fleet_jobs": frozenset(("command",)),
    "meta": frozenset(),
    "runs": frozenset(("command", "build", "calibration", "env", "summary", "labels")),
    "fleet_hosts": frozenset(("check", "run_ids", "machine")),
    "predictions": frozenset(("detail",)),
    "results": frozenset(("extra",)),
    "samples": frozenset(),
}
BOOLEAN: dict[str, frozenset[str]] = {table: frozenset() for table in HEAD_COLUMNS} | {
    "runs": frozenset(("code_dirty",))}

# the calibration chains' raw readings a timing result's runner line keeps (``extra`` of its row;
# stats.clock reads them): tick lists no table shows, most of a stored row's bytes
# (Store.results_of(raw=False) leaves them out)
RAW_EXTRA = ("chain", "chains")

# the columns a writer gives (all but the ids the database assigns): a run's, a result's, a prediction's
RUN_FIELDS = HEAD_COLUMNS["runs"][1:]
RESULT_FIELDS = HEAD_COLUMNS["results"][2:]
PREDICTION_FIELDS = HEAD_COLUMNS["predictions"][2:]
