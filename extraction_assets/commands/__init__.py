"""Sub-commands of `extraction-assets` beyond run/summary; each module adds its own with `register(subparsers)`."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from extraction_assets.commands import calibrate, challenger, review, ui
from extraction_assets.commands import eval as eval_command

Register = Callable[[argparse._SubParsersAction], None]

REGISTRY: list[Register] = [
    review.register,
    eval_command.register,
    calibrate.register,
    challenger.register,
    ui.register,
]
