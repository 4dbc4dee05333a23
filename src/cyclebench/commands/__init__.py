"""One recipe per subcommand, built from the rooms (build, runner, stats, store, report, env)."""
