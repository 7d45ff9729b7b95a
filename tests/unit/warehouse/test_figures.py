"""The figures an extraction partition reports: each count equal to the same count taken another way, for each
version of a run at once."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from extraction_assets.lib.warehouse import open_warehouse
from extraction_assets.lib.warehouse.figures import PREVIEW_ROWS, extraction_figures
from tests.review_seed import ITEMS, SCHEMA, seed

if TYPE_CHECKING:
    import duckdb


def test_a_partitions_figures_count_its_own_rows(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    seed(path)
    with open_warehouse(path) as con:
        con.execute(  # another version's rows must not be counted
            "INSERT INTO extracted_items SELECT * REPLACE (item_id || '-other' AS item_id,"
            " 'other@v1' AS schema_version) FROM extracted_items"
        )
        con.execute(
            "INSERT INTO document_routing SELECT DISTINCT doc_id, ?, tenant_id, 'manual_review', 0.6, '[]', '[]', '[]',"
            " 'h1', now() FROM extracted_items",
            [SCHEMA],
        )
        con.execute(  # and its evidence: each version's preview shows its own items
            "INSERT INTO evidence SELECT * REPLACE (evidence_id || '-other' AS evidence_id,"
            " item_id || '-other' AS item_id, 'other@v1' AS schema_version) FROM evidence"
        )
        both = extraction_figures(con, [SCHEMA, "absent@v1"])
        other = extraction_figures(con, ["other@v1"])["other@v1"]
        assert extraction_figures(con, [SCHEMA]) == {SCHEMA: both[SCHEMA]}  # a version's figures, alone or not
    figures, empty = both[SCHEMA], both["absent@v1"]
    per_document = [sum(1 for item in ITEMS if item[0] == tenant) for tenant in ("acme", "globex")]
    assert figures["items"] == len(ITEMS) == figures["evidence"]
    assert figures["needs_review_items"] == sum(1 for item in ITEMS if item[4] == "needs_review")
    assert figures["items_by_type"] == {"commitment": 2, "decision": 1, "risk": 1}
    assert figures["items_per_document"] == {
        "documents_with_items": 2,
        "mean": sum(per_document) / 2,
        "max": max(per_document),
    }
    assert figures["routing_outcomes"] == {"manual_review": 2}
    assert [type(v) for v in figures["items_per_document"].values()] == [int, float, int]
    by_confidence = sorted(ITEMS, key=lambda item: -item[3])
    assert [(row["item_type"], row["confidence"]) for row in figures["preview"]] == [
        (i[1], i[3]) for i in by_confidence
    ]
    assert [row["quote"] for row in figures["preview"]] == [i[2] for i in by_confidence]  # no PII in these quotes
    assert other["preview"] == figures["preview"] and other["items"] == figures["items"]
    assert empty | {"preview": []} == {
        "documents_taken": 0,
        "documents_not_taken": 0,
        "items": 0,
        "needs_review_items": 0,
        "items_per_document": {"documents_with_items": 0, "mean": 0.0, "max": 0},
        "evidence": 0,
        "items_by_type": {},
        "routing_outcomes": {},
        "preview": [],
        "calibrated_items": 0,
        "expected_error_capture": None,
        "expected_precision_unqueued": None,
    }


def test_a_partition_expects_from_its_probabilities_what_review_catches(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    seed(path)
    with open_warehouse(path) as con:
        ids = [row[0] for row in con.execute("SELECT item_id FROM extracted_items ORDER BY item_id").fetchall()]
        probability = dict(zip(ids, (0.9, 0.8, 0.5, 0.95), strict=True))
        for item_id, p in probability.items():
            con.execute("UPDATE extracted_items SET probability_correct = ? WHERE item_id = ?", [p, item_id])
        rows = con.execute("SELECT item_id, status FROM extracted_items WHERE schema_version = ?", [SCHEMA]).fetchall()
        figures = extraction_figures(con, [SCHEMA])[SCHEMA]
    machine = {i: status for i, status in rows if status in ("draft", "needs_review")}
    wrong = sum(1 - probability[i] for i in machine)
    queued = sum(1 - probability[i] for i, status in machine.items() if status == "needs_review")
    drafts = [probability[i] for i, status in machine.items() if status == "draft"]
    assert figures["calibrated_items"] == len(machine)
    assert figures["expected_error_capture"] == round(queued / wrong, 4)
    assert figures["expected_precision_unqueued"] == (round(sum(drafts) / len(drafts), 4) if drafts else None)


VERSIONS = [f"v{n}@v1" for n in range(6)]


def _many_items(con: duckdb.DuckDBPyConnection, per_version: int) -> None:
    """`per_version` items of each of six versions, each with one evidence row."""
    con.execute(
        f"""INSERT INTO extracted_items BY NAME
            SELECT md5(v || i) AS item_id, 'doc' || i // 4 AS doc_id, 't' AS tenant_id, v AS schema_version,
                   'total' AS item_type, '1' AS value, 'total: ' || i AS title, (i % 97) / 100 AS confidence,
                   'draft' AS status, 'heuristic' AS extracted_by, 'h1' AS extractor_version,
                   '[]' AS review_reasons, TIMESTAMP '2026-01-01' AS created_at, TIMESTAMP '2026-01-01' AS updated_at
            FROM range({per_version:d}) r(i), (SELECT unnest(CAST(? AS VARCHAR[])) AS v)""",
        [VERSIONS],
    )
    con.execute(
        """INSERT INTO evidence BY NAME
           SELECT md5(item_id) AS evidence_id, item_id, doc_id, tenant_id, schema_version, 0 AS char_start,
                  1 AS char_end, 'x' AS quote, 'exact' AS match_kind, 'strong' AS strength, 'quote' AS evidence_type,
                  1.0 AS match_score, TIMESTAMP '2026-01-01' AS created_at
           FROM extracted_items"""
    )


def _expected_preview(con: duckdb.DuckDBPyConnection, version: str) -> list[tuple[str, float]]:
    """A version's preview as its definition says: the first rows of its items joined with their evidence."""
    rows = con.execute(
        "SELECT i.title, i.confidence FROM extracted_items i JOIN evidence e USING (item_id) WHERE i.schema_version = ?"
        f" ORDER BY i.confidence DESC, i.item_id, e.evidence_id LIMIT {PREVIEW_ROWS}",
        [version],
    ).fetchall()
    return [(title, confidence) for title, confidence in rows]


def test_the_preview_holds_its_rows_not_every_versions_items(tmp_path: Path) -> None:
    """A pass's figures read each version's most confident items within a DuckDB limit that the versions' items do
    not fit in: the preview, one statement for every version, hashed each version's items at once and failed the
    whole extraction step of a 32 k-document pass at 80 MB."""
    with open_warehouse(tmp_path / "w.duckdb") as con:
        _many_items(con, 10_000)
        expected = {version: _expected_preview(con, version) for version in VERSIONS}
        con.execute("SET memory_limit = '32MB'")  # the six versions' items took more than that before
        figures = extraction_figures(con, VERSIONS)
    for version in VERSIONS:
        preview = [(row["title"], row["confidence"]) for row in figures[version]["preview"]]
        assert preview == expected[version] and len(preview) == PREVIEW_ROWS, version


def test_a_preview_passes_over_items_without_evidence(tmp_path: Path) -> None:
    """Only items with evidence show: a version whose most confident items have none shows the next ones."""
    with open_warehouse(tmp_path / "w.duckdb") as con:
        _many_items(con, 200)
        con.execute(  # the 40 most confident items of one version lose their evidence
            """DELETE FROM evidence WHERE item_id IN (SELECT item_id FROM extracted_items WHERE schema_version = ?
               ORDER BY confidence DESC, item_id LIMIT 40)""",
            [VERSIONS[0]],
        )
        expected = _expected_preview(con, VERSIONS[0])
        figures = extraction_figures(con, VERSIONS[:2])
    assert [(row["title"], row["confidence"]) for row in figures[VERSIONS[0]]["preview"]] == expected
    assert len(expected) == PREVIEW_ROWS and len(figures[VERSIONS[1]]["preview"]) == PREVIEW_ROWS
