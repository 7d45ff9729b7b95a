from pathlib import Path

import pytest

from extraction_assets.lib.schemas import (
    ConfidenceBand,
    SchemaError,
    discover_schemas,
    load_schema,
    parse_schema_text,
)
from extraction_assets.lib.settings import DEFAULT_PROMPTS

MINIMAL = """---
schema: notes
version: v2
heuristic: pulse
fields:
  - name: risk
    confidence_threshold: 0.8
    review_policy: always
---
Extract risks.
"""


def test_minimal_prompt_file_gets_defaults() -> None:
    schema = parse_schema_text(MINIMAL, "prompts/notes/v2.md")
    assert schema.key == "notes@v2"
    assert schema.instructions == "Extract risks."
    assert schema.max_items == 10
    assert schema.heuristic_band == ConfidenceBand(low=0.6, high=0.8)
    assert schema.model_band == ConfidenceBand(low=0.85, high=0.9)
    assert schema.field("risk").review_policy == "always"
    assert schema.field("missing") is None
    assert schema.reads_kind("email") and schema.reads_kind("pulse")
    assert len(schema.content_sha256) == 64


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no front matter", "no YAML front matter"),
        ("---\n: [\n---\nbody", "not valid YAML"),
        ("---\n- a\n---\nbody", "must be a mapping"),
        ("---\nschema: x\nversion: v1\nheuristic: pulse\nfields: []\n---\n", "at least one field"),
        ("---\nschema: X Y\nversion: v1\nheuristic: pulse\nfields: [{name: a}]\n---\n", "partition key"),
        ("---\nschema: x\nversion: v1\nheuristic: pulse\nfields: [{name: a}, {name: a}]\n---\n", "duplicate"),
        (
            "---\nschema: x\nversion: v1\nheuristic: pulse\norchestration: magic\nfields: [{name: a}]\n---\n",
            "orchestration",
        ),
        (
            "---\nschema: x\nversion: v1\nheuristic: pulse\n"
            "heuristic_band: {low: 0.9, high: 0.5}\nfields: [{name: a}]\n---\n",
            "band",
        ),
    ],
)
def test_bad_prompt_files_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(SchemaError, match=message) as info:
        parse_schema_text(text, "prompts/x/v1.md")
    assert "prompts/x/v1.md" in str(info.value)


def test_band_clamps_and_contains() -> None:
    band = ConfidenceBand(low=0.85, high=0.9)
    assert band.clamp(1.0) == 0.9
    assert band.clamp(0.2) == 0.85
    assert band.clamp(0.87) == 0.87
    assert band.contains(0.85) and band.contains(0.9) and not band.contains(0.91)


def test_path_must_match_declared_key(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "v3.md").write_text(MINIMAL, encoding="utf-8")
    found, errors = discover_schemas(tmp_path)
    assert found == {}
    assert "declares notes@v2" in next(iter(errors.values()))


def test_discover_reads_valid_files_and_reports_broken_ones(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "v2.md").write_text(MINIMAL, encoding="utf-8")
    (tmp_path / "notes" / "v9.md").write_text("oops", encoding="utf-8")
    (tmp_path / "notes" / "README.md").write_text("# docs", encoding="utf-8")
    found, errors = discover_schemas(tmp_path)
    assert list(found) == ["notes@v2"]
    assert list(errors) == [(tmp_path / "notes" / "v9.md").as_posix()]
    assert load_schema(tmp_path, "notes@v2").key == "notes@v2"
    with pytest.raises(SchemaError, match="schema@version"):
        load_schema(tmp_path, "notes")


def test_bundled_pulse_schema_matches_seed_000() -> None:
    schema = load_schema(DEFAULT_PROMPTS, "pulse@v1")
    assert [f.name for f in schema.fields] == ["commitment", "risk", "decision"]
    assert schema.max_items == 10
    assert schema.orchestration == "model_first"
    assert schema.field("risk").attributes["risk_type"].enum_options == ["cash", "customer", "delivery", "operations"]
    assert "verbatim" in schema.instructions
