"""Which of many literals occur in a text, found in one Aho-Corasick pass: the packs' keyword pre-filters and the PII
detectors' hint words share it."""

from __future__ import annotations

from collections.abc import Iterable

import ahocorasick


class LiteralScan:
    """Which of many literals occur in a text, found in one Aho-Corasick pass instead of one search per literal.

    Used as an exact pre-filter: a pattern whose needle is absent from a text cannot match it.
    """

    def __init__(self, literals: Iterable[str]) -> None:
        self._automaton = ahocorasick.Automaton()
        for literal in set(literals):
            self._automaton.add_word(literal, literal)
        self._automaton.make_automaton()

    def present(self, text: str) -> set[str]:
        return {literal for _, literal in self._automaton.iter(text)}
