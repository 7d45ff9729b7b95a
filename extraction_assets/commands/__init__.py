"""Sub-commands of `extraction-assets` beyond run/summary; each module adds its own with `register(subparsers)`."""

from __future__ import annotations

import argparse
from collections.abc import Callable

Register = Callable[[argparse._SubParsersAction], None]

REGISTRY: list[Register] = []
