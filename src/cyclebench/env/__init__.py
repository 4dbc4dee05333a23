"""The machine: sysinfo (facts read from sysfs/procfs, CPU choice and pinning), cpus (where `scale`'s tasks
go), check (findings as data)."""
