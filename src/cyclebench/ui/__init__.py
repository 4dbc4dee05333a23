"""The command line's shared parts, below the commands and above the designs: what every
subcommand of ``commands/`` declares, shows and ends with, written once.

* ``common``: the two consoles (stdout for results, stderr for the rest), ``UserError`` (one
  line, exit 2), ``open_store``, ``write_text``; ``options``: the option groups every command
  shares (build, runner, output format, ``--db``, ``--json``, labels); ``record``: a command's
  options as one frozen record (``@takes``); ``finish``: the one ending (build errors with the
  compiler's output, the interrupt message and exit 130, the exit status); ``outputs``: no
  output file may overwrite an input; ``export``: ``--format/-o`` and ``--json`` delivered;
  ``progress``: bars, steps and notes on stderr.
* One module per design that shows more than a table while it runs — ``run``, ``compare``,
  ``stored`` (compare of stored runs and hosts), ``variants``, ``scale``, ``wis``,
  ``revisions`` (``--rev``), ``predict`` (``--predict``): its progress wired to the design's
  ``experiments.progress.Progress``, its tables printed through ``report/``.

Click and rich live here and in ``commands/``; ``experiments/`` below never prints
(docs/architecture.md).
"""
