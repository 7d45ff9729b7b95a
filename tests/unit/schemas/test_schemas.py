from pathlib import Path

import pytest

from extraction_assets.lib.prompt_files import (
    MAX_PROMPT_BYTES,
    MAX_YAML_NODES,
    discover_schemas,
    load_schema,
    load_schema_file,
    parse_schema_text,
)
from extraction_assets.lib.schemas import ConfidenceBand, SchemaError
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
    risk = schema.field("risk")
    assert risk is not None and risk.review_policy == "always"
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
    risk = schema.field("risk")
    assert risk is not None
    assert risk.attributes["risk_type"].enum_options == ["cash", "customer", "delivery", "operations"]
    assert "verbatim" in schema.instructions


def test_an_alias_is_refused_before_anything_walks_it_naming_its_line() -> None:
    """Nine aliases nested nine deep are 9**9 values to whatever walks the answer: refused at the first alias (the
    bomb itself goes through discovery and the command line in `tests/integration/test_hostile_prompt_files.py`)."""
    one_alias = MINIMAL.replace(
        "---\nExtract", 'examples:\n  - text: "a risk"\n    expected:\n      a: &a [x]\n      b: [*a]\n---\nExtract'
    )
    with pytest.raises(SchemaError) as raised:
        parse_schema_text(one_alias, "prompts/notes/v2.md")
    assert str(raised.value).startswith("prompts/notes/v2.md, line 13: YAML aliases (*name) are not allowed")
    merge_key = MINIMAL.replace("fields:\n", "base: &base {review_policy: always}\nfields:\n").replace(
        "  - name: risk\n", "  - name: risk\n    <<: *base\n"
    )
    with pytest.raises(SchemaError, match="line 7: YAML aliases"):
        parse_schema_text(merge_key, "prompts/notes/v2.md")


def test_a_front_matter_past_the_node_budget_or_a_file_past_the_size_limit_is_refused(tmp_path: Path) -> None:
    many = "\n".join(f"  k{i}: {i}" for i in range(MAX_YAML_NODES))
    with pytest.raises(SchemaError, match=f"more than {MAX_YAML_NODES} values"):
        parse_schema_text(MINIMAL.replace("---\nExtract", f"options:\n{many}\n---\nExtract"), "prompts/notes/v2.md")
    (tmp_path / "notes").mkdir()
    big = tmp_path / "notes" / "v2.md"
    big.write_text(MINIMAL + "x" * MAX_PROMPT_BYTES, encoding="utf-8")
    with pytest.raises(SchemaError, match="larger than 256 KiB"):
        load_schema_file(big)
    big.write_bytes(MINIMAL.encode() + b"\xff")
    with pytest.raises(SchemaError, match="not UTF-8"):
        load_schema_file(big)


@pytest.mark.parametrize(
    ("fields", "line", "says"),
    [
        ("  - name: model_config\n", 6, "fields.0.name: 'model_config' is reserved"),
        ("  - name: risk\n  - name: model_dump\n", 7, "'model_dump' is reserved"),
        ("  - name: openai_schema\n", 6, "'openai_schema' is reserved"),
        ("  - name: class\n", 6, "'class' must be a Python identifier and not a keyword"),
        ("  - name: due date\n", 6, "must be a Python identifier"),
        ("  - name: _private\n", 6, "'_private' is reserved"),
        ("  - name: risk\n    attributes:\n      title: {type: string}\n", 8, "attributes.title.[key]: 'title'"),
        ("  - name: risk\n    attributes:\n      ok: {type: enum, enum_options: []}\n", 8, "at least 1 item"),
    ],
)
def test_a_field_or_attribute_name_the_response_models_cannot_take_is_refused_at_its_line(
    fields: str, line: int, says: str
) -> None:
    text = f"---\nschema: notes\nversion: v2\nheuristic: pulse\nfields:\n{fields}---\nExtract.\n"
    with pytest.raises(SchemaError) as raised:
        parse_schema_text(text, "prompts/notes/v2.md")
    assert str(raised.value).startswith(f"prompts/notes/v2.md, line {line}: "), str(raised.value)
    assert says in str(raised.value)


def test_every_public_name_of_the_response_models_bases_is_refused() -> None:
    """The reserved names follow pydantic's BaseModel and instructor's ResponseSchema as installed: a name either
    base gains later is refused too, or this fails."""
    from instructor import ResponseSchema

    for name in [n for n in dir(ResponseSchema) if not n.startswith("__")]:
        text = f"---\nschema: notes\nversion: v2\nheuristic: pulse\nfields:\n  - name: {name}\n---\nx\n"
        with pytest.raises(SchemaError, match="reserved"):
            parse_schema_text(text, "prompts/notes/v2.md")
