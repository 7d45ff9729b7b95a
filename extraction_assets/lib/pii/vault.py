"""The optional reversible vault: each document's placeholder -> raw value mapping, sealed with Fernet.

Off unless `EXTRACTION_PII_VAULT_KEY` holds a Fernet key (`Fernet.generate_key()`); the key never
enters Dagster config or the warehouse, only its fingerprint does, so a rotated key is visible and
an entry sealed under another key is refused with a clear error. Values are never stored in clear:
the mapping is encrypted (AES-128-CBC + HMAC-SHA256) before it reaches DuckDB.

Re-identification (`reveal`, `reidentify`) is for an authorised person holding the key.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from datetime import UTC, datetime

import duckdb
from pydantic import BaseModel, ConfigDict

from extraction_assets.lib.pii.placeholders import PLACEHOLDER

VAULT_KEY_ENV = "EXTRACTION_PII_VAULT_KEY"


class VaultError(ValueError):
    """The vault cannot answer: no entry, another key, or a tampered token."""


class SealedMapping(BaseModel):
    """One document's encrypted mapping, ready for the `pii_vault` table."""

    model_config = ConfigDict(frozen=True)

    doc_id: str
    tenant_id: str
    scrubber_version: str
    key_id: str
    token: str
    entries: int

    def row(self) -> dict[str, str | int | datetime]:
        """The `pii_vault` row, by column name."""
        return {**self.model_dump(), "sealed_at": datetime.now(UTC).replace(tzinfo=None)}


def key_from_env(env: Mapping[str, str] | None = None) -> bytes | None:
    """The vault key, or None when the vault is off; a malformed key is an error, not a silent off."""
    value = (os.environ if env is None else env).get(VAULT_KEY_ENV, "").strip()
    if not value:
        return None
    from cryptography.fernet import Fernet  # cryptography loads when a vault key is set, not with the code location

    try:
        Fernet(value.encode("ascii"))
    except (ValueError, UnicodeEncodeError) as exc:
        raise VaultError(f"{VAULT_KEY_ENV} is not a Fernet key (32 url-safe base64-encoded bytes)") from exc
    return value.encode("ascii")


def key_id(key: bytes) -> str:
    """A fingerprint that names the key without revealing it."""
    return hashlib.sha256(b"pii-vault\x1f" + key).hexdigest()[:16]


def seal(
    key: bytes, doc_id: str, tenant_id: str, scrubber_version: str, placeholders: Mapping[str, str]
) -> SealedMapping:
    from cryptography.fernet import Fernet  # cryptography loads when a vault key is set

    payload = json.dumps(dict(placeholders), ensure_ascii=False, sort_keys=True).encode("utf-8")
    return SealedMapping(
        doc_id=doc_id,
        tenant_id=tenant_id,
        scrubber_version=scrubber_version,
        key_id=key_id(key),
        token=Fernet(key).encrypt(payload).decode("ascii"),
        entries=len(placeholders),
    )


def unseal(key: bytes, sealed_key_id: str, token: str) -> dict[str, str]:
    if sealed_key_id != key_id(key):
        raise VaultError("this vault entry was sealed with another key")
    from cryptography.fernet import Fernet, InvalidToken  # when a vault key is set

    try:
        return json.loads(Fernet(key).decrypt(token.encode("ascii")))
    except InvalidToken as exc:
        raise VaultError("the vault entry does not decrypt with this key (tampered or wrong key)") from exc


def reveal(con: duckdb.DuckDBPyConnection, doc_id: str, key: bytes) -> dict[str, str]:
    """Authorised re-identification: the placeholder -> raw value mapping of one document."""
    row = con.execute("SELECT key_id, token FROM pii_vault WHERE doc_id = ?", [doc_id]).fetchone()
    if row is None:
        raise VaultError(f"no vault entry for document {doc_id} (vault off when it was scrubbed?)")
    return unseal(key, row[0], row[1])


def reidentify(text: str, mapping: Mapping[str, str]) -> str:
    """Scrubbed text (or a model's answer about it) with every known placeholder replaced by its value."""
    return PLACEHOLDER.sub(lambda m: mapping.get(m.group(), m.group()), text)
