"""Every decision teaches: a tenant's reviewers' decisions refit its calibration, so the items of the rest of its
documents that look like what people rejected or corrected go to review.

Once a tenant has decided on enough items of a calibrated schema version (`MIN_DECISIONS`, both right and wrong ones
among them), a logistic model is fitted on them (`calibration.fit.fit_field`): an accepted value is right, a
corrected or rejected one wrong, each read as its extractor proposed it (its first audit row's before snapshot). Its
features: the version's own calibrated log-odds (what the dev sets taught), and how many other decisions of the
tenant rejected or corrected, and accepted, the same normalized value of the same field (what the tenant's own
documents taught: one shop's misread name on each of its receipts). Applied to the tenant's undecided items of the
version, its probability is kept as `extracted_items.tenant_probability`; a draft under the version's review threshold
goes to review (`below_threshold`, naming the refit and how many decisions it used). A lesson never takes an item out
of review: the version's own verdict stands where the tenant's would be laxer.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from extraction_assets.lib.calibration.model import FieldCalibration
from extraction_assets.lib.warehouse.connection import now, rows_as_dicts, transaction
from extraction_assets.lib.warehouse.review_queue import GROUP_TEXT_SQL

if TYPE_CHECKING:
    import duckdb

    from extraction_assets.lib.schemas import SchemaVersion

MIN_DECISIONS = 30  # fewer decisions teach nothing the version's calibration does not already say
MIN_EACH = 5  # right and wrong decisions each: a model needs both to weigh anything
FEATURES = ("log_odds", "value_wrong", "value_right")
LESSON = "tenant"  # the fitted model's name


class TenantFit(BaseModel):
    tenant_id: str
    schema_version: str
    model: FieldCalibration
    decisions: int
    wrong: int
    threshold: float
    fitted_at: str


def _log_odds(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def _decided(con: duckdb.DuckDBPyConnection, tenant_id: str, schema_version: str) -> list[dict[str, Any]]:
    """The tenant's decided items of the version as their extractor proposed them: the field, the normalized value,
    its calibrated probability, and whether people found it right: accepted with every key of its value as proposed
    (a correction of any key, such as a clause's `for_convenience`, says the proposal was wrong)."""
    text = GROUP_TEXT_SQL.format(i="f")
    rows = rows_as_dicts(
        con,
        f"""WITH first_change AS (
                SELECT item_id, json_extract(before_snapshot, '$.value') AS value,
                       json_extract_string(before_snapshot, '$.title') AS title,
                       CAST(json_extract(before_snapshot, '$.probability_correct') AS DOUBLE) AS probability
                FROM audit_log WHERE tenant_id = ? AND action IN ('accept', 'reject', 'correct')
                QUALIFY row_number() OVER (PARTITION BY item_id ORDER BY seq) = 1)
            SELECT i.item_id, i.item_type, {text} AS text, f.probability, i.status,
                   CAST(f.value AS VARCHAR) AS proposed, CAST(i.value AS VARCHAR) AS settled
            FROM extracted_items i JOIN first_change f USING (item_id)
            WHERE i.tenant_id = ? AND i.schema_version = ? AND i.status IN ('accepted', 'rejected')
              AND i.added_by IS NULL AND f.probability IS NOT NULL""",
        [tenant_id, tenant_id, schema_version],
    )
    return [
        {
            "item_id": r["item_id"],
            "item_type": r["item_type"],
            "text": r["text"],
            "probability": r["probability"],
            "right": r["status"] == "accepted" and _loaded(r["proposed"]) == _loaded(r["settled"]),
        }
        for r in rows
    ]


def _loaded(value: str | None) -> Any:
    return json.loads(value) if value is not None else None


def _memory(decided: list[dict[str, Any]]) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]]]:
    wrong = Counter((d["item_type"], d["text"]) for d in decided if not d["right"])
    right = Counter((d["item_type"], d["text"]) for d in decided if d["right"])
    return wrong, right


def features(
    probability: float, item_type: str, text: str, memory: tuple[Counter[tuple[str, str]], Counter[tuple[str, str]]]
) -> dict[str, float]:
    wrong, right = memory
    return {
        "log_odds": _log_odds(probability),
        "value_wrong": float(wrong[(item_type, text)]),
        "value_right": float(right[(item_type, text)]),
    }


def _fit(rows: list[tuple[dict[str, float], bool]]) -> FieldCalibration:
    """`calibration.fit.fit_field`, imported here: scikit-learn loads only when a tenant's model is fitted."""
    from extraction_assets.lib.calibration.fit import fit_field

    return fit_field(LESSON, rows)


def refit(con: duckdb.DuckDBPyConnection, tenant_id: str, schema: SchemaVersion) -> TenantFit | str:
    """The tenant's model for a calibrated version, from its decisions; or why there is none."""
    calibration = schema.calibration
    if calibration is None or calibration.status != "calibrated" or calibration.threshold is None:
        return f"{schema.key} is not calibrated: its confidence thresholds decide"
    decided = _decided(con, tenant_id, schema.key)
    wrong = sum(not d["right"] for d in decided)
    if len(decided) < MIN_DECISIONS or min(wrong, len(decided) - wrong) < MIN_EACH:
        return (
            f"{len(decided)} decisions of {tenant_id} on {schema.key} ({wrong} wrong): a refit needs {MIN_DECISIONS}, "
            f"with {MIN_EACH} right and {MIN_EACH} wrong"
        )
    memory = _memory(decided)
    rows = []
    for d in decided:  # each decision's own value left out of what it is compared with
        own = (d["item_type"], d["text"])
        wrong_seen, right_seen = memory
        loo = (wrong_seen - Counter([own] * (not d["right"])), right_seen - Counter([own] * bool(d["right"])))
        rows.append((features(d["probability"], d["item_type"], d["text"], loo), bool(d["right"])))
    return TenantFit(
        tenant_id=tenant_id,
        schema_version=schema.key,
        model=_fit(rows),
        decisions=len(decided),
        wrong=wrong,
        threshold=calibration.threshold,
        fitted_at=now().isoformat(),
    )


def apply_fit(con: duckdb.DuckDBPyConnection, fit: TenantFit) -> int:
    """The refit's probability on the tenant's undecided items of the version (only rows it changes are written: an
    idle pass writes nothing); drafts under the threshold go to review. Returns how many it sent there."""
    memory = _memory(_decided(con, fit.tenant_id, fit.schema_version))
    rows = rows_as_dicts(
        con,
        f"""SELECT i.item_id, i.item_type, i.status, i.review_reasons, i.probability_correct AS probability,
                   i.tenant_probability, {GROUP_TEXT_SQL.format(i="i")} AS text
            FROM extracted_items i
            WHERE i.tenant_id = ? AND i.schema_version = ? AND i.status IN ('draft', 'needs_review')
              AND i.extracted_by <> 'human' AND i.probability_correct IS NOT NULL""",
        [fit.tenant_id, fit.schema_version],
    )
    updates, sent = [], 0
    for row in rows:
        p = round(fit.model.probability(features(row["probability"], row["item_type"], row["text"], memory)), 6)
        reasons, status = json.loads(row["review_reasons"]), row["status"]
        if status == "draft" and p < fit.threshold:
            reasons.append(
                f"below_threshold: probability correct {p:.3f} < {fit.threshold:.3f} once refit on "
                f"{fit.decisions} decisions of {fit.tenant_id}"
            )
            status = "needs_review"
            sent += 1
        if status != row["status"] or row["tenant_probability"] is None or abs(row["tenant_probability"] - p) > 1e-6:
            updates.append((row["item_id"], p, status, reasons))
    if updates:
        stamp = now()
        with transaction(con):
            for item_id, p, status, reasons in updates:
                con.execute(
                    """UPDATE extracted_items SET tenant_probability = ?, status = ?, review_reasons = ?,
                         updated_at = ? WHERE item_id = ?""",
                    [p, status, json.dumps(reasons, ensure_ascii=False), stamp, item_id],
                )
    return sent


def stored_fit(con: duckdb.DuckDBPyConnection, tenant_id: str, schema_version: str) -> TenantFit | None:
    row = rows_as_dicts(
        con,
        "SELECT * FROM tenant_calibrations WHERE tenant_id = ? AND schema_version = ?",
        [tenant_id, schema_version],
    )
    if not row:
        return None
    r = row[0]
    return TenantFit(
        tenant_id=tenant_id,
        schema_version=schema_version,
        model=FieldCalibration.model_validate_json(r["calibration"]),
        decisions=r["decisions"],
        wrong=r["wrong"],
        threshold=r["threshold"],
        fitted_at=r["fitted_at"].isoformat(),
    )


def _store(con: duckdb.DuckDBPyConnection, fit: TenantFit) -> None:
    with transaction(con):
        con.execute(
            "DELETE FROM tenant_calibrations WHERE tenant_id = ? AND schema_version = ?",
            [fit.tenant_id, fit.schema_version],
        )
        con.execute(
            """INSERT INTO tenant_calibrations (tenant_id, schema_version, calibration, decisions, wrong, threshold,
                 fitted_at) VALUES (?, ?, ?, ?, ?, ?, ?)""",
            [
                fit.tenant_id,
                fit.schema_version,
                fit.model.model_dump_json(),
                fit.decisions,
                fit.wrong,
                fit.threshold,
                fit.fitted_at,
            ],
        )


class Lessons(BaseModel):
    """What a version's tenants' decisions taught in one pass: each tenant's fit (or why none), items sent to review."""

    fits: dict[str, str]  # tenant -> "N decisions (M wrong), fitted at T" or why there is none
    sent_to_review: int


def teach(con: duckdb.DuckDBPyConnection, schema: SchemaVersion) -> Lessons:
    """Refit each tenant whose decisions on the version moved since its last fit (or who has none), then apply every
    tenant's fit to its undecided items."""
    tenants = [
        r[0]
        for r in con.execute(
            """SELECT DISTINCT tenant_id FROM extracted_items
               WHERE schema_version = ? AND extracted_by = 'human' AND added_by IS NULL ORDER BY 1""",
            [schema.key],
        ).fetchall()
    ]
    fits: dict[str, str] = {}
    sent = 0
    for tenant in tenants:
        fit = stored_fit(con, tenant, schema.key)
        decided = len(_decided(con, tenant, schema.key))
        if fit is None or fit.decisions != decided:
            made = refit(con, tenant, schema)
            if isinstance(made, str):
                fits[tenant] = made
                fit = None
            else:
                _store(con, made)
                fit = made
        if fit is not None:
            sent += apply_fit(con, fit)
            fits[tenant] = f"{fit.decisions} decisions ({fit.wrong} wrong), fitted at {fit.fitted_at[:19]}"
    return Lessons(fits=fits, sent_to_review=sent)
