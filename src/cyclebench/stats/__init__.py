"""Pure statistics (numpy/scipy only, no I/O): estimators, the core clock (cycles~), A/B tests
and the verdict rule, Outcome → result fields, scaling and repetition summaries.

The estimators' names are loaded on first use (PEP 562's module ``__getattr__``): importing a
submodule (``stats.ab``'s ALPHA, ``stats.repetitions``'s records) runs this file, and numpy
(~110 ms) is for the commands that estimate, not for `show` of a stored compare."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cyclebench.stats.estimators import (
        Estimate,
        NotEnoughSamples,
        combine_difference,
        estimate,
        round_slopes,
        slow_side,
    )

__all__ = ["Estimate", "NotEnoughSamples", "combine_difference", "estimate", "round_slopes", "slow_side"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from cyclebench.stats import estimators

        return getattr(estimators, name)
    raise AttributeError(f"module 'cyclebench.stats' has no attribute {name!r}")
