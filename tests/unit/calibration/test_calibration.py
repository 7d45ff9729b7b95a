"""Calibrated confidence: monotone, bounded by the seed bands, reproducible, and honest where data is lacking."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extraction_assets.lib.calibration import (
    FieldCalibration,
    Judged,
    ReviewCost,
    VersionCalibration,
    band_confidence,
    load_calibration,
    probability_of,
    review_figures,
)
from extraction_assets.lib.evaluation import load_registry
from extraction_assets.lib.extraction import HeuristicExtractor, extract_document
from extraction_assets.lib.models import Document
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import discover_schemas, load_schema
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.settings import DEFAULT_PROMPTS, PROJECT_DIR

pytestmark = pytest.mark.long(45)  # a refit of the contract calibration extracts 315 contracts
EVALSETS = (PROJECT_DIR / ".." / "shared" / "evalsets").resolve()
needs_evalsets = pytest.mark.skipif(not EVALSETS.is_dir(), reason="the shared eval sets are not beside the project")

RECEIPT = """ACME HARDWARE SDN BHD
NO. 7, JALAN MERANTI 3,
43000 KAJANG, SELANGOR
TEL: 03-8000 1234
DATE: 05/03/2018
PVC PIPE
8.40
CABLE TIE
3.90
TOTAL
12.30
CASH
20.00
CHANGE
7.70
"""


def _field(coef: float = -1.5, intercept: float = 2.0) -> FieldCalibration:
    return FieldCalibration(
        field="total",
        features=["printed_once"],
        center=[0.25],
        scale=[0.5],
        coef=[coef],
        intercept=intercept,
        items=100,
        wrong=10,
    )


def _receipt_doc() -> Document:
    return Document(
        doc_id=Document.make_id("t", "text", RECEIPT),
        tenant_id="t",
        source_uri="t/r.txt",
        kind="text",
        text=RECEIPT,
    )


@given(st.floats(min_value=-50, max_value=50), st.floats(min_value=-50, max_value=50))
def test_probability_is_monotone_in_the_score_and_never_certain(a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert probability_of(low) <= probability_of(high)
    assert 0.0 < probability_of(low) <= probability_of(high) < 1.0


@functools.cache
def _receipt_schema() -> SchemaVersion:
    return load_schema(DEFAULT_PROMPTS, "receipt@v1")


@given(st.floats(min_value=0.0, max_value=1.0), st.floats(min_value=0.0, max_value=1.0))
def test_the_band_mapping_is_monotone_and_stays_in_the_seed_bands(p: float, q: float) -> None:
    schema = _receipt_schema()  # loaded once: per example, it took most of hypothesis' deadline on a loaded machine
    for band in (schema.heuristic_band, schema.model_band):
        lo, hi = sorted((p, q))
        assert band_confidence(band.low, band.high, lo) <= band_confidence(band.low, band.high, hi)
        assert band.contains(band_confidence(band.low, band.high, lo))
        assert band_confidence(band.low, band.high, hi) < 1.0


def test_a_feature_that_signals_errors_lowers_the_probability() -> None:
    field = _field()
    assert field.probability({"printed_once": 1.0}) < field.probability({"printed_once": 0.0})
    assert field.probability({}) == field.probability({"printed_once": 0.0})  # a missing feature counts 0


def test_fit_field_learns_the_direction_of_a_feature_and_is_deterministic() -> None:
    pytest.importorskip("sklearn")
    from extraction_assets.lib.calibration.fit import fit_field

    rows = [({"odd": 1.0}, i % 3 == 0) for i in range(60)] + [({"odd": 0.0}, i % 20 != 0) for i in range(60)]
    first, second = fit_field("company", rows), fit_field("company", rows)
    assert first == second
    assert first.coef[0] < 0  # "odd" rows are wrong more often: their log-odds of being right fall
    assert first.probability({"odd": 1.0}) < first.probability({"odd": 0.0})
    few_wrong = [({"odd": float(i % 2)}, i != 0) for i in range(60)]  # one wrong value: nothing to weigh
    prior = fit_field("date", few_wrong)
    assert prior.features == [] and prior.probability({"odd": 1.0}) == prior.probability({})


def test_fit_field_fits_in_a_process_that_marked_pandas_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening a warehouse marks pandas absent (a None entry in sys.modules); a fit afterwards must still work and
    leave the mark as it was."""
    pytest.importorskip("sklearn")
    from extraction_assets.lib.calibration.fit import fit_field

    monkeypatch.setitem(sys.modules, "pandas", None)
    rows = [({"odd": float(i % 2)}, i % 4 != 1) for i in range(60)]
    assert fit_field("company", rows).features == ["odd"]
    assert sys.modules["pandas"] is None


def test_threshold_from_the_cost_of_an_error() -> None:
    pytest.importorskip("sklearn")
    from extraction_assets.lib.calibration.fit import Example, ThresholdError, choose_threshold

    def example(correct: bool) -> Example:
        return Example("d", "f", "x", {}, correct, 0.8, False, False)

    probabilities = [0.1, 0.2, 0.3, 0.9, 0.95, 0.97, 0.98, 0.99, 0.995, 0.999]
    examples = [example(p > 0.25) for p in probabilities]
    assert choose_threshold(probabilities, examples, ReviewCost(max_error_rate=0.05)) == 0.3
    assert choose_threshold(probabilities, examples, ReviewCost(queue_share=0.45)) == 0.95  # 4 of 10 queued
    noisy = [example(i not in (0, 5, 9)) for i in range(10)]  # the surest value is wrong
    with pytest.raises(ThresholdError, match="cannot be met"):
        choose_threshold(probabilities, noisy, ReviewCost(max_error_rate=0.01))


def test_each_file_is_also_scored_by_a_fit_on_the_other_files_alone() -> None:
    """The transferred figures: a feature that signals errors in one file and right values in the other cannot
    catch the other file's errors when fitted on the first; with one file there is nothing to transfer."""
    pytest.importorskip("sklearn")
    from extraction_assets.lib.calibration.fit import Example, fit_version

    def examples(file: str, flag_is_wrong: bool) -> list[Example]:
        found = []
        for i in range(120):
            flag = i % 4 == 0
            correct = flag != flag_is_wrong if i % 2 == 0 or flag else True
            found.append(Example(f"{file}{i}", file, "total", {"flag": float(flag)}, correct, 0.8, False, False))
        return found

    both = examples("a", True) + examples("b", False)
    fitted = fit_version(both, ReviewCost(queue_share=0.3), (0.6, 0.8), ["total"])
    transferred = fitted.figures["transferred"]
    assert set(transferred) == {"all", "a", "b"}
    assert transferred["a"].items == transferred["b"].items == 120
    # fitted on b (flag = right), a's flagged values are its wrong ones, left as drafts
    assert transferred["a"].error_capture == 0.0
    alone = fit_version(examples("a", True), ReviewCost(queue_share=0.3), (0.6, 0.8), ["total"])
    assert "transferred" not in alone.figures
    assert alone.figures["in_sample"]["a"].error_capture == 1.0


def test_a_field_just_large_enough_to_ship_is_cross_validated_as_shipped() -> None:
    """A field with MIN_ITEMS labelled items is calibrated; a fold's training share holds fewer, yet every held-out
    item gets a probability from that fold's model (its base rate when too few to weigh features), not today's rule.
    A field too small to ship stays uncalibrated in every fold."""
    pytest.importorskip("sklearn")
    from extraction_assets.lib.calibration.fit import FOLDS, MIN_ITEMS, Example, _calibrated, _out_of_fold

    def example(field: str, i: int) -> Example:
        return Example(f"d{i}", "f", field, {"flag": float(i % 3 == 0)}, i % 3 != 0, 0.8, False, False)

    examples = [example("penalty", i) for i in range(MIN_ITEMS)] + [example("rare", i) for i in range(MIN_ITEMS - 1)]
    fields = _calibrated(examples)
    assert fields == {"penalty"}
    found = _out_of_fold(examples, FOLDS, 0.5, fields)
    assert all(p is not None for p, e in zip(found, examples, strict=True) if e.field == "penalty")
    assert all(p is None for p, e in zip(found, examples, strict=True) if e.field == "rare")


def test_fields_weighed_alike_are_fitted_as_one_and_each_keeps_a_model_of_its_own() -> None:
    """A field with too few wrong values to weigh a feature alone (here 3) gets its base rate; pooled with a kin
    field whose wrong values carry the same feature, it learns that feature's direction. Each field's stored model
    (the pool's indicators folded into its intercept) scores exactly as the pooled model does, so the fields keep
    their own rates."""
    pytest.importorskip("sklearn")
    from extraction_assets.lib.calibration.fit import MIN_EACH, Example, _fit_fields, fit_field

    def example(field: str, i: int, wrong_every: int) -> Example:
        flag = i % wrong_every == 0
        return Example(f"{field}{i}", "f", field, {"flag": float(flag), "n": float(i % 7)}, not flag, 0.8, False, False)

    rare = [example("end", i, 20) for i in range(60)]
    kin = [example("start", i, 4) for i in range(200)]
    assert sum(not e.correct for e in rare) < MIN_EACH
    alone = _fit_fields(rare + kin, 0.5, frozenset({"end", "start"}))
    assert alone["end"].features == []  # its base rate
    pooled = _fit_fields(rare + kin, 0.5, frozenset({"end", "start"}), pools=[("start", "end")])
    flagged, plain = {"flag": 1.0, "n": 2.0}, {"flag": 0.0, "n": 2.0}
    assert pooled["end"].probability(flagged) < 0.5 < pooled["end"].probability(plain)
    assert (pooled["end"].items, pooled["end"].wrong) == (len(rare), sum(not e.correct for e in rare))
    assert not any(f.startswith("field=") for f in pooled["end"].features)
    assert pooled["start"].probability(plain) != pooled["end"].probability(plain)  # each field's own intercept
    rows = [({**e.features, f"field={e.field}": 1.0}, e.correct) for e in sorted(rare + kin, key=lambda e: e.field)]
    one = fit_field("end+start", rows, 0.5)
    for field in ("end", "start"):
        for features in (flagged, plain):
            assert pooled[field].score(features) == pytest.approx(
                one.score({**features, f"field={field}": 1.0}), abs=1e-4
            )


def test_review_cost_takes_exactly_one_figure() -> None:
    with pytest.raises(ValueError):
        ReviewCost()
    with pytest.raises(ValueError):
        ReviewCost(max_error_rate=0.02, queue_share=0.2)


def test_review_figures_count_what_review_does_with_wrong_values() -> None:
    items = [
        Judged("total", 0.7, 0.3, True, False),  # wrong, queued
        Judged("total", 0.7, 0.4, True, True),  # right, queued
        Judged("total", 0.8, 0.9, False, False),  # wrong, a draft
        Judged("total", 0.8, 0.95, False, True),
        Judged("total", 0.8, 0.99, False, True),
    ]
    figures = review_figures(items)
    assert (figures.error_capture, figures.queue_share, figures.precision_unqueued) == (0.5, 0.4, 0.6667)
    shares = [p.queue_share for p in figures.curve]
    captures = [p.error_capture for p in figures.curve]
    assert shares == sorted(shares) and captures == sorted(captures) and captures[-1] == 1.0


def _calibrated(schema: SchemaVersion, threshold: float) -> SchemaVersion:
    fields = {
        name: FieldCalibration(
            field=name, features=["odd"], center=[0.0], scale=[1.0], coef=[-3.0], intercept=2.0, items=50, wrong=5
        )
        for name in ("company", "date", "address", "total")
    }
    calibration = VersionCalibration(
        schema_version=schema.key,
        status="calibrated",
        review=ReviewCost(max_error_rate=0.02),
        threshold=threshold,
        fields=fields,
    )
    return schema.model_copy(update={"calibration": calibration})


def test_the_pipeline_stores_the_probability_maps_it_into_the_band_and_queues_under_the_threshold() -> None:
    today = load_schema(DEFAULT_PROMPTS, "receipt@v1").model_copy(update={"calibration": None})
    doc = _receipt_doc()
    scrubbed = scrub_document(doc)
    plain = extract_document(doc, scrubbed, today, HeuristicExtractor())
    assert plain.items and all(i.probability_correct is None for i in plain.items)
    assert all(i.evidence_features for i in plain.items)  # the pack reports its evidence either way
    lenient = extract_document(doc, scrubbed, _calibrated(today, 0.5), HeuristicExtractor())
    strict = extract_document(doc, scrubbed, _calibrated(today, 0.99), HeuristicExtractor())
    for item in lenient.items:
        p = item.probability_correct
        assert p is not None and 0 < p < 1
        assert item.confidence == band_confidence(today.heuristic_band.low, today.heuristic_band.high, p)
        assert today.heuristic_band.contains(item.confidence)
        assert item.status == "draft"
    assert all(i.status == "needs_review" for i in strict.items)
    assert all(any(r.startswith("below_threshold: probability") for r in i.review_reasons) for i in strict.items)
    assert lenient.extractor_version != plain.extractor_version  # a calibration is part of the extractor version


def test_a_version_without_enough_labelled_data_says_so_and_keeps_todays_behaviour() -> None:
    schema = load_schema(DEFAULT_PROMPTS, "receipt@v1").model_copy(update={"calibration": None})
    lacking = VersionCalibration(schema_version=schema.key, status="not_calibrated", reason="no labelled items")
    doc = _receipt_doc()
    scrubbed = scrub_document(doc)
    plain = extract_document(doc, scrubbed, schema, HeuristicExtractor())
    honest = extract_document(doc, scrubbed, schema.model_copy(update={"calibration": lacking}), HeuristicExtractor())
    assert plain.extractor_version == honest.extractor_version
    assert [i.model_dump() for i in honest.items] == [i.model_dump() for i in plain.items]
    pulse = load_schema(DEFAULT_PROMPTS, "pulse@v1")
    assert pulse.calibration is not None and pulse.calibration.status == "not_calibrated"
    assert pulse.calibration.reason and pulse.calibration.threshold is None


def test_every_committed_calibration_belongs_to_its_version_and_stays_in_bounds() -> None:
    schemas, errors = discover_schemas(DEFAULT_PROMPTS)
    assert not errors
    for key, schema in schemas.items():
        stored = load_calibration(Path(schema.source_path))
        assert stored is not None, f"{key}: every version says whether it is calibrated"
        assert stored.schema_version == key
        if stored.status == "calibrated":
            assert schema.review is not None and stored.review == schema.review
            assert stored.threshold is not None and 0 < stored.threshold < 1
            assert stored.provenance is not None and stored.provenance.data
            for field in stored.fields.values():
                assert field.items >= 30 and all(abs(c) < 10 for c in field.coef)
        else:
            assert stored.reason and not stored.fields
    for key in ("receipt@v1", "contract@v1"):
        calibration = schemas[key].calibration
        assert calibration is not None and calibration.status == "calibrated", key


def test_applying_a_calibration_needs_no_scikit_learn() -> None:
    code = (
        "import sys; sys.modules['sklearn'] = None\n"
        "from extraction_assets.lib.prompt_files import load_schema\n"
        "from extraction_assets.lib.settings import DEFAULT_PROMPTS\n"
        "from extraction_assets.lib.extraction import HeuristicExtractor, extract_document\n"
        "from extraction_assets.lib.pii import scrub_document\n"
        "from extraction_assets.lib.models import Document\n"
        f"text = {RECEIPT!r}\n"
        "doc = Document(doc_id='d', tenant_id='t', source_uri='t/r.txt', kind='text', text=text)\n"
        "out = extract_document(doc, scrub_document(doc), load_schema(DEFAULT_PROMPTS, 'receipt@v1'), "
        "HeuristicExtractor())\n"
        "assert out.items and all(i.probability_correct is not None for i in out.items), out\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PROJECT_DIR)


@needs_evalsets
@pytest.mark.parametrize("key", ["receipt@v1", "contract@v1", "pulse@v1"])
def test_a_refit_gives_the_committed_file(key: str) -> None:
    pytest.importorskip("sklearn")
    from extraction_assets.lib.evaluation.calibrate import calibrate_version, same_fit

    schema = load_schema(DEFAULT_PROMPTS, key)
    assert schema.calibration is not None
    refit = calibrate_version(schema, load_registry())
    assert same_fit(schema.calibration, refit), f"run `extraction-assets calibrate --schema {key}` and review the diff"


def test_a_calibration_file_that_cannot_be_read_is_the_versions_error_not_a_silent_loss(tmp_path: Path) -> None:
    from extraction_assets.lib.prompt_files import load_schema_file
    from extraction_assets.lib.schemas import SchemaError

    (tmp_path / "receipt").mkdir()
    prompt = tmp_path / "receipt" / "v1.md"
    prompt.write_text((DEFAULT_PROMPTS / "receipt" / "v1.md").read_text(encoding="utf-8"), encoding="utf-8")
    beside = tmp_path / "receipt" / "v1.calibration.json"
    beside.write_text('{"schema_version": "receipt@v1", "status": "calibrated"}', encoding="utf-8")
    with pytest.raises(SchemaError, match="calibration file cannot be read"):
        load_schema_file(prompt)  # calibrated without a threshold or a field
    beside.write_text(" " * (1024 * 1024 + 1), encoding="utf-8")
    with pytest.raises(SchemaError, match="larger than 1024 KiB"):
        load_schema_file(prompt)
    beside.write_text(json.dumps({"schema_version": "contract@v1", "status": "not_calibrated"}), encoding="utf-8")
    with pytest.raises(SchemaError, match="is for contract@v1"):
        load_schema_file(prompt)


def test_the_tag_is_worked_out_once_and_is_what_the_fields_and_threshold_give(monkeypatch: pytest.MonkeyPatch) -> None:
    def calibration(threshold: float) -> VersionCalibration:
        return VersionCalibration(
            schema_version="receipt@v1", status="calibrated", threshold=threshold, fields={"total": _field()}
        )

    dumps: list[str] = []
    real = json.dumps

    def counted(*args: Any, **kwargs: Any) -> str:
        dumps.append(real(*args, **kwargs))
        return dumps[-1]

    monkeypatch.setattr(json, "dumps", counted)
    first = calibration(0.5)
    assert first.tag == first.tag == calibration(0.5).tag  # every document extracted asks for it: worked out once
    assert len(dumps) == 2
    assert calibration(0.6).tag != first.tag  # still a fingerprint of the threshold (and the fields)
