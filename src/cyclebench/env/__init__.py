"""The machine: sysinfo (facts read from sysfs/procfs), CPU choice and pinning, check (findings as data)."""
