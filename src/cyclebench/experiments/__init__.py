"""Experiment designs: how the lab measures, between the command line and the rooms below it
(the term and its discipline: Kalibera & Jones 2013, docs/references.md#kalibera-jones-2013).

One module per design — ``sequential`` (compare's look-after-each-process loop and its
α spending), ``selftest`` (the checks that tell a busy host from a broken tool), ``stat`` (a
whole command repeated, perf stat's design), ``profile`` (exact calls with the probe measured
and subtracted), ``scale`` (will-it-scale's tasks over task counts), ``history`` (a host's past
runs: the run-to-run spread), ``site`` (`report`'s reading of the database into its pages) —
with ``session`` opening a run the one way (timer calibration, environment, identity).
Typed options in, records out: no click, no rich, no printing; what a
design has to say while it runs goes through ``progress.Progress``, and what stops it is an
``ExperimentError`` (one line for the user; the command line maps it to exit 2).
"""
