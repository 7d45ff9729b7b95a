"""The interview heuristic pack: user-defined fields filled from the respondent's own words."""

from __future__ import annotations

from pathlib import Path

import pytest

from extraction_assets.lib.extraction import HeuristicExtractor, extract_document
from extraction_assets.lib.heuristics import get_pack
from extraction_assets.lib.heuristics.interview import extract_interview, field_cues, parse_number
from extraction_assets.lib.heuristics.phrases import any_phrase
from extraction_assets.lib.models import CandidateItem, Document, ExtractionInput, Turn
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import load_schema, parse_schema_text
from extraction_assets.lib.schemas import FieldSpec, SchemaVersion
from extraction_assets.lib.settings import DEFAULT_PROMPTS

SCHEMA = """---
schema: study
version: v1
shape: fields
heuristic: interview
document_kinds: [transcript]
fields:
  - name: channel
    type: enum
    enum_options: [home_cooking, delivery_app]
    required: true
    extraction_hint: >-
      晚饭, 平时, 主要, usually, mostly; home_cooking = 自己做, cook at home; delivery_app = 外卖, order in
  - name: spend
    type: number
    required: true
    extraction_hint: "花, 多少钱, spend; unit = 元, 块, dollars"
  - name: pains
    type: list
    required: true
    extraction_hint: "麻烦, 贵, 累, annoying, expensive"
  - name: recommend
    type: boolean
    extraction_hint: "推荐, recommend; yes = 会推荐, would recommend; no = 不会推荐, wouldn't recommend"
  - name: factor
    type: enum
    enum_options: [price, taste]
    review_policy: always
    extraction_hint: "最看重, matters most; price = 价格, price; taste = 口味, taste"
---
Extract the study fields.
"""


@pytest.fixture(scope="module")
def schema() -> SchemaVersion:
    return parse_schema_text(SCHEMA, "study/v1.md")


def _transcript(*turns: tuple[str, str]) -> ExtractionInput:
    """Turns as (speaker, text), laid out `speaker: text` per line like the transcript reader does."""
    text, spans = "", []
    for number, (speaker, said) in enumerate(turns, start=1):
        prefix = f"{speaker}: "
        start = len(text) + len(prefix)
        spans.append(Turn(turn_id=f"t{number}", start=start, end=start + len(said), speaker=speaker))
        text += f"{prefix}{said}\n"
    return ExtractionInput(doc_id="d1", tenant_id="t1", kind="transcript", text=text, turns=spans)


def _by_field(candidates: list[CandidateItem]) -> dict[str, CandidateItem]:
    return {c.item_type: c for c in candidates}


def _check(doc: ExtractionInput, candidates: list[CandidateItem]) -> None:
    """Verbatim spans from non-interviewer turns, honest confidence, one candidate per field."""
    interviewer = [doc.text[t.start : t.end] for t in doc.turns if t.speaker in ("访谈员", "Interviewer")]
    assert len({c.item_type for c in candidates}) == len(candidates)
    for c in candidates:
        assert c.span_hint is not None
        assert doc.text[c.span_hint : c.span_hint + len(c.evidence_span)] == c.evidence_span
        assert not any(c.evidence_span in said for said in interviewer)
        assert 0.60 <= c.confidence <= 0.80
        assert c.key == c.item_type
        assert set(c.value) == {"value"}
        assert c.reasoning_summary


# ---------------------------------------------------------------------------------------------------------- values


def test_values_of_every_type_quote_the_respondent(schema: SchemaVersion) -> None:
    doc = _transcript(
        ("访谈员", "您平时晚饭主要怎么解决？"),
        ("受访者", "基本都是点外卖。"),
        ("访谈员", "一周花多少钱？"),
        ("受访者", "大概三百块吧。"),
        ("访谈员", "有什么麻烦的地方？"),
        ("受访者", "等太久了。外卖也挺贵的。"),
        ("访谈员", "会推荐给朋友吗？"),
        ("受访者", "会推荐，很方便。"),
    )
    found = extract_interview(doc, schema)
    _check(doc, found)
    fields = _by_field(found)
    assert {name: c.value["value"] for name, c in fields.items()} == {
        "channel": "delivery_app",
        "spend": 300,
        "pains": ["等太久了。", "外卖也挺贵的。"],
        "recommend": True,
    }
    assert fields["spend"].evidence_span == "大概三百块吧。"
    assert fields["pains"].more_evidence == ["外卖也挺贵的。"]
    assert {c.evidence_type for c in found} == {"user_quote"}
    assert "turn t3" in (fields["spend"].reasoning_summary or "")  # the question it answers is named


def test_the_question_gives_an_answer_its_field(schema: SchemaVersion) -> None:
    """ "三百左右" says nothing about spending; the interviewer's question does."""
    asked = _by_field(extract_interview(_transcript(("访谈员", "一周花多少钱？"), ("受访者", "三百左右。")), schema))
    assert asked["spend"].value == {"value": 300}
    unasked = extract_interview(_transcript(("访谈员", "您住在哪里？"), ("受访者", "三百左右。")), schema)
    assert "spend" not in _by_field(unasked)


def test_interviewer_words_are_never_a_value(schema: SchemaVersion) -> None:
    doc = _transcript(("访谈员", "很多人平时主要点外卖，一周花三百块，您呢？"), ("受访者", "嗯。"))
    assert extract_interview(doc, schema) == []


def test_negated_topics_and_rare_choices_are_not_values(schema: SchemaVersion) -> None:
    doc = _transcript(
        ("访谈员", "您平时晚饭主要怎么解决？有什么麻烦吗？"),
        ("受访者", "我主要自己做，很少点外卖。没什么麻烦的。"),
    )
    fields = _by_field(extract_interview(doc, schema))
    assert fields["channel"].value == {"value": "home_cooking"}
    assert "pains" not in fields


def test_boolean_negation_reads_as_no(schema: SchemaVersion) -> None:
    for answer in ("不会推荐。", "I wouldn't recommend it."):
        doc = _transcript(("Interviewer", "Would you recommend it? 会推荐吗？"), ("Respondent", answer))
        assert _by_field(extract_interview(doc, schema))["recommend"].value == {"value": False}, answer


def test_confidence_grows_with_the_signals(schema: SchemaVersion) -> None:
    weak = _by_field(extract_interview(_transcript(("受访者", "我平时点外卖。")), schema))["channel"]
    strong = _by_field(
        extract_interview(_transcript(("访谈员", "平时晚饭怎么吃？"), ("受访者", "我平时点外卖。")), schema)
    )["channel"]
    assert weak.confidence == pytest.approx(0.70)  # topic word + an explicit option
    assert strong.confidence == pytest.approx(0.80)  # ... and it answers the question about it (+0.10)


# ------------------------------------------------------------------------------------------ contradiction, denial


def test_contradiction_names_both_turns_and_keeps_the_later_value(schema: SchemaVersion) -> None:
    doc = _transcript(
        ("访谈员", "您平时晚饭主要怎么解决？"),
        ("受访者", "我主要是自己做。"),
        ("访谈员", "工作日呢？"),
        ("受访者", "工作日基本上平时都点外卖。"),
    )
    found = extract_interview(doc, schema)
    _check(doc, found)
    channel = _by_field(found)["channel"]
    assert channel.value == {"value": "delivery_app"}
    assert channel.contradiction is not None
    assert "turn t2" in channel.contradiction and "turn t4" in channel.contradiction
    assert channel.more_evidence == ["我主要是自己做。"]
    assert "Contradiction" in (channel.reasoning_summary or "")


def test_two_choices_in_one_turn_are_not_a_contradiction(schema: SchemaVersion) -> None:
    doc = _transcript(("Interviewer", "What matters most to you?"), ("Respondent", "Price, honestly. Then taste."))
    factor = _by_field(extract_interview(doc, schema))["factor"]
    assert factor.value == {"value": "price"}
    assert factor.contradiction is None
    assert factor.more_evidence == []


def test_amounts_close_to_each_other_agree(schema: SchemaVersion) -> None:
    doc = _transcript(
        ("访谈员", "一周花多少钱？"),
        ("受访者", "三百块左右。"),
        ("访谈员", "确定吗？"),
        ("受访者", "嗯，一周花320块。"),
    )
    spend = _by_field(extract_interview(doc, schema))["spend"]
    assert spend.value == {"value": 320}
    assert spend.contradiction is None
    assert "stated in 2 turns" in (spend.reasoning_summary or "")


def test_denied_summary_marks_the_fields_the_respondent_names(schema: SchemaVersion) -> None:
    doc = _transcript(
        ("访谈员", "您平时晚饭主要怎么解决？"),
        ("受访者", "基本都点外卖。"),
        ("访谈员", "一周花多少钱？"),
        ("受访者", "两百五十块。"),
        ("访谈员", "我总结一下：您主要点外卖，一周花三百元，对吗？"),
        ("受访者", "不对，我一周花两百五，没有三百。"),
    )
    found = extract_interview(doc, schema)
    _check(doc, found)
    fields = _by_field(found)
    assert fields["spend"].denial is not None
    assert "turn t6" in fields["spend"].denial and "turn t5" in fields["spend"].denial
    assert "不对，我一周花两百五，没有三百。" in fields["spend"].more_evidence
    assert "Denied" in (fields["spend"].reasoning_summary or "")
    assert fields["channel"].denial is None  # the denial names the spending only


def test_a_bare_denial_applies_to_everything_the_summary_concluded(schema: SchemaVersion) -> None:
    doc = _transcript(
        ("Interviewer", "How do you usually get dinner?"),
        ("Respondent", "Mostly I order in."),
        ("Interviewer", "So to summarize: you mostly order in. Is that right?"),
        ("Respondent", "That's not right."),
    )
    channel = _by_field(extract_interview(doc, schema))["channel"]
    assert channel.denial is not None and "turn t4" in channel.denial


def test_agreeing_with_a_summary_is_no_denial(schema: SchemaVersion) -> None:
    doc = _transcript(
        ("访谈员", "您平时晚饭主要怎么解决？"),
        ("受访者", "基本都点外卖。"),
        ("访谈员", "我总结一下：您主要点外卖，对吗？"),
        ("受访者", "对，差不多。"),
    )
    assert _by_field(extract_interview(doc, schema))["channel"].denial is None


# ------------------------------------------------------------------------------------------------ roles, evidence


def test_evidence_type_follows_the_speaker_role(schema: SchemaVersion) -> None:
    doc = _transcript(
        ("访谈员", "请在问卷里选择平时晚饭主要怎么解决。"),
        ("问卷工具", "受访者选择：主要自己做"),
        ("访谈员", "一周花多少钱？"),
        ("系统", "受访者上传的小票显示一周花费 410 元。"),
    )
    fields = _by_field(extract_interview(doc, schema))
    assert fields["channel"].evidence_type == "tool_selection"
    assert fields["spend"].evidence_type == "system_observation"
    assert fields["spend"].value == {"value": 410}


def test_without_labels_the_speaker_asking_questions_is_the_interviewer(schema: SchemaVersion) -> None:
    doc = _transcript(
        ("Lan", "Chị thường ăn tối thế nào? How do you usually get dinner?"),
        ("Mai", "Mostly I cook at home."),
        ("Lan", "What do you spend a week?"),
        ("Mai", "About 90 dollars."),
    )
    fields = _by_field(extract_interview(doc, schema))
    assert fields["channel"].evidence_span == "Mostly I cook at home."
    assert fields["spend"].value == {"value": 90}


def test_schema_can_name_its_own_interviewer_labels() -> None:
    text = SCHEMA.replace(
        "document_kinds: [transcript]", "document_kinds: [transcript]\noptions: {speaker_roles: {interviewer: [Mod]}}"
    )
    schema = parse_schema_text(text, "study/v1.md")
    doc = _transcript(("Mod", "How do you usually get dinner? Mostly order in?"), ("Kim", "I cook at home mostly."))
    fields = _by_field(extract_interview(doc, schema))
    assert fields["channel"].value == {"value": "home_cooking"}
    assert fields["channel"].evidence_span == "I cook at home mostly."


def test_a_document_without_turns_is_read_as_the_respondent(schema: SchemaVersion) -> None:
    doc = ExtractionInput(doc_id="d", tenant_id="t", kind="text", text="Mostly I order in. It is expensive though.")
    fields = _by_field(extract_interview(doc, schema))
    assert fields["channel"].value == {"value": "delivery_app"}
    assert fields["pains"].value == {"value": ["It is expensive though."]}


# ------------------------------------------------------------------------------------------------- hint and numbers


def test_hint_groups_become_topic_option_and_unit_words() -> None:
    spec = FieldSpec(
        name="channel",
        type="enum",
        enum_options=["delivery_app", "home_cooking"],
        extraction_hint="晚饭，平时；delivery_app = 外卖、美团\nhome_cooking = 自己做",
    )
    cues = field_cues(spec)
    assert cues.topic.search("平时") and cues.topic.search("晚饭") and not cues.topic.search("外卖")
    assert cues.options["delivery_app"].search("美团") and cues.options["delivery_app"].search("delivery app")
    assert cues.options["home_cooking"].search("自己做")
    assert cues.unit is None
    money = field_cues(FieldSpec(name="spend", type="number", extraction_hint="花; unit = 元, yuan"))
    assert money.options == {} and money.unit is not None and money.unit.match("元")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("大概三百块吧", 300),
        ("一周两百五十元左右", 250),
        ("我一般每周花三百", 300),  # "一般" is a word, "一周" a period
        ("About 120 dollars, groceries included.", 120),
        ("1,200元", 1200),
        ("chi khoảng 1.500.000 đồng", 1_500_000),
        ("tầm 300k một tuần", 300_000),
        ("$45 a week", 45),
        ("两千块", 2000),
        ("三四百吧", None),  # a range: not one number
        ("maybe 4 nights a week", None),  # a count, not an amount
        ("no idea", None),
    ],
)
def test_parse_number(text: str, expected: float | None) -> None:
    unit = any_phrase(["元", "块", "dollars", "đồng"])
    assert parse_number(text, unit) == expected


def test_parse_number_without_units_takes_the_first_amount() -> None:
    assert parse_number("一周三次，每次五十") == 50
    assert parse_number("3 times, about 20 each") == 20


# ------------------------------------------------------------------------------------------------ through the pipeline


def test_pipeline_turns_the_flags_into_review_reasons_and_placeholders(schema: SchemaVersion) -> None:
    text = (
        "访谈员: 您平时晚饭主要怎么解决？\n受访者: 我主要是自己做。\n访谈员: 工作日呢？\n受访者: 工作日平时都点外卖。\n"
        "访谈员: 我总结一下：您主要点外卖，对吗？\n受访者: 不对，我没说主要点外卖。\n"
    )
    turns, pos = [], 0
    for number, line in enumerate(text.splitlines(), start=1):
        speaker, _, said = line.partition(": ")
        start = pos + len(speaker) + 2
        turns.append(Turn(turn_id=f"t{number}", start=start, end=start + len(said), speaker=speaker))
        pos += len(line) + 1
    doc = Document(doc_id="d1", tenant_id="lab", source_uri="lab/s.json", kind="transcript", text=text, turns=turns)
    outcome = extract_document(doc, scrub_document(doc), schema, HeuristicExtractor())
    items = {i.item_type: i for i in outcome.items}
    assert set(items) == {"channel", "spend", "pains"}  # required fields always get a record
    channel = items["channel"]
    assert channel.status == "needs_review"
    rules = {r.split(":")[0] for r in channel.review_reasons}
    assert {"contradiction", "denied_by_speaker"} <= rules
    assert "Contradiction" in (channel.reasoning_summary or "") and "Denied" in (channel.reasoning_summary or "")
    assert {e.turn_id for e in channel.evidence} == {"t2", "t4", "t6"}
    assert all(e.evidence_type == "user_quote" and e.tenant_id == "lab" for e in channel.evidence)
    for name in ("spend", "pains"):
        placeholder = items[name]
        assert placeholder.value == {"value": None} and placeholder.evidence == []
        assert placeholder.status == "needs_review"
        assert any(r.startswith("no_evidence") for r in placeholder.review_reasons)
    without_evidence = {i.item_type for i in outcome.items if not i.evidence}
    assert without_evidence == {i.item_type for i in outcome.items if i.value == {"value": None}} == {"spend", "pains"}


def test_bundled_interview_schema_loads_and_its_pack_is_registered() -> None:
    schema = load_schema(Path(DEFAULT_PROMPTS), "interview@v1")
    assert schema.shape == "fields" and schema.heuristic == "interview"
    assert {f.name for f in schema.fields if f.required} == {"primary_channel", "weekly_spend", "pain_points"}
    assert all(f.extraction_hint for f in schema.fields)
    assert get_pack("interview").extract is extract_interview
    assert get_pack("interview").version.startswith("heuristic-interview-")


def test_deterministic(schema: SchemaVersion) -> None:
    doc = _transcript(("访谈员", "您平时晚饭主要怎么解决？"), ("受访者", "基本都点外卖，挺贵的。"))
    assert extract_interview(doc, schema) == extract_interview(doc, schema)
