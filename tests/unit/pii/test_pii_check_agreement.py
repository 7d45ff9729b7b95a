"""The unmasked-PII check agrees with the scrubber: what the scrubber keeps by rule is never a finding."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from extraction_assets.lib.pii import find_unmasked, load_policy, scrub
from extraction_assets.lib.settings import PROJECT_DIR

EVALSETS = (PROJECT_DIR / ".." / "shared" / "evalsets").resolve()
# A receipt whose company number follows a phone: on the scrubbed text alone, "(002231061" looks like a phone.
RECEIPT = "TEL & FAX NO : 03-6258 7191\n03-6258 7191\nCOMPANY REG NO. : (002231061-T)\nTOTAL : 7.00\n"


def test_a_value_the_scrubber_keeps_by_rule_is_not_a_finding() -> None:
    result = scrub(RECEIPT, region="US")
    assert "(002231061-T)" in result.text
    assert [d.kind for d in find_unmasked(result.text, region="US")] == ["PHONE"]  # the old, disagreeing check
    assert find_unmasked(result.text, region="US", raw=RECEIPT, offset_map=result.offset_map) == []


def test_a_value_that_is_not_in_the_raw_text_is_always_a_finding() -> None:
    result = scrub(RECEIPT, region="US")
    tampered = result.text.replace("(002231061-T)", "(212) 555-0143")
    found = find_unmasked(tampered, region="US", raw=RECEIPT, offset_map=result.offset_map)
    assert [d.kind for d in found] == ["PHONE"]
    leaked = result.text + "mail dana@acme.test"
    assert [d.kind for d in find_unmasked(leaked, raw=RECEIPT, offset_map=result.offset_map)] == ["EMAIL"]


def _evalset_texts() -> Iterator[tuple[str, str]]:
    for path in sorted(EVALSETS.glob("*/dev.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            yield path.parent.name, record["text"]


@pytest.mark.skipif(not EVALSETS.is_dir(), reason=f"the shared eval sets are not beside the project ({EVALSETS})")
@pytest.mark.parametrize("tenant", ["a-default-tenant", "saigon-foods"])  # the bundled policy: US and VN regions
def test_no_false_alarm_on_any_evalset_document(tenant: str) -> None:
    policy = load_policy(None).for_tenant(tenant)
    alarms: list[tuple[str, str, str]] = []
    documents = 0
    for dataset, text in _evalset_texts():
        documents += 1
        result = scrub(text, region=policy.region, kinds=policy.kinds)
        for d in find_unmasked(result.text, policy.region, policy.kinds, raw=text, offset_map=result.offset_map):
            alarms.append((dataset, d.kind, result.text[max(0, d.start - 30) : d.end + 10]))
    assert documents >= 1000
    assert alarms == []
