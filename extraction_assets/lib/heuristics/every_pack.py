"""Importing this module loads every pack's code and the gates at once (`pack_modules`): what the server the
extraction workers are forked from loads up front (`parallel.load_in_workers`), so no worker imports a pack at its
first use. Nothing else imports it: a run's own process still loads a pack only when it uses it."""

from __future__ import annotations

from importlib import import_module

from extraction_assets.lib.heuristics import pack_modules

for _module in pack_modules():
    import_module(_module)
