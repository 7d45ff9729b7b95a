"""Bidirectional and other controls in what reviewers read: a right-to-left override (U+202E) in a title can make "pay
100" read as "001 yap", or hide what follows it. Wherever the page, the command line or the API shows stored text, each
such control is replaced by a visible mark naming it (`reporting.visible_controls`, as in the Dagster UI's previews),
so it neither reorders nor hides anything, and a reviewer sees that it was there."""

from __future__ import annotations

from typing import Any

from extraction_assets.lib.reporting import map_strings, visible_controls


def shown(value: Any) -> Any:
    """`value` with every control character in its strings (keys included) made visible, its shape kept."""
    return map_strings(value, visible_controls)
