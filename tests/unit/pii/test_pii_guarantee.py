"""The guarantee at the extractor's edge: what any extractor (and so any model) is given holds no detected value.

The end-to-end form, through the assets and the fake model server, is in tests/integration/test_pii_assets.py.
"""

from __future__ import annotations

import pytest

from evals.bench_pii import DEFAULT_DATA, load_records
from extraction_assets.lib.extraction import extraction_input
from extraction_assets.lib.models import Document
from extraction_assets.lib.pii import PiiPolicy, TenantPolicy, load_policy, scrub, scrub_document
from extraction_assets.lib.readers import read_inbox
from extraction_assets.lib.settings import SAMPLE_INBOX


def _leaks(doc: Document, policy: TenantPolicy) -> list[str]:
    seen = extraction_input(doc, scrub_document(doc, policy))
    values = {d.value for d in scrub(doc.text, region=policy.region, kinds=policy.kinds).detections}
    shown = seen.text + "".join(seen.text[t.start : t.end] for t in seen.turns)
    return sorted(v for v in values if v in shown)


def test_sample_inbox_documents_show_no_detected_value() -> None:
    policy = load_policy()
    docs = [d for d in read_inbox(SAMPLE_INBOX) if isinstance(d, Document)]
    assert len(docs) >= 20
    assert {doc.doc_id: _leaks(doc, policy.for_tenant(doc.tenant_id)) for doc in docs} == {d.doc_id: [] for d in docs}
    assert sum(len(scrub_document(d, policy.for_tenant(d.tenant_id)).pii_counts) > 0 for d in docs) >= 10


@pytest.mark.skipif(not DEFAULT_DATA.exists(), reason=f"the PII dev set is not beside the project ({DEFAULT_DATA})")
def test_pii_dev_set_documents_show_no_detected_value() -> None:
    policy = PiiPolicy().for_tenant("pii-dev")
    leaks = {}
    for record in load_records(DEFAULT_DATA):
        doc = Document(
            doc_id=record["id"], tenant_id="pii-dev", source_uri=record["id"], kind="text", text=record["text"]
        )
        if found := _leaks(doc, policy):
            leaks[record["id"]] = found
    assert leaks == {}
