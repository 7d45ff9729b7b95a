"""What DuckDB's Python binding needs to bind parameters at full speed.

DuckDB 1.4 asks for pandas (twice) for every Python value it binds, and when pandas is not installed it does not
remember that: each ask is a full, failing search of the import path. The warehouse binds its rows as one list per
column, so a batch of items binds thousands of values, and these searches took most of a batch's time (0.7 ms a
value on a busy machine, against 0.04 ms once the absence is known). Python's own record of a module known to be
absent is a `None` in `sys.modules`: an import then fails at once, as it would after the search.
"""

from __future__ import annotations

import importlib.util
import sys

BOUND_VALUE_LOOKUPS = ("pandas",)  # what DuckDB looks for per bound value


def remember_absent_modules() -> None:
    """Record once, for this process, that the modules DuckDB looks up per value are not installed (if so)."""
    for name in BOUND_VALUE_LOOKUPS:
        if name not in sys.modules and importlib.util.find_spec(name) is None:
            sys.modules[name] = None  # type: ignore[assignment]  # Python's marker: "import name" raises at once
