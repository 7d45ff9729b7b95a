"""The needs_review rules: when an item must wait for a person instead of being trusted as a draft.

Each rule that fires leaves a reason `"<rule>: <detail>"` on the item, so a reviewer (and SQL) can see
why. The seven review rules of interview fields apply to every schema; review_policy "never" skips only the policy rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from extraction_assets.lib.models import EvidenceRecord
from extraction_assets.lib.schemas import AttributeSpec, FieldSpec

RULES = (
    "below_threshold",
    "no_evidence",
    "weak_evidence_only",
    "contradiction",
    "type_violation",
    "denied_by_speaker",
    "policy_always",
    "injection_suspected",  # a model's answer echoing its instructions or an instruction in the document
    "unsupported_by_evidence",  # a model's title whose numbers or words its evidence's sentences do not hold
)


def _type_problem(name: str, value: Any, spec: AttributeSpec | FieldSpec) -> str | None:
    """Why `value` does not fit its declared type or enum, or None when it fits (null always fits)."""
    if value is None:
        return None
    if spec.enum_options is not None or spec.type == "enum":
        options = spec.enum_options or []
        return None if value in options else f"{name}={value!r} is not one of {options}"
    checks: dict[str, tuple[type, ...]] = {
        "string": (str,),
        "number": (int, float),
        "integer": (int,),
        "boolean": (bool,),
        "list": (list,),
        "object": (dict,),
    }
    if spec.type == "date":
        try:
            date.fromisoformat(str(value))
        except ValueError:
            return f"{name}={value!r} is not an ISO date"
        return None
    expected = checks.get(spec.type)
    if expected and (not isinstance(value, expected) or (spec.type != "boolean" and isinstance(value, bool))):
        return f"{name}={value!r} is not a {spec.type}"
    return None


def type_violations(spec: FieldSpec, value: dict[str, Any]) -> list[str]:
    """Type and enum problems of an item's attributes (shape `items`) or of its single value (`fields`)."""
    if spec.attributes:
        return [p for name, attr in spec.attributes.items() if (p := _type_problem(name, value.get(name), attr))]
    if "value" in value and spec.type != "object":
        problem = _type_problem(spec.name, value["value"], spec)
        return [problem] if problem else []
    return []


def review_reasons(
    spec: FieldSpec | None,
    confidence: float,
    evidence: Sequence[EvidenceRecord],
    value: dict[str, Any],
    contradiction: str | None = None,
    denial: str | None = None,
    probability: float | None = None,
    threshold: float | None = None,
) -> list[str]:
    """Every rule that sends this item to review; an empty list means it may stay a draft.

    A calibrated item (`probability` of being right, and the version's `threshold` chosen from the cost of an error)
    is below threshold when its probability is; any other item when its confidence is under its field's threshold.
    """
    if spec is None:
        return ["type_violation: the item type is not declared in the schema"]
    reasons: list[str] = []
    if probability is not None and threshold is not None:
        if probability < threshold:
            reasons.append(f"below_threshold: probability correct {probability:.3f} < {threshold:.3f}")
    elif confidence < spec.confidence_threshold:
        reasons.append(f"below_threshold: confidence {confidence:.2f} < {spec.confidence_threshold:.2f}")
    if not evidence:
        reasons.append("no_evidence: no verbatim evidence was located")
    elif all(e.strength == "weak" for e in evidence):
        reasons.append("weak_evidence_only: evidence matched only approximately")
    if contradiction:
        reasons.append(f"contradiction: {contradiction}")
    reasons.extend(f"type_violation: {problem}" for problem in type_violations(spec, value))
    if denial:
        reasons.append(f"denied_by_speaker: {denial}")
    if spec.review_policy == "always":
        reasons.append("policy_always: this field is always reviewed")
    return reasons
