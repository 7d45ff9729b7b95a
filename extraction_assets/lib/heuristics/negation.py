"""Whether a keyword is negated: a negator right before it ("not urgent", "không trễ", "没什么麻烦"). The one helper
every pack asks; each pack gives its own negators and how far back one may stand.

Matched on `normalize_for_match` text. Before a CJK keyword (no spaces between words) a CJK negator is looked for
among the characters right before it; elsewhere the words before the keyword are read back from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_WORD = re.compile(r"[\w']+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class Negation:
    """A pack's negators and how far back one may stand before a keyword."""

    words: frozenset[str]  # negators in scripts with spaces between words
    cjk: tuple[str, ...] = ()  # negators in CJK
    reach: int = 1  # a negator among the last `reach` words before the keyword ...
    passed_over: frozenset[str] | None = frozenset()  # ... with only these between (None: any word)
    adjacent: bool = False  # nothing but spaces between the negator and the keyword (no punctuation)
    cjk_window: int = 0  # a CJK negator within this many characters before the keyword; 0: right before it
    chars_back: int = 40  # how much text before the keyword is read

    def negates(self, norm: str, start: int) -> bool:
        """Whether the keyword at `norm[start]` is negated."""
        window = norm[max(0, start - self.chars_back) : start]
        if not window:
            return False
        if self.cjk and _CJK.match(window[-1]):
            if self.cjk_window:
                return any(n in window[-self.cjk_window :] for n in self.cjk)
            return window.endswith(self.cjk)
        if self.adjacent:
            before = window.rstrip()
            return any(before.endswith(w) and not _is_word_char(before, len(before) - len(w) - 1) for w in self.words)
        for word in reversed(_WORD.findall(window)[-self.reach :]):
            if word in self.words:
                return True
            if self.passed_over is not None and word not in self.passed_over:
                return False
        return False


def _is_word_char(text: str, index: int) -> bool:
    return index >= 0 and (text[index].isalnum() or text[index] == "_")
