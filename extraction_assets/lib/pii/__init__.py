"""PII scrubbing: the detectors and their registry, the tenant policy, the re-identification vault, batch scrubbing."""

from extraction_assets.lib.pii.batch import ToScrub, scrub_batch, scrub_document, scrub_document_with_values
from extraction_assets.lib.pii.display import masked
from extraction_assets.lib.pii.numbers import is_card_number, is_snils
from extraction_assets.lib.pii.policy import BUNDLED_POLICY, PiiPolicy, PolicyEntry, TenantPolicy, load_policy
from extraction_assets.lib.pii.scrubber import (
    ALL_KINDS,
    DETECTORS,
    SCRUBBER_VERSION,
    Detection,
    ScrubResult,
    detect,
    find_unmasked,
    scrub,
)
from extraction_assets.lib.pii.vault import (
    VAULT_KEY_ENV,
    SealedMapping,
    VaultError,
    key_from_env,
    key_id,
    reidentify,
    reveal,
    seal,
    unseal,
)

__all__ = [
    "ALL_KINDS",
    "BUNDLED_POLICY",
    "DETECTORS",
    "SCRUBBER_VERSION",
    "VAULT_KEY_ENV",
    "Detection",
    "PiiPolicy",
    "PolicyEntry",
    "ScrubResult",
    "SealedMapping",
    "TenantPolicy",
    "ToScrub",
    "VaultError",
    "detect",
    "find_unmasked",
    "is_card_number",
    "is_snils",
    "key_from_env",
    "key_id",
    "load_policy",
    "masked",
    "reidentify",
    "reveal",
    "scrub",
    "scrub_batch",
    "scrub_document",
    "scrub_document_with_values",
    "seal",
    "unseal",
]
