"""A small warehouse for the review tests: two tenants, items in every status, hostile document text."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from starlette.testclient import TestClient

from extraction_assets.lib.models import Document, ExtractionOutcome, ItemRecord, ItemStatus, stable_id
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.review import AuthConfig, Authenticator, hash_token
from extraction_assets.lib.warehouse import (
    insert_documents,
    open_warehouse,
    rebuild_review_queue,
    upsert_scrubbed,
    write_extraction_batch,
)
from tests.records import exact_evidence, processed

SCHEMA = "pulse@v1"
HOSTILE = "<script>document.title='pwned';window.pwned=1</script>"
TEXTS = {
    "acme": (
        "Weekly note 🚀 from ops.\n"
        "We will ship the replacement parts by Friday.\n"
        f"The supplier delay is a risk for the launch {HOSTILE} [bold]markup[/bold].\n"
        "Should we hire two temps through December?\n"
    ),
    "globex": "Globex note.\nWe will ship the replacement parts by Friday.\n",
}
# (tenant or document name, item type, quote, confidence, status, value)
SeedItem = tuple[str, str, str, float, str, Any]
ITEMS: tuple[SeedItem, ...] = (
    ("acme", "commitment", "We will ship the replacement parts by Friday.", 0.75, "draft", {"due_date": "2026-12-04"}),
    ("acme", "risk", "The supplier delay is a risk for the launch", 0.65, "needs_review", {"severity": "high"}),
    ("acme", "decision", "Should we hire two temps through December?", 0.6, "needs_review", {"owner_name": None}),
    ("globex", "commitment", "We will ship the replacement parts by Friday.", 0.62, "needs_review", {}),
)
ITEM_STATUS = TypeAdapter(ItemStatus)  # a seed item's status, checked as the item record checks it
REASONS = ["below_threshold: confidence under 0.70"]


def item_ids(items: tuple[SeedItem, ...] = ITEMS) -> dict[str, str]:
    """`<tenant>:<item_type>` -> item id."""
    return {f"{t}:{kind}": stable_id(t, kind, quote) for t, kind, quote, *_ in items}


_SEEDED: list[Path] = []  # the warehouse this process seeded first with the defaults, copied for each later seed


def _remove_in(pid: int, folder: Path) -> None:
    """Remove `folder` at exit of the process that made it (not of a child forked from it)."""
    if os.getpid() == pid:
        shutil.rmtree(folder, ignore_errors=True)


def seed(path: Path, texts: dict[str, str] = TEXTS, items: tuple[SeedItem, ...] = ITEMS) -> dict[str, str]:
    """Documents (raw and scrubbed, as ingest stores them) with one item per entry of `items`, and their queue. With
    the defaults, a new file is a copy of the one this process seeded first (the same rows; seeding costs about
    0.15 CPU-s, a copy a hundredth of it, and about a hundred tests start from this warehouse)."""
    fresh = texts is TEXTS and items is ITEMS and not path.exists()
    if fresh and _SEEDED:
        shutil.copyfile(_SEEDED[0], path)
        return item_ids(items)
    seed_documents(
        path,
        {tenant: (tenant, f"{tenant}/notes/week.txt", text) for tenant, text in texts.items()},
        [(tenant, *rest) for tenant, *rest in items],
        ids=item_ids(items),
    )
    if fresh and not _SEEDED:
        folder = Path(tempfile.mkdtemp(prefix="review-seed-"))
        atexit.register(_remove_in, os.getpid(), folder)
        shutil.copyfile(path, folder / "seeded.duckdb")
        _SEEDED.append(folder / "seeded.duckdb")
    return item_ids(items)


def seed_documents(
    path: Path,
    documents: dict[str, tuple[str, str, str]],
    items: Sequence[SeedItem],
    ids: dict[str, str] | None = None,
    schema: str = SCHEMA,
) -> dict[str, str]:
    """Several documents per tenant: `documents` is name -> (tenant, source, text); `items` are
    (document name, item type, quote, confidence, status, value). Returns `<document>:<item type>[:<n>]` -> item id
    (`ids` names them instead, in order, when given)."""
    docs = {
        name: Document(
            doc_id=Document.make_id(tenant, "text", text),
            tenant_id=tenant,
            source_uri=source,
            kind="text",
            text=text,
        )
        for name, (tenant, source, text) in documents.items()
    }
    outcomes: dict[str, ExtractionOutcome] = {
        name: processed(doc, schema, extractor_version="test-v1", scrubber_version="test") for name, doc in docs.items()
    }
    scrubbed = {name: scrub_document(doc) for name, doc in docs.items()}
    names = list(ids) if ids else []
    made: dict[str, str] = {}
    for n, (name, kind, quote, confidence, status, value) in enumerate(items):
        doc = docs[name]
        start = doc.text.index(quote)
        seen_start, seen_end = scrubbed[name].offset_map.to_scrubbed(start, start + len(quote))
        title = scrubbed[name].text[seen_start:seen_end][:60]  # the extractor sees scrubbed text only
        item_id = stable_id(doc.tenant_id, kind, quote) if ids else stable_id(doc.doc_id, schema, kind, quote)
        key = names[n] if names else (f"{name}:{kind}" if f"{name}:{kind}" not in made else f"{name}:{kind}:{n}")
        made[key] = item_id
        evidence = exact_evidence(doc, item_id, quote, schema, stable_id(item_id, start))
        outcomes[name].items.append(
            ItemRecord(
                item_id=item_id,
                doc_id=doc.doc_id,
                tenant_id=doc.tenant_id,
                schema_version=schema,
                item_type=kind,
                value=value,
                title=title,
                confidence=confidence,
                status=ITEM_STATUS.validate_python(status),
                extracted_by="heuristic",
                extractor_version="test-v1",
                model=None,
                review_reasons=REASONS if status == "needs_review" else [],
                evidence=[evidence],
            )
        )
    with open_warehouse(path) as con:
        insert_documents(con, list(docs.values()))
        upsert_scrubbed(con, list(scrubbed.values()))
        write_extraction_batch(con, schema, list(outcomes.values()))
        rebuild_review_queue(con, schema)
    return made


# Reviewers who can sign in to the review server: (name, tenant) -> token. Only hashes reach the configuration.
TOKENS = {("linh", "acme"): "acme-linh-token-0001", ("ana", "acme"): "acme-ana-token-0002", ("gus", "globex"): "g-0003"}


def review_auth() -> Authenticator:
    principals = [{"name": n, "tenant": t, "token_sha256": hash_token(tok)} for (n, t), tok in TOKENS.items()]
    return Authenticator(AuthConfig.model_validate({"principals": principals}))


def basic_auth(name: str, tenant: str = "acme") -> tuple[str, str]:
    """(name, token) for HTTP Basic: what a browser sends once the reviewer has signed in."""
    return name, TOKENS[(name, tenant)]


def bearer(name: str, tenant: str = "acme") -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[(name, tenant)]}"}


def signed_in(client: TestClient, name: str, tenant: str = "acme") -> TestClient:
    """A test client of the review app that sends the reviewer's Basic credentials by default."""
    client.auth = basic_auth(name, tenant)
    return client
