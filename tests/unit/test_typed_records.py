"""The TypedDicts that name a stored JSON shape say the keys that shape has (docs/architecture.md,
"A new record kind")."""

from __future__ import annotations

from dataclasses import fields
from typing import get_type_hints

from cyclebench.model import Comparison, ComparisonJSON, VariantEntry


def test_comparison_json_is_the_records_fields_and_reads_back() -> None:
    c = Comparison(10.0, 11.0, 1.0, 0.5, 1.5, 0.1, 0.01, 12, 0.2, "slower")
    d = c.to_dict()
    assert list(d) == [f.name for f in fields(Comparison)] == list(get_type_hints(ComparisonJSON))
    assert Comparison(**d) == c


def test_a_variant_entry_always_has_its_four_keys() -> None:
    assert VariantEntry.__required_keys__ == {"label", "status", "emulated", "baseline"}
    assert {"mean", "comparison", "allocator", "disasm"} <= VariantEntry.__optional_keys__


def test_a_scale_point_names_every_key_a_summary_stores() -> None:
    """model.ScalePoint (a series' stored point) and stats.scaling.Summary (the record it is made
    from) are declared apart: a key Summary gains must be named in ScalePoint too. The point adds
    the result's status, reason, notes and the test case's description; Summary's flags (started,
    sched) say which keys it has and are not stored."""
    from cyclebench.model import ScalePoint
    from cyclebench.stats.scaling import Summary

    stored = {f.name for f in fields(Summary)} - Summary._FLAGS
    assert set(get_type_hints(ScalePoint)) == stored | {"status", "reason", "notes", "description"}
