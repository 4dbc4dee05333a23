"""Everything that starts a process and reads its JSON lines: the child (child), the protocol
and its one outcome classifier (protocol), the runner binary (engine), the plan, rounds over
processes (interleave), scaling, callgrind, whole-command exec and perf record."""

from cyclebench.lifetime import die_with_parent
from cyclebench.runner.child import STDERR_TAIL, Child, run_child
from cyclebench.runner.engine import Runner, RunnerError

__all__ = ["STDERR_TAIL", "Child", "Runner", "RunnerError", "die_with_parent", "run_child"]
