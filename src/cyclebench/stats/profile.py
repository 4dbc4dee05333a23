"""A flat profile with the probe's own cost subtracted (seed 004: "Profiling has subtracted its
own overheads"; gprof's flat profile, Graham, Kessler & McKusick 1982). Pure: numbers in, rows out.

A tracing probe (uftrace's mcount hooks) costs ``whole`` per call of an instrumented function,
measured on this machine as an empty instrumented call against an uninstrumented one. Part of
it, ``inner``, falls between the call's own entry and exit timestamps (measured as the recorded
duration of the empty function); the rest falls in its caller. So for one call of a function
with c child calls and d descendant calls (children, theirs, …):

    self      = raw self  − inner − c · (whole − inner)
    total     = raw total − inner − d · whole

Limits, as the seed says: the probe's cost is measured in the best case (hot caches, one
function); a real program's probe also evicts its lines, so real overhead is larger and the
compensated figures are upper bounds of the truth by that much. A compensated figure below
the probe's own spread (``spread``) is not distinguishable from zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from cyclebench.stats.estimators import MAD_SCALE


class CallsLike(Protocol):  # runner.profile.Calls
    total: list[float]
    self: list[float]
    children: list[int]
    descendants: list[int]


@dataclass(frozen=True)
class Probe:
    """The probe's cost per call, in the profile's unit: ``whole`` (all of it), ``inner`` (the
    part inside the call's own span) and ``spread`` (scaled MAD of the inner part over calls)."""

    whole: float
    inner: float
    spread: float

    def to_dict(self) -> dict[str, float]:
        return {"whole": self.whole, "inner": self.inner, "spread": self.spread}


def inner_part(durations: list[float], scale: float = 1.0) -> tuple[float, float]:
    """The recorded durations of an empty instrumented function → (median, scaled MAD), times
    ``scale`` (e.g. cycles~ per ns)."""
    x = np.asarray(durations, dtype=float)
    if not len(x):
        raise ValueError("the probe's empty function was not recorded")
    med = float(np.median(x))
    return med * scale, MAD_SCALE * float(np.median(np.abs(x - med))) * scale


def flat_profile(calls: Mapping[str, CallsLike], scale: float = 1.0,
                 probe: Probe | None = None) -> list[dict[str, Any]]:
    """One row per function, the largest compensated self time first: calls; raw and compensated
    self and total per call — medians over the calls (a call the host interrupted without a
    schedule event, a VM exit, moves a mean by its whole length: 3,560 against a median of 2,992
    on a 3000-add function here), the means beside them (gprof's time/calls); % of the profile's
    compensated self time (sums); the ± of a compensated self per call (the probe's spread, once
    per probe it subtracts). Durations are multiplied by ``scale``; without ``probe`` the
    compensated figures equal the raw ones."""
    rows = []
    for name, c in calls.items():
        total, own = np.asarray(c.total) * scale, np.asarray(c.self) * scale
        kids, desc = np.asarray(c.children, dtype=float), np.asarray(c.descendants, dtype=float)
        if probe is not None:
            comp_self = own - probe.inner - kids * (probe.whole - probe.inner)
            comp_total = total - probe.inner - desc * probe.whole
            pm = probe.spread * (1.0 + float(kids.mean()))
        else:
            comp_self, comp_total, pm = own, total, None
        rows.append({"function": name, "calls": len(total),
                     "self_raw": float(np.median(own)), "self": float(np.median(comp_self)),
                     "self_mean": float(comp_self.mean()), "self_pm": pm,
                     "total_raw": float(np.median(total)), "total": float(np.median(comp_total)),
                     "total_mean": float(comp_total.mean()),
                     "self_sum": float(np.clip(comp_self, 0, None).sum())})
    whole = sum(r["self_sum"] for r in rows) or 1.0
    for r in rows:
        r["pct"] = 100.0 * r.pop("self_sum") / whole
    return sorted(rows, key=lambda r: -r["pct"])
