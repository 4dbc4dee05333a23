"""Pure statistics (numpy/scipy only, no I/O): estimators, the core clock (cycles~), A/B tests
and the verdict rule, Outcome → result fields, scaling and repetition summaries."""

from cyclebench.stats.estimators import (
    Estimate,
    NotEnoughSamples,
    combine_difference,
    estimate,
    round_slopes,
    slow_side,
)

__all__ = ["Estimate", "NotEnoughSamples", "combine_difference", "estimate", "round_slopes", "slow_side"]
