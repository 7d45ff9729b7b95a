"""PII scrubbing: the detectors and their registry, the tenant policy, the re-identification vault, batch scrubbing,
and the placeholder pattern every reader of scrubbed text shares.

A name loads its module when it is first used (`__getattr__`): the placeholder pattern costs nothing, so the code
location and the packs can use it, while the detectors (phonenumbers), the vault (DuckDB, cryptography) and the
batches load with the step that scrubs."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_NAMES_BY_MODULE: dict[str, tuple[str, ...]] = {
    "batch": ("ToScrub", "scrub_batch", "scrub_document", "scrub_document_with_values"),
    "display": ("markdown_table", "masked", "masked_value"),
    "numbers": ("is_card_number", "is_snils"),
    "placeholders": ("PLACEHOLDER", "placeholder"),
    "policy": ("BUNDLED_POLICY", "PiiPolicy", "PolicyEntry", "TenantPolicy", "load_policy"),
    "scrubber": (
        "ALL_KINDS",
        "DETECTORS",
        "SCRUBBER_VERSION",
        "Detection",
        "ScrubResult",
        "detect",
        "find_unmasked",
        "scrub",
    ),
    "vault": (
        "VAULT_KEY_ENV",
        "SealedMapping",
        "VaultError",
        "key_from_env",
        "key_id",
        "reidentify",
        "reveal",
        "seal",
        "unseal",
    ),
}
_MODULE_OF = {name: module for module, names in _NAMES_BY_MODULE.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # the next lookup is an ordinary one
    return value


# the same names, for the type checker and the reader (tests/unit/pii/test_pii_package.py holds the two lists equal)
if TYPE_CHECKING:
    from extraction_assets.lib.pii.batch import ToScrub, scrub_batch, scrub_document, scrub_document_with_values
    from extraction_assets.lib.pii.display import markdown_table, masked, masked_value
    from extraction_assets.lib.pii.numbers import is_card_number, is_snils
    from extraction_assets.lib.pii.placeholders import PLACEHOLDER, placeholder
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
