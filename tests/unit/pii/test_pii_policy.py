"""Tenant PII policy: reading the YAML, per-tenant resolution, and a version that changes only where it should."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from extraction_assets.lib.models import Document
from extraction_assets.lib.pii import (
    ALL_KINDS,
    BUNDLED_POLICY,
    SCRUBBER_VERSION,
    PiiPolicy,
    load_policy,
    scrub_document,
)
from extraction_assets.lib.warehouse import (
    documents_to_scrub,
    ensure_schema,
    insert_documents,
    invariants,
    tenant_ids,
    upsert_scrubbed,
)

TEXT = "Mail lan@example.vn or call 090 123 4567, card 4111 1111 1111 1111."


def _doc(tenant: str, text: str = TEXT) -> Document:
    return Document(
        doc_id=Document.make_id(tenant, "text", text),
        tenant_id=tenant,
        source_uri=f"{tenant}/a.txt",
        kind="text",
        text=text,
    )


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def test_bundled_policy_masks_everything_and_gives_the_vietnamese_tenant_its_region() -> None:
    policy = load_policy()
    assert policy.source == str(BUNDLED_POLICY)
    acme, saigon = policy.for_tenant("acme"), policy.for_tenant("saigon-foods")
    assert acme.kinds == ALL_KINDS and acme.region == "US" and acme.name == "default"
    assert saigon.kinds == ALL_KINDS and saigon.region == "VN" and saigon.name == "saigon-foods"
    assert saigon.scrubber_version.startswith(f"{SCRUBBER_VERSION}+")
    assert acme.scrubber_version != saigon.scrubber_version


def test_tenant_entry_overrides_only_the_fields_it_sets(tmp_path: Path) -> None:
    policy = load_policy(
        _write(
            tmp_path,
            "default:\n  region: us\n  mask: [EMAIL, PHONE]\ntenants:\n  a:\n    region: VN\n  b:\n    mask: all\n",
        )
    )
    assert policy.for_tenant("a").kinds == {"EMAIL", "PHONE"} and policy.for_tenant("a").region == "VN"
    assert policy.for_tenant("b").kinds == ALL_KINDS and policy.for_tenant("b").region == "US"
    assert policy.for_tenant("unknown") == policy.for_tenant("other")


def test_version_depends_on_what_is_masked_not_on_spelling(tmp_path: Path) -> None:
    one = load_policy(_write(tmp_path, "default:\n  mask: [PHONE, EMAIL]\n")).for_tenant("t")
    two = load_policy(_write(tmp_path, "default:\n  region: US\n  mask: [EMAIL, PHONE]\n")).for_tenant("t")
    three = load_policy(_write(tmp_path, "default:\n  mask: [EMAIL]\n")).for_tenant("t")
    assert one.scrubber_version == two.scrubber_version != three.scrubber_version


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("default:\n  mask: [EMAIL, SHOE_SIZE]\n", "unknown PII kinds"),
        ("tenants:\n  a:\n    region: XX\n", "unknown phone region"),
        ("default:\n  masks: all\n", "masks"),
        ("- just a list\n", "must be a mapping"),
        ("default: [unclosed\n", "cannot read"),
    ],
)
def test_a_bad_policy_file_is_a_clear_error(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_policy(_write(tmp_path, body))


def test_missing_policy_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read the PII policy"):
        load_policy(tmp_path / "nope.yaml")


def test_scrub_document_applies_kinds_and_region_and_records_the_policy(tmp_path: Path) -> None:
    policy = load_policy(_write(tmp_path, "default:\n  mask: [EMAIL]\ntenants:\n  vn:\n    region: VN\n"))
    narrow = scrub_document(_doc("us"), policy.for_tenant("us"))
    assert narrow.text == "Mail [EMAIL_1] or call 090 123 4567, card 4111 1111 1111 1111."
    assert narrow.pii_counts == {"EMAIL": 1}
    assert narrow.scrubber_version == policy.for_tenant("us").scrubber_version
    assert narrow.policy == policy.for_tenant("us").audit()
    assert narrow.policy["kinds"] == ["EMAIL"]
    wide = scrub_document(_doc("vn"), policy.for_tenant("vn"))
    assert wide.text == "Mail [EMAIL_1] or call 090 123 4567, card 4111 1111 1111 1111."  # vn masks EMAIL only
    default = scrub_document(_doc("x"))
    assert default.pii_counts == {"EMAIL": 1, "PHONE": 1, "CREDIT_CARD": 1}
    assert default.scrubber_version == PiiPolicy().for_tenant("x").scrubber_version


def test_unmasked_check_follows_each_documents_policy(tmp_path: Path) -> None:
    policy = load_policy(_write(tmp_path, "default:\n  mask: all\ntenants:\n  lax:\n    mask: [EMAIL]\n"))
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    ensure_schema(con)
    upsert_scrubbed(con, [scrub_document(_doc(t), policy.for_tenant(t)) for t in ("lax", "strict")])
    assert invariants.unmasked_pii(con) == []  # the lax tenant chose to keep phones and cards
    con.execute("UPDATE scrubbed_documents SET text = text || ' a@b.com 4111 1111 1111 1111'")
    found = sorted(kind for _, kind in invariants.unmasked_pii(con))
    assert found == ["CREDIT_CARD", "EMAIL", "EMAIL"]  # strict flags both, lax only what it masks
    con.close()


def test_only_documents_of_a_tenant_whose_version_changed_are_pending(tmp_path: Path) -> None:
    old = load_policy()
    docs = [_doc("a"), _doc("b"), _doc("b", "another text")]
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    ensure_schema(con)
    insert_documents(con, docs)
    versions = {t: old.for_tenant(t).scrubber_version for t in tenant_ids(con)}
    assert sorted(documents_to_scrub(con, versions)) == sorted(d.doc_id for d in docs)  # never scrubbed
    upsert_scrubbed(con, [scrub_document(d, old.for_tenant(d.tenant_id)) for d in docs])
    assert documents_to_scrub(con, versions) == []
    new = load_policy(_write(tmp_path, "tenants:\n  b:\n    mask: [EMAIL]\n"))
    changed = {t: new.for_tenant(t).scrubber_version for t in tenant_ids(con)}
    assert changed["a"] == versions["a"] and changed["b"] != versions["b"]
    assert sorted(documents_to_scrub(con, changed)) == sorted(d.doc_id for d in docs if d.tenant_id == "b")
    stored_order = [d.doc_id for d in docs if d.tenant_id == "b"]  # pending documents come in the order stored
    assert documents_to_scrub(con, {"a": versions["a"]}) == stored_order
    con.close()
