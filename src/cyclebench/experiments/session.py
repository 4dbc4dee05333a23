"""Opening a run, the one way: the timer calibrated, the machine and who made the run captured,
the run row inserted (docs/method.md; env/identity.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from cyclebench import __version__
from cyclebench.model import CalibrationLine, EnvExtra

if TYPE_CHECKING:
    from cyclebench.build import Binary
    from cyclebench.runner import Runner
    from cyclebench.store import Store

__all__ = ["HOST_ENV", "open_run"]


def _digests(sources: Sequence[str | Path]) -> dict[str, str]:
    """Each benchmark source's own digest (sha256, 16 hex digits), path → digest: a changed
    benchmark file starts a new series (model.source_digest, series_key). Sources that cannot be
    read are left out."""
    import hashlib

    out = {}
    for src in sources:
        try:
            out[str(src)] = hashlib.sha256(Path(src).read_bytes()).hexdigest()[:16]
        except OSError:
            continue
    return out

# A sitting: how long a runner's timer calibration is reused on its CPU (same boot, same binary).
# The TSC's rate does not change within a boot (invariant TSC) and the timer pair's cost is the
# CPU's; measuring them again costs a run ~60 ms here (runner --calibrate 32 ms, dmesg 7–25 ms),
# a third of what `compare` then measures. The bound keeps a VM's later host (a live migration)
# from inheriting an hour-old figure.
SITTING_S = 600.0


def _sitting_calibration(runner: Runner, cpu: int) -> CalibrationLine:
    """The runner's ``--calibrate`` line with the rate chosen (``rate_hz``, ``rate_source``), as
    measured within this sitting (SITTING_S) on ``cpu`` by this very binary in this boot, else
    measured now. Remembered beside the binary in its private build-cache entry
    (``calibration-cpuN.json``, pruned with it); never under an injected fault (selftest)."""
    import json
    import time

    from cyclebench.build.compile import UnsafeCache, build_dir, memo_load, memo_store
    from cyclebench.env import identity, sysinfo
    from cyclebench.stats import clock

    entry = Path(runner.binary).parent
    memo = entry / f"calibration-cpu{cpu}.json"
    whose = {"boot_id": identity.boot_id(), "launcher": runner.launcher, "binary": str(runner.binary)}
    try:  # only a binary of the build cache: a file beside anyone else's binary is not ours to write
        ours = build_dir(create=False) == entry.parent
    except (UnsafeCache, OSError):
        ours = False
    cacheable = ours and not os.environ.get("CYCLEBENCH_FAULT") and whose["boot_id"] is not None
    data = memo_load(memo) if cacheable else None
    if data is not None:
        try:
            kept = json.loads(data)
            age = time.time() - float(kept["at"])
            if kept["whose"] == whose and 0 <= age <= SITTING_S:
                return cast(CalibrationLine, {**kept["line"], "age_s": round(age, 1)})
        except (ValueError, KeyError, TypeError):  # damaged: measured again
            pass
    line = runner.calibrate()
    rate, source = clock.timer_rate(line, sysinfo.kernel_tsc_hz())
    calib = cast(CalibrationLine, {**line, "rate_hz": rate, "rate_source": source})
    if cacheable and not line.get("fault"):
        memo_store(memo, json.dumps({"whose": whose, "at": time.time(), "line": calib}).encode())
    return calib


# The name a run's host is stored under when not the machine's hostname: `cyclebench fleet` sets it
# to the inventory name (env["hostname"], host_id and boot_id still say which machine it was).
HOST_ENV = "CYCLEBENCH_HOST"


def open_run(store: Store, command: Sequence[str], cpu: int, sources: Sequence[Path], binary: Binary | None,
             runner: Runner | None, cc: str = "cc", env_extra: EnvExtra | None = None,
             pinned: bool = True, labels: Mapping[str, str] | None = None,
             purpose: str | None = None) -> tuple[int, float]:
    """The one way a run is opened: calibrate the timer (when there is a runner), capture the
    environment of ``cpu`` (sysinfo, and what `cyclebench check` says now) plus ``env_extra``,
    and insert the run row (its CPU only when one runner was ``pinned`` there) with its
    identity (host: $CYCLEBENCH_HOST or the hostname; host id, kernel release and version, boot
    id, CPU model and microcode, compiler, cyclebench version, the sources' git revision and
    dirty flag: env.identity), the user's ``labels`` (--label KEY=VALUE) and its ``purpose``
    (model.PURPOSES; None: what its command and labels tell, store.db). Returns (run id,
    timer rate in Hz; 0.0 without a runner)."""
    from cyclebench.env import check, identity, sysinfo

    calib: CalibrationLine | None = None
    rate = 0.0
    if runner is not None:
        calib = _sitting_calibration(runner, cpu)
        rate = calib["rate_hz"]
    env = sysinfo.capture(cpu, cc=binary.cc if binary is not None else cc,
                          cc_version=binary.cc_version if binary is not None else None,
                          cc_target=binary.cc_target if binary is not None else None)
    env["check"] = [f.to_dict() for f in check.run_checks(cpu)]
    env.update(env_extra or {})
    build = None if binary is None else {"cc": binary.cc, "cc_version": binary.cc_version,
                                          "cflags": list(binary.cflags), "sources": list(binary.sources),
                                          "key": binary.key, "digests": _digests(binary.sources),
                                          # flags beside cflags, kept where given (model.build_of: a series' build)
                                          **{k: list(v) for k, v in (("defines", binary.defines),
                                                                     ("include_dirs", binary.include_dirs),
                                                                     ("ldflags", binary.ldflags)) if v}}
    ident = identity.columns(env, binary.cc_version if binary is not None else None, identity.code_identity(sources))
    run_id = store.begin_run(
        command=list(command) or sys.argv, host=os.environ.get(HOST_ENV) or env.get("hostname"),
        cpu_model=(env.get("cpu_info") or {}).get("model_name"), cpu=cpu if pinned else None, tool_version=__version__,
        calibration=calib, env=env, build=build, labels=dict(labels) if labels else None, purpose=purpose, **ident,
    )
    return run_id, rate
