"""Tenant PII policy: which kinds each tenant masks and which phone region its national numbers use.

The policy is a YAML file (`EXTRACTION_PII_POLICY`, default: the one bundled in the package). Each
tenant's resolved policy has a fingerprint that becomes part of the scrubber version stored with
every scrubbed document, so changing one tenant's entry re-scrubs (and, through the version
comparison of pending extractions, re-extracts) that tenant's documents and nobody else's.
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import phonenumbers
import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from extraction_assets.lib.pii.scrubber import ALL_KINDS, SCRUBBER_VERSION
from extraction_assets.lib.settings import PACKAGE_DIR

POLICY_ENV = "EXTRACTION_PII_POLICY"
BUNDLED_POLICY = PACKAGE_DIR / "config" / "pii_policy.yaml"


class PolicyEntry(BaseModel):
    """One YAML entry; a tenant's entry only overrides the fields it sets."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    region: str | None = None
    mask: Literal["all"] | list[str] | None = None

    @field_validator("region")
    @classmethod
    def _known_region(cls, value: str | None) -> str | None:
        if value is not None and value.upper() not in phonenumbers.SUPPORTED_REGIONS:
            raise ValueError(f"unknown phone region {value!r} (an ISO 3166 code such as US, VN, RU, CN)")
        return value.upper() if value else value

    @field_validator("mask")
    @classmethod
    def _known_kinds(cls, value: Literal["all"] | list[str] | None) -> Literal["all"] | list[str] | None:
        if isinstance(value, list):
            unknown = sorted(set(value) - ALL_KINDS)
            if unknown:
                raise ValueError(f"unknown PII kinds {unknown}; known: {sorted(ALL_KINDS)}")
        return value


class TenantPolicy(BaseModel):
    """What one tenant's documents are scrubbed with; `scrubber_version` is stored with each of them."""

    model_config = ConfigDict(frozen=True)

    name: str
    region: str
    kinds: frozenset[str]

    @cached_property
    def fingerprint(self) -> str:
        """A short hash of what decides the scrub (region and kinds); computed once (the policy is frozen), as each
        document stores it twice (in its scrubber version and its policy)."""
        content = json.dumps({"region": self.region, "kinds": sorted(self.kinds)}, sort_keys=True)
        return hashlib.sha256(content.encode("utf-8")).hexdigest()[:12]

    @property
    def scrubber_version(self) -> str:
        return f"{SCRUBBER_VERSION}+{self.fingerprint}"

    def audit(self) -> dict[str, Any]:
        """The policy as stored beside each scrubbed document (JSON-ready)."""
        return {"name": self.name, "region": self.region, "kinds": sorted(self.kinds), "fingerprint": self.fingerprint}


class PiiPolicy(BaseModel):
    """The whole file: a default and per-tenant overrides."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    default: PolicyEntry = PolicyEntry(region="US", mask="all")
    tenants: dict[str, PolicyEntry] = {}
    source: str = "built-in"

    def for_tenant(self, tenant_id: str) -> TenantPolicy:
        entry = self.tenants.get(tenant_id)
        region = (entry and entry.region) or self.default.region or "US"
        mask = entry.mask if entry is not None and entry.mask is not None else self.default.mask
        kinds = ALL_KINDS if mask in (None, "all") else frozenset(mask)
        return TenantPolicy(name=tenant_id if entry is not None else "default", region=region, kinds=kinds)


def load_policy(path: Path | None = None) -> PiiPolicy:
    """Read and validate a policy file (None = the bundled one); a bad file is a clear ValueError, never a guess."""
    target = path or BUNDLED_POLICY
    try:
        raw = yaml.safe_load(target.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"cannot read the PII policy {target}: {exc}") from exc
    if not isinstance(raw, dict):
        raise ValueError(f"the PII policy {target} must be a mapping with `default` and `tenants`")
    try:
        return PiiPolicy.model_validate({**raw, "tenants": raw.get("tenants") or {}, "source": str(target)})
    except ValidationError as exc:
        raise ValueError(f"invalid PII policy {target}: {exc}") from exc
