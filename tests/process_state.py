"""What a worker or shard process a test started says about itself. Its own module imports nothing of the package:
the process imports it to unpickle the job, and a test module (with Dagster and the modules it asks about) would be
imported with it."""

from __future__ import annotations

import os
import sys


def not_loaded(modules: list[str]) -> list[str]:
    """The modules of `modules` this process has not imported."""
    return [module for module in modules if module not in sys.modules]


def variable_and_loaded(variable: str, module: str) -> tuple[str | None, bool]:
    """The environment variable `variable` of this process, and whether it has imported `module`."""
    return os.environ.get(variable), module in sys.modules
