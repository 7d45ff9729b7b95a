"""The words the generic pack brings of its own: the negators, per language, that cancel a keyword right after them.

Every other word the pack looks for (`when`, `near`, `keywords`) comes from the schema's prompt file. Adding a
language means adding its negators here.
"""

from __future__ import annotations

# A keyword right after one of these ("not urgent", "không gấp") does not count.
NEGATORS = frozenset({"not", "no", "never", "without", "không", "chưa", "chẳng", "не", "没有", "不"})
