"""The one negation helper of the heuristic packs, with each pack's way of reading back from a keyword."""

from __future__ import annotations

import pytest

from extraction_assets.lib.heuristics.negation import Negation
from extraction_assets.lib.heuristics.segments import normalize_for_match

FILLERS = frozenset({"any", "có", "a"})
NEAREST = Negation(frozenset({"no", "not", "không"}), ("没有", "不"), reach=4, passed_over=FILLERS)
EITHER = Negation(frozenset({"not", "rarely"}), ("不", "很少"), reach=2, passed_over=None, cjk_window=3, chars_back=30)
ADJACENT = Negation(frozenset({"not", "no", "不"}), adjacent=True)


def _negated(negation: Negation, text: str, keyword: str) -> bool:
    norm = normalize_for_match(text)
    return negation.negates(norm, norm.index(keyword))


@pytest.mark.parametrize(
    ("negation", "text", "keyword", "negated"),
    [
        (NEAREST, "there is no delay", "delay", True),
        (NEAREST, "Không có rủi ro", "rủi ro", True),  # a filler passed over
        (NEAREST, "not any major delay", "delay", False),  # "major" is no filler: it decides
        (NEAREST, "not a delay", "delay", True),
        (NEAREST, "a delay, not yet", "delay", False),  # after the keyword: nothing
        (NEAREST, "没有延迟", "延迟", True),
        (NEAREST, "有没有人延迟", "延迟", False),  # a CJK negator must stand right before
        (EITHER, "not very expensive", "expensive", True),  # one of the two words before
        (EITHER, "not at all expensive", "expensive", False),
        (EITHER, "很少点外卖", "外卖", True),  # within three characters
        (EITHER, "不太想点外卖", "外卖", False),
        (ADJACENT, "not urgent", "urgent", True),
        (ADJACENT, "not, urgent", "urgent", False),  # punctuation between: not a negation of it
        (ADJACENT, "knot urgent", "urgent", False),  # a whole word only
        (ADJACENT, "", "", False),
    ],
)
def test_a_keyword_is_negated_by_the_packs_rule(negation: Negation, text: str, keyword: str, negated: bool) -> None:
    assert _negated(negation, text, keyword) is negated
