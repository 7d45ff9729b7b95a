"""The system Chromium the browser tests drive through Playwright (`apt-get install chromium chromium-driver`;
`.ci/run` installs it); never a browser download."""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# why a browser test skips, or None
MISSING = (
    None
    if CHROMIUM.exists()
    else f"{CHROMIUM} not found: install it with `apt-get install -y chromium chromium-driver` (.ci/run does)"
)
