"""What the scrubber puts in place of a value: `[KIND_N]` (`[EMAIL_1]`, `[PERSON_NAME_3]`), numbered per kind by
first appearance in the document. Every reader of scrubbed text (chunking, titles, the packs' entities, the vault)
finds placeholders with this one pattern."""

from __future__ import annotations

import re

PLACEHOLDER = re.compile(r"\[(?P<kind>[A-Z][A-Z_]*)_\d+\]")


def placeholder(kind: str, number: int) -> str:
    """The placeholder of the `number`-th distinct value of `kind` in a document."""
    return f"[{kind}_{number}]"
