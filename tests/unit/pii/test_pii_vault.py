"""The reversible vault: a sealed mapping round-trips with the key, fails clearly without it, never lands in clear."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from extraction_assets.lib.models import Document
from extraction_assets.lib.pii import (
    VAULT_KEY_ENV,
    PiiPolicy,
    VaultError,
    key_from_env,
    key_id,
    reidentify,
    reveal,
    scrub_batch,
    seal,
    unseal,
)
from extraction_assets.lib.warehouse import open_warehouse, upsert_scrubbed
from tests.one_row import one_row

SECRETS = ("lan.nguyen@example.vn", "4111 1111 1111 1111", "536-22-1234", "hunter2-Xq9")
TEXT = (
    f"Lan <{SECRETS[0]}> paid with {SECRETS[1]}; SSN {SECRETS[2]}; password={SECRETS[3]} (temporary). "
    f"Again {SECRETS[0]}."
)


@pytest.fixture
def key() -> bytes:
    return Fernet.generate_key()


def _doc(text: str = TEXT) -> Document:
    return Document(
        doc_id=Document.make_id("acme", "text", text), tenant_id="acme", source_uri="acme/a.txt", kind="text", text=text
    )


def test_seal_and_unseal_round_trip(key: bytes) -> None:
    mapping = {"[EMAIL_1]": SECRETS[0], "[CREDIT_CARD_1]": SECRETS[1]}
    sealed = seal(key, "d1", "acme", "pii-v2+x", mapping)
    assert sealed.entries == 2 and sealed.key_id == key_id(key)
    assert all(secret not in sealed.token for secret in SECRETS)
    assert unseal(key, sealed.key_id, sealed.token) == mapping


def test_another_key_or_a_tampered_token_is_refused(key: bytes) -> None:
    sealed = seal(key, "d1", "acme", "v", {"[EMAIL_1]": SECRETS[0]})
    other = Fernet.generate_key()
    with pytest.raises(VaultError, match="another key"):
        unseal(other, sealed.key_id, sealed.token)
    with pytest.raises(VaultError, match="does not decrypt"):
        unseal(other, key_id(other), sealed.token)
    tampered = sealed.token[:-6] + ("A" if sealed.token[-6] != "A" else "B") + sealed.token[-5:]
    with pytest.raises(VaultError, match="does not decrypt"):
        unseal(key, sealed.key_id, tampered)


def test_key_from_env_is_off_when_unset_and_strict_when_set(key: bytes) -> None:
    assert key_from_env({}) is None
    assert key_from_env({VAULT_KEY_ENV: "  "}) is None
    assert key_from_env({VAULT_KEY_ENV: key.decode()}) == key
    with pytest.raises(VaultError, match="not a Fernet key"):
        key_from_env({VAULT_KEY_ENV: "correct horse battery staple"})


def test_reidentify_replaces_known_placeholders_only() -> None:
    mapping = {"[EMAIL_1]": "a@b.com", "[PHONE_1]": "+1 202 555 0143"}
    assert reidentify("[EMAIL_1] called [PHONE_1] about [EMAIL_2]", mapping) == (
        "a@b.com called +1 202 555 0143 about [EMAIL_2]"
    )


def test_vault_rows_are_written_with_the_scrub_and_nothing_is_in_clear(tmp_path: Path, key: bytes) -> None:
    warehouse = tmp_path / "w.duckdb"
    doc = _doc()
    batch = scrub_batch([doc], PiiPolicy(), vault_key=key)
    assert len(batch.rows) == 1 and len(batch.sealed) == 1 and batch.failures == []
    with open_warehouse(warehouse) as con:
        upsert_scrubbed(con, batch.rows, batch.sealed)
        mapping = reveal(con, doc.doc_id, key)
        scrubbed = one_row(con.execute("SELECT text FROM scrubbed_documents"))[0]
        con.execute("CHECKPOINT")
    assert set(mapping.values()) == set(SECRETS)
    assert reidentify(scrubbed, mapping) == TEXT
    stored = warehouse.read_bytes()
    for secret in SECRETS:  # the raw document is not stored here, so every byte of the value must be absent
        assert secret.encode("utf-8") not in stored
    # control: the same values stored in clear are found by the same byte search
    with open_warehouse(tmp_path / "control.duckdb") as con:
        con.execute("CREATE TABLE clear (v VARCHAR)")
        con.executemany("INSERT INTO clear VALUES (?)", [[s] for s in SECRETS])
        con.execute("CHECKPOINT")
    control = (tmp_path / "control.duckdb").read_bytes()
    assert all(secret.encode("utf-8") in control for secret in SECRETS)


def test_rescrub_without_the_vault_drops_the_stale_entry(tmp_path: Path, key: bytes) -> None:
    doc = _doc()
    with open_warehouse(tmp_path / "w.duckdb") as con:
        first = scrub_batch([doc], PiiPolicy(), vault_key=key)
        upsert_scrubbed(con, first.rows, first.sealed)
        second = scrub_batch([doc], PiiPolicy(), vault_key=None)
        assert second.sealed == []
        upsert_scrubbed(con, second.rows, second.sealed)
        with pytest.raises(VaultError, match="no vault entry"):
            reveal(con, doc.doc_id, key)


def test_vault_off_by_default_seals_nothing() -> None:
    batch = scrub_batch([_doc()], PiiPolicy())
    assert batch.sealed == [] and batch.rows[0].pii_counts["EMAIL"] == 2
