"""The HTML report: self-contained, every document string escaped, gold and predictions side by side."""

from __future__ import annotations

from datetime import datetime

from extraction_assets.lib.evaluation import (
    DocumentSample,
    EvalResult,
    FieldCounts,
    FieldOutcome,
    Mark,
    calibration,
    excerpt_windows,
    field_scores,
    highlight_runs,
    render_html,
)

HOSTILE = 'Total <script>alert("x")</script> 9.00 & <b>bold</b>'


def _result(text: str = HOSTILE, marks_at: int | None = None) -> EvalResult:
    at = text.index("9.00") if marks_at is None else marks_at
    sample = DocumentSample(
        record_id="<img src=x onerror=alert(1)>",
        text=text,
        status="processed",
        gold_marks=[Mark(start=at, end=at + 4, label="total")],
        predicted_marks=[Mark(start=0, end=5, label="total", correct=False, detail='"Total" <guess>')],
        outcomes=[
            FieldOutcome(field="total", gold=["9.00"], predicted=["<Total>"], counts=FieldCounts(tp=0, fp=1, fn=1))
        ],
    )
    return EvalResult(
        dataset="d<1>",
        schema_version="receipt@v1",
        extractor="heuristic",
        model=None,
        mode="fields",
        source="gold.jsonl",
        run_at=datetime(2026, 11, 30, 12, 0),
        documents=1,
        fields=field_scores({"total": FieldCounts(tp=0, fp=1, fn=1)}, {"total": "amount"}),
        calibration=calibration([(0.7, False), (0.65, True)]),
        messages=["line 3: <bad>"],
        samples=[sample],
    )


def test_every_document_string_is_escaped() -> None:
    html = render_html(_result())
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<b>bold</b>" not in html
    assert "&lt;bad&gt;" in html and "d&lt;1&gt;" in html
    assert "&#34;Total&#34; &lt;guess&gt;" in html  # mark titles too


def test_the_report_is_self_contained_with_an_embedded_plot() -> None:
    html = render_html(_result())
    assert 'src="data:image/png;base64,' in html
    assert "http://" not in html and "https://" not in html
    assert "<link" not in html and "<script" not in html
    assert html.count('class="pair"') >= 2  # the header row and one excerpt: gold beside predicted


def test_highlight_runs_cover_the_text_exactly_once() -> None:
    text = "abcdefghij"
    marks = [Mark(start=2, end=6, label="a"), Mark(start=4, end=8, label="b", correct=True)]
    runs = highlight_runs(text, 0, 10, marks)
    assert "".join(r.text for r in runs) == text
    assert [(r.text, r.labels, r.verdict) for r in runs] == [
        ("ab", [], ""),
        ("cd", ["a"], ""),
        ("ef", ["a", "b"], "ok"),
        ("gh", ["b"], "ok"),
        ("ij", [], ""),
    ]


def test_long_documents_are_shown_as_merged_excerpts() -> None:
    marks = [Mark(start=10_000, end=10_010, label="x"), Mark(start=10_100, end=10_110, label="x")]
    windows = excerpt_windows(50_000, marks)
    assert len(windows) == 1 and windows[0][0] < 10_000 and windows[0][1] > 10_110
    far = [*marks, Mark(start=40_000, end=40_010, label="x")]
    assert len(excerpt_windows(50_000, far)) == 2
    assert excerpt_windows(300, marks) == [(0, 300)]  # short texts are shown whole
    html = render_html(_result(text="filler " * 2000 + "Total 9.00 end"))
    assert "characters" in html and "of 14014" in html


def test_the_report_shows_what_review_catches_with_its_curve_and_a_reliability_diagram_per_field() -> None:
    from extraction_assets.lib.calibration import Judged, review_figures
    from extraction_assets.lib.evaluation.runner import ConfidenceNote

    judged = [
        Judged("total", 0.7, 0.3, True, False),
        Judged("total", 0.8, 0.95, False, True),
        Judged("date", 0.8, 0.99, False, True),
        Judged("date", 0.8, 0.6, True, True),
    ]
    note = ConfidenceNote(status="calibrated", threshold=0.9, review="max_error_rate 0.02", data=["d/dev.jsonl"])
    html = render_html(_result().model_copy(update={"review": review_figures(judged), "confidence": note}))
    assert "What review catches" in html
    assert 'alt="capture against queue curve"' in html and 'alt="reliability diagram per field"' in html
    assert "items under 0.900 go to review (chosen for max_error_rate 0.02)" in html
    lacking = ConfidenceNote(status="not_calibrated", reason="no registry dataset judges its values")
    html = render_html(_result().model_copy(update={"confidence": lacking}))
    assert "Confidence is not calibrated for receipt@v1: no registry dataset judges its values" in html
