"""Seed 003's routing of a pre-screened document: auto_approve, manual_review or deep_analysis.

A schema opts in with `options.routing` in its front matter. The decision reads the document's
stored items (grounded values only, so an invented value cannot push a contract past review) and
the schema's `options.field_weights`:
- weighted confidence under `review_below` -> manual_review (the extraction is not trusted enough);
- otherwise any `deep_analysis_flags` clause found -> deep_analysis (penalties, arbitration);
- otherwise auto_approve, or manual_review while `auto_approve` is off (the default: a team turns it on).
Unlike the fallback score of heuristic_first orchestration, a clause flag that was not found does
not lower this confidence: a contract without a penalty clause is not a less certain contract.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from extraction_assets.lib.models import ItemRecord, RoutingDecision, RoutingOutcome
from extraction_assets.lib.schemas import SchemaVersion

__all__ = ["RoutingPolicy", "route_document"]


class RoutingPolicy(BaseModel):
    """`options.routing` of a prompt file."""

    model_config = ConfigDict(extra="forbid")

    review_below: float = Field(default=0.75, ge=0.0, le=1.0)
    deep_analysis_flags: list[str] = Field(default_factory=list)
    auto_approve: bool = False

    @classmethod
    def of(cls, schema: SchemaVersion) -> RoutingPolicy | None:
        """The schema's policy, None when it does not route; a malformed one raises naming the schema."""
        raw = schema.options.get("routing")
        if raw is None:
            return None
        try:
            policy = cls.model_validate(raw)
        except ValidationError as exc:
            raise ValueError(f"{schema.key}: options.routing is invalid: {exc}") from exc
        unknown = [flag for flag in policy.deep_analysis_flags if schema.field(flag) is None]
        if unknown:
            raise ValueError(f"{schema.key}: options.routing names flags that are not fields: {unknown}")
        return policy


def route_document(schema: SchemaVersion, items: Sequence[ItemRecord]) -> RoutingDecision | None:
    """The routing outcome of one document from its stored items.

    None for schemas without a routing policy, and for documents with no grounded value at all: the
    pack did not recognise them as this schema's documents (a note is not a contract to route).
    """
    policy = RoutingPolicy.of(schema)
    if policy is None:
        return None
    weights: dict[str, float] = schema.options.get("field_weights", {})
    best: dict[str, ItemRecord] = {}
    for item in items:
        if item.evidence and (item.item_type not in best or best[item.item_type].confidence < item.confidence):
            best[item.item_type] = item
    if not best:
        return None
    counted = [
        spec.name
        for spec in schema.fields
        if weights.get(spec.name, 1.0) > 0 and (spec.type != "boolean" or spec.name in best)
    ]
    total = sum(weights.get(name, 1.0) for name in counted)
    score = sum(weights.get(name, 1.0) * best[name].confidence for name in counted if name in best)
    confidence = round(score / total, 4) if total else 0.0
    missing = [name for name in counted if name not in best]
    flags = [flag for flag in policy.deep_analysis_flags if flag in best and best[flag].value.get("value") is True]
    reasons: list[str] = []
    outcome: RoutingOutcome
    if confidence < policy.review_below:
        outcome = "manual_review"
        reasons.append(f"weighted confidence {confidence:.2f} < {policy.review_below:.2f}")
        if missing:
            reasons.append(f"not found: {', '.join(missing)}")
    elif flags:
        outcome = "deep_analysis"
    elif policy.auto_approve:
        outcome = "auto_approve"
        reasons.append("confident and no clause that needs analysis")
    else:
        outcome = "manual_review"
        reasons.append("would auto-approve, but auto_approve is off in the schema's routing policy")
    if flags:
        reasons.append(f"clauses that need analysis: {', '.join(flags)}")
    return RoutingDecision(
        outcome=outcome, weighted_confidence=confidence, flags=flags, missing_fields=missing, reasons=reasons
    )
