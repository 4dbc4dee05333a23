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
