"""The house's floors are checked, not only written down: the import contracts in pyproject.toml (`make lint` runs
them) hold for the code as it is, and break on an upward import, even one hidden inside a function."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from extraction_assets.lib.settings import PROJECT_DIR

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on the packages under `root`, with the project's contracts, no cache."""
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )


def _copy_of_the_code(into: Path) -> Path:
    """The project's Python packages and contracts alone (no data), where an import can be planted."""
    for package in ("extraction_assets", "evals"):
        shutil.copytree(PROJECT_DIR / package, into / package, ignore=shutil.ignore_patterns("__pycache__", "sample_*"))
    shutil.copy(PROJECT_DIR / "pyproject.toml", into / "pyproject.toml")
    return into


def test_the_code_keeps_every_import_contract() -> None:
    done = _lint_imports(PROJECT_DIR)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_an_upward_import_inside_a_function_breaks_the_contracts(tmp_path: Path) -> None:
    root = _copy_of_the_code(tmp_path)
    models = root / "extraction_assets" / "lib" / "models.py"
    models.write_text(
        models.read_text(encoding="utf-8")
        + "\n\ndef _hidden() -> None:\n    from extraction_assets.lib.stages import extract  # noqa: F401\n",
        encoding="utf-8",
    )
    done = _lint_imports(root)
    assert done.returncode == 1, done.stdout
    assert "extraction_assets.lib.models is not allowed to import extraction_assets.lib.stages" in " ".join(
        done.stdout.split()
    )


def test_dagster_in_the_core_breaks_the_contracts(tmp_path: Path) -> None:
    root = _copy_of_the_code(tmp_path)
    (root / "extraction_assets" / "lib" / "offsets.py").write_text("import dagster  # noqa: F401\n", encoding="utf-8")
    done = _lint_imports(root)
    assert done.returncode == 1, done.stdout
    assert "extraction_assets.lib.offsets -> dagster" in done.stdout
