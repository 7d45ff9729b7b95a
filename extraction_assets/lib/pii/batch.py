"""Scrub documents, one or a batch, each with its tenant's policy, sealing the masked values when the vault is on.

A document whose scrub fails, or whose scrubbed text fails the unmasked-PII check, becomes a dead letter and
stays pending (it is never stored, so never extracted); the rest of the batch goes on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict, Field

from extraction_assets.lib.models import DeadLetter, ScrubbedDocument
from extraction_assets.lib.pii.deadline import SCRUB_BUDGET_S, time_budgets
from extraction_assets.lib.pii.policy import PiiPolicy, TenantPolicy
from extraction_assets.lib.pii.scan import MatchedLines
from extraction_assets.lib.pii.scrubber import scrub, unmasked_after_scrub
from extraction_assets.lib.pii.vault import SealedMapping, seal


class Scrubbable(Protocol):
    """What a scrub reads of a document: a `Document`, or a `ToScrub` (its stored text without the turns)."""

    @property
    def doc_id(self) -> str: ...
    @property
    def tenant_id(self) -> str: ...
    @property
    def source_uri(self) -> str: ...
    @property
    def text(self) -> str: ...


class ToScrub(NamedTuple):
    """A stored document as the scrub needs it, cheap to read and to send to a worker process."""

    doc_id: str
    tenant_id: str
    source_uri: str
    text: str


def scrub_document(doc: Scrubbable, policy: TenantPolicy | None = None) -> ScrubbedDocument:
    """Scrub with the tenant's policy (None = the built-in default: every kind, US phone region)."""
    return scrub_document_with_values(doc, policy)[0]


def scrub_document_with_values(
    doc: Scrubbable, policy: TenantPolicy | None = None, matched_lines: MatchedLines | None = None
) -> tuple[ScrubbedDocument, dict[str, str]]:
    """The scrubbed document plus its placeholder -> raw value mapping, for the optional vault only.

    The stored `scrubber_version` names the policy too, so a policy change re-scrubs the document.
    `matched_lines`: see `scrub`.
    """
    policy = policy or PiiPolicy().for_tenant(doc.tenant_id)
    result = scrub(doc.text, region=policy.region, kinds=policy.kinds, matched_lines=matched_lines)
    scrubbed = ScrubbedDocument(
        doc_id=doc.doc_id,
        tenant_id=doc.tenant_id,
        text=result.text,
        offset_map=result.offset_map,
        pii_counts=result.counts,
        scrubber_version=policy.scrubber_version,
        policy=policy.audit(),
    )
    return scrubbed, result.placeholders


class UnmaskedAfterScrub(Exception):
    """The scrubbed text fails the unmasked-PII check (the check the asset check runs, per document)."""


class ScrubBatch(BaseModel):
    """What one batch produced: rows to store (with their vault entries), failures and per-tenant tallies."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    rows: list[ScrubbedDocument] = Field(default_factory=list)
    sealed: list[SealedMapping] = Field(default_factory=list)
    failures: list[DeadLetter] = Field(default_factory=list)
    masked: Counter[str] = Field(default_factory=Counter)
    per_tenant: Counter[str] = Field(default_factory=Counter)


def scrub_batch(
    docs: Sequence[Scrubbable], policy: PiiPolicy, vault_key: bytes | None = None, budget_s: float = SCRUB_BUDGET_S
) -> ScrubBatch:
    """Each document scrubbed and checked within `budget_s` seconds (`deadline.time_budgets`), or a dead letter."""
    batch = ScrubBatch()
    policies: dict[str, TenantPolicy] = {}  # resolved once per tenant, not once per document
    with time_budgets(budget_s) as budget:  # the alarm's handler set once for the batch
        for doc in docs:
            tenant_policy = policies.get(doc.tenant_id) or policies.setdefault(
                doc.tenant_id, policy.for_tenant(doc.tenant_id)
            )
            try:
                with budget:
                    matched_lines: MatchedLines = {}  # the phone matcher's finds, shared by the scrub and its re-check
                    row, values = scrub_document_with_values(doc, tenant_policy, matched_lines)
                    unmasked = unmasked_after_scrub(
                        row.text, row.offset_map, doc.text, tenant_policy.region, tenant_policy.kinds, matched_lines
                    )
                if unmasked:  # never stored, so never extracted nor sent to a model
                    kinds = ", ".join(sorted({d.kind for d in unmasked}))
                    raise UnmaskedAfterScrub(f"{len(unmasked)} value(s) still readable after scrubbing ({kinds})")
            except Exception as exc:  # one document's failure must not stop the batch
                batch.failures.append(
                    DeadLetter(
                        stage="scrub",
                        tenant_id=doc.tenant_id,
                        source_uri=doc.source_uri,
                        doc_id=doc.doc_id,
                        reason=f"{type(exc).__name__}: {exc}"[:1000],
                        detail={"scrubber_version": tenant_policy.scrubber_version},
                    )
                )
                continue
            batch.rows.append(row)
            batch.masked.update(row.pii_counts)
            batch.per_tenant[doc.tenant_id] += 1
            if vault_key is not None and values:
                batch.sealed.append(seal(vault_key, doc.doc_id, doc.tenant_id, row.scrubber_version, values))
    return batch
