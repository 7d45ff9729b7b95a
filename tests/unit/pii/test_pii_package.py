"""The PII package names each of its public names once, loads a module when one of its names is first used, and
its placeholder pattern is the one the scrubber writes."""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys

import pytest

import extraction_assets.lib.pii as pii
from extraction_assets.lib.pii import PLACEHOLDER, placeholder, scrub


def _type_checking_names() -> dict[str, str]:
    """Name -> module of the package's `if TYPE_CHECKING:` imports (what the type checker and a reader see)."""
    tree = ast.parse(inspect.getsource(pii))
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    return {
        alias.name: node.module.rsplit(".", 1)[-1]
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


def test_the_lazy_table_and_the_type_checking_imports_name_the_same_things() -> None:
    assert _type_checking_names() == pii._MODULE_OF


@pytest.mark.parametrize("name", pii.__all__)
def test_every_exported_name_resolves_to_its_module(name: str) -> None:
    value = getattr(pii, name)
    module = getattr(value, "__module__", None)
    if inspect.isfunction(value) or inspect.isclass(value):
        assert module == f"{pii.__name__}.{pii._MODULE_OF[name]}"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = pii.no_such_name


def test_the_placeholder_pattern_loads_no_detector_nor_the_vault() -> None:
    probe = (
        "import json, sys\nfrom extraction_assets.lib.pii import PLACEHOLDER\n"
        "print(json.dumps(sorted(m for m in ('phonenumbers', 'duckdb', 'cryptography') if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.strip().splitlines()[-1]) == []


def test_every_placeholder_the_scrubber_writes_matches_the_pattern_whole() -> None:
    result = scrub("Mail dana@example.com or call +1 415 555 0100; dana@example.com again.")
    assert result.placeholders, "the scrubber found nothing to mask"
    for shown in result.placeholders:
        match = PLACEHOLDER.fullmatch(shown)
        assert match is not None, shown
        assert placeholder(match.group("kind"), int(shown.rsplit("_", 1)[1].rstrip("]"))) == shown
    assert PLACEHOLDER.fullmatch(placeholder("PERSON_NAME", 3))
    assert PLACEHOLDER.search("[email_1] [EMAIL] [EMAIL_]") is None
