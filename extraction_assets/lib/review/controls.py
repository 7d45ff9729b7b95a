"""Bidirectional controls in what reviewers read: a right-to-left override (U+202E) in a title can make "pay 100"
read as "001 yap", or hide what follows it. Wherever the page, the command line or the API shows stored text, each
such control is replaced by a visible mark naming it, so it neither reorders nor hides anything, and a reviewer
sees that it was there."""

from __future__ import annotations

import re
from typing import Any

from extraction_assets.lib.reporting import map_strings

_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _mark(found: re.Match[str]) -> str:
    return f"⟦U+{ord(found.group()):04X}⟧"


def _marked(text: str) -> str:
    return _BIDI.sub(_mark, text) if _BIDI.search(text) else text


def shown(value: Any) -> Any:
    """`value` with every bidirectional control in its strings (keys included) made visible, its shape kept."""
    return map_strings(value, _marked)
