"""The lift over chance and its bootstrap interval over documents (`evaluation.lift`)."""

from __future__ import annotations

import pytest

from extraction_assets.lib.evaluation.lift import DocumentPlacement, lift_interval, pooled_lift


def _docs(*rows: tuple[int, int, float]) -> list[DocumentPlacement]:
    return [DocumentPlacement(items=items, hits=hits, chance=chance) for items, hits, chance in rows]


def test_pooled_lift_is_hits_over_expected_hits() -> None:
    documents = _docs((4, 2, 0.8), (2, 0, 0.2), (0, 0, 0.0))
    assert pooled_lift(documents) == pytest.approx(2 / 1.0)
    assert pooled_lift(_docs((3, 0, 0.0))) is None  # items where nothing could hit: no lift at all


def test_interval_holds_the_lift_and_is_reproducible() -> None:
    documents = _docs(*[(2, i % 3 == 0, 0.3) for i in range(30)], *[(0, 0, 0.0)] * 10)
    interval = lift_interval(documents)
    assert interval is not None
    low, high = interval
    assert low <= round(pooled_lift(documents) or 0, 2) <= high
    assert lift_interval(documents) == interval  # a fixed seed: the same placements, the same interval


def test_few_items_give_a_wide_interval_many_a_narrow_one() -> None:
    few = _docs((1, 1, 0.2), (1, 0, 0.2), (1, 0, 0.2), (1, 0, 0.2), (1, 0, 0.2))
    many = few * 40
    assert pooled_lift(few) == pytest.approx(pooled_lift(many) or 0)
    few_low, few_high = lift_interval(few) or (0, 0)
    many_low, many_high = lift_interval(many) or (0, 0)
    assert few_low < many_low <= many_high < few_high
    assert few_low == 0.0  # four hits short of any: chance itself (1.0) lies inside the interval


def test_no_interval_where_nothing_could_hit() -> None:
    assert lift_interval([]) is None
    assert lift_interval(_docs((2, 0, 0.0), (0, 0, 0.0))) is None
