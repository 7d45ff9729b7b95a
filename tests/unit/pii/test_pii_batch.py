"""Scrubbing a batch: each document with its tenant's policy; one bad document never stops the others."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extraction_assets.lib.models import Document, ScrubbedDocument
from extraction_assets.lib.parallel import in_order, workers_for
from extraction_assets.lib.pii import PiiPolicy, PolicyEntry, TenantPolicy
from extraction_assets.lib.pii import batch as module
from extraction_assets.lib.pii.scan import Hit


def _doc(tenant: str, text: str) -> Document:
    doc_id = Document.make_id(tenant, "text", text)
    return Document(doc_id=doc_id, tenant_id=tenant, source_uri=f"{tenant}/{doc_id}.txt", kind="text", text=text)


def test_each_tenant_gets_its_own_policy() -> None:
    policy = PiiPolicy(tenants={"vn": PolicyEntry(region="VN"), "mail-only": PolicyEntry(mask=["EMAIL"])})
    text = "Gọi 090 123 4567 hoặc a@b.vn"
    batch = module.scrub_batch([_doc("vn", text), _doc("mail-only", text), _doc("us", text)], policy)
    by_tenant = {row.tenant_id: row for row in batch.rows}
    assert by_tenant["vn"].text == "Gọi [PHONE_1] hoặc [EMAIL_1]"
    assert by_tenant["mail-only"].text == "Gọi 090 123 4567 hoặc [EMAIL_1]"
    assert by_tenant["us"].text == "Gọi [PHONE_1] hoặc [EMAIL_1]"  # "gọi" (call) is a phone word in any region
    assert batch.masked == {"PHONE": 2, "EMAIL": 3}
    assert batch.per_tenant == {"vn": 1, "mail-only": 1, "us": 1}
    assert len({row.scrubber_version for row in batch.rows}) == 3


def test_a_batch_resolves_each_tenants_policy_once_and_gives_each_document_its_own_tenants(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policy = PiiPolicy(tenants={"vn": PolicyEntry(region="VN"), "mail-only": PolicyEntry(mask=["EMAIL"])})
    resolved: list[str] = []
    real = PiiPolicy.for_tenant

    def counting(self: PiiPolicy, tenant_id: str) -> TenantPolicy:
        resolved.append(tenant_id)
        return real(self, tenant_id)

    monkeypatch.setattr(PiiPolicy, "for_tenant", counting)
    text = "Gọi 090 123 4567 hoặc a@b.vn"
    tenants = ["vn", "mail-only", "us", "vn", "us", "mail-only"]
    batch = module.scrub_batch([_doc(t, f"{text} {i}") for i, t in enumerate(tenants)], policy)
    assert sorted(resolved) == ["mail-only", "us", "vn"]
    assert [(row.tenant_id, row.scrubber_version, row.policy) for row in batch.rows] == [
        (t, real(policy, t).scrubber_version, real(policy, t).audit()) for t in tenants
    ]
    assert [row.text.startswith("Gọi 090") for row in batch.rows] == [t == "mail-only" for t in tenants]


def test_a_policys_fingerprint_is_computed_once_and_names_its_region_and_kinds() -> None:
    policy = PiiPolicy(tenants={"vn": PolicyEntry(region="VN"), "mail": PolicyEntry(mask=["EMAIL"])})
    us, vn, mail = (policy.for_tenant(t) for t in ("us", "vn", "mail"))
    assert us.fingerprint is us.fingerprint  # kept, not made again
    assert len({us.fingerprint, vn.fingerprint, mail.fingerprint}) == 3
    assert us.fingerprint == TenantPolicy(name="other", region="US", kinds=us.kinds).fingerprint
    assert mail.scrubber_version.endswith("+" + mail.fingerprint)
    assert us == policy.for_tenant("us") and us.model_dump() == policy.for_tenant("us").model_dump()


def test_the_check_gets_each_line_the_scrub_gave_the_phone_matcher_from_the_scrub(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The matcher is a pure function of a line and a region: the check of a document reads what the scrub of the same
    document found in a line instead of running the matcher on it again; the outcome is the one of running it again."""
    import phonenumbers

    from extraction_assets.lib.pii import scrubber

    texts = [
        "Call (415) 555-0132 now, or write to a@b.com\nRef 4501 7788 990\nCall (415) 555-0132 now\n",
        "Phone: 020 7946 0958\nPhone: 020 7946 0958 (a@b.com)\nOrder 12345678 shipped 2026-11-30\n",
        "SSN 536-90-4312, card 4111 1111 1111 1111, tel +1 510 555 0177 x12\n+49 1643\n",
    ]
    docs = [_doc(t, text) for t in ("us", "vn") for text in texts]
    policy = PiiPolicy(tenants={"vn": PolicyEntry(region="VN")})
    read: list[tuple[str, str]] = []
    matcher = phonenumbers.PhoneNumberMatcher

    def recording(line: str, region: str, *args: Any, **kwargs: Any) -> phonenumbers.PhoneNumberMatcher:
        read.append((region, line))
        return matcher(line, region, *args, **kwargs)

    unshared = []  # each document scrubbed and checked with nothing kept between the two
    for doc in docs:
        tenant = policy.for_tenant(doc.tenant_id)
        row = module.scrub_document(doc, tenant)
        unshared.append(
            (row, scrubber.unmasked_after_scrub(row.text, row.offset_map, doc.text, tenant.region, tenant.kinds))
        )
    monkeypatch.setattr(phonenumbers, "PhoneNumberMatcher", recording)
    batch = module.scrub_batch(docs, policy)
    assert batch.rows == [row for row, _ in unshared] and not any(found for _, found in unshared)
    assert read and len(read) == len(set(read))  # within a document no line is read twice
    shared: dict[Any, Any] = {}  # a value left in clear is found with the finds of the scrub as without them
    result = scrubber.scrub(docs[0].text, "US", matched_lines=shared)
    assert (
        result.text == "Call [PHONE_1] now, or write to [EMAIL_1]\nRef 4501 7788 990\nCall [PHONE_1] now\n" and shared
    )
    left = result.text.replace("[PHONE_1]", "(415) 555-0132", 1)
    for memo in (shared, {}):
        found = scrubber.unmasked_after_scrub(left, result.offset_map, docs[0].text, "US", None, memo)
        assert [d.value for d in found] == ["(415) 555-0132"]


def test_a_failing_document_is_dead_lettered_and_the_batch_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    real = module.scrub_document_with_values

    def flaky(doc: Document, policy: TenantPolicy | None, *args: Any) -> tuple[ScrubbedDocument, dict[str, str]]:
        if "boom" in doc.text:
            raise RuntimeError("detector crashed")
        return real(doc, policy, *args)

    monkeypatch.setattr(module, "scrub_document_with_values", flaky)
    batch = module.scrub_batch([_doc("t", "boom a@b.com"), _doc("t", "fine a@b.com")], PiiPolicy())
    assert [row.text for row in batch.rows] == ["fine [EMAIL_1]"]
    [letter] = batch.failures
    assert (letter.stage, letter.reason) == ("scrub", "RuntimeError: detector crashed")
    assert letter.doc_id == _doc("t", "boom a@b.com").doc_id


def test_a_document_that_outlasts_its_budget_is_a_dead_letter_and_the_batch_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A detector caught in one long match (a backtracking pattern in C) is stopped by the budget's alarm."""
    import re

    real = module.scrub_document_with_values
    backtracking = re.compile(r"(?:x+x+)+y")

    def stalls(doc: Document, policy: TenantPolicy | None, *args: Any) -> tuple[ScrubbedDocument, dict[str, str]]:
        if "stall" in doc.text:
            backtracking.search("x" * 40)  # exponential: minutes, were it not stopped
        return real(doc, policy, *args)

    monkeypatch.setattr(module, "scrub_document_with_values", stalls)
    started = time.perf_counter()
    batch = module.scrub_batch([_doc("t", "stall a@b.com"), _doc("t", "fine a@b.com")], PiiPolicy(), budget_s=0.3)
    assert time.perf_counter() - started < 30  # the alarm, not the pattern, ended it
    assert [row.text for row in batch.rows] == ["fine [EMAIL_1]"]
    [letter] = batch.failures
    assert letter.reason == "ScrubTooSlow: scrubbing took longer than its budget of 0.3 s of CPU"
    assert letter.detail["scrubber_version"]


def test_time_a_scrub_spends_waiting_for_the_cpu_is_not_spent_from_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scrub workers run at a lower priority: on a busy machine a document waits for a core far longer than it
    takes to scrub. Waiting (here, sleeping) costs no CPU, so it costs nothing of the budget: the document is kept."""
    real = module.scrub_document_with_values

    def waits(doc: Document, policy: TenantPolicy | None, *args: Any) -> tuple[ScrubbedDocument, dict[str, str]]:
        time.sleep(0.6)  # twice the budget on the clock, no CPU
        return real(doc, policy, *args)

    monkeypatch.setattr(module, "scrub_document_with_values", waits)
    batch = module.scrub_batch([_doc("t", "fine a@b.com")], PiiPolicy(), budget_s=0.3)
    assert [row.text for row in batch.rows] == ["fine [EMAIL_1]"]
    assert batch.failures == []


def test_a_batch_sets_the_alarms_handler_once_and_puts_the_previous_one_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from extraction_assets.lib.pii import deadline

    before = signal.getsignal(signal.SIGPROF)
    handlers: list[object] = []
    armed: list[float] = []
    real_signal, real_timer = signal.signal, signal.setitimer

    def recording_signal(signum: int, handler: Any) -> Any:
        handlers.append(handler)
        return real_signal(signum, handler)

    def recording_timer(which: int, seconds: float, *args: float) -> tuple[float, float]:
        armed.append(seconds)
        return real_timer(which, seconds, *args)

    monkeypatch.setattr(signal, "signal", recording_signal)
    monkeypatch.setattr(signal, "setitimer", recording_timer)
    batch = module.scrub_batch([_doc("t", f"note {i} a@b.com") for i in range(4)], PiiPolicy(), budget_s=5)
    assert len(batch.rows) == 4
    assert len(handlers) == 2 and handlers[-1] == before  # set once, then the previous one back
    assert armed == [5, 0] * 4 + [0]  # each document's timer armed and stopped, stopped once more at the end
    assert signal.getsignal(signal.SIGPROF) == before
    late = deadline.Budget(5, armed=True)
    late.expired(signal.SIGPROF, None)  # an alarm handled once its document is done stops nothing
    late.running = True
    with pytest.raises(deadline.ScrubTooSlow, match="budget of 5 s of CPU"):
        late.expired(signal.SIGPROF, None)


def test_a_document_whose_scrub_fails_its_check_is_never_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    real = module.scrub_document_with_values

    def leaky(doc: Document, policy: TenantPolicy | None, *args: Any) -> tuple[ScrubbedDocument, dict[str, str]]:
        row, values = real(doc, policy, *args)
        if "leak" in doc.text:  # a scrubber bug: the stored text would still show the address
            row = row.model_copy(update={"text": doc.text})
        return row, values

    monkeypatch.setattr(module, "scrub_document_with_values", leaky)
    batch = module.scrub_batch([_doc("t", "leak a@b.com"), _doc("t", "fine a@b.com")], PiiPolicy())
    assert [row.text for row in batch.rows] == ["fine [EMAIL_1]"]
    [letter] = batch.failures
    assert letter.stage == "scrub"
    assert letter.reason == "UnmaskedAfterScrub: 1 value(s) still readable after scrubbing (EMAIL)"


def test_batches_scrubbed_in_worker_processes_come_back_in_order_as_in_process() -> None:
    batches = [
        [_doc("t", f"mail me at user{b}.{i}@example.com or call 212-555-01{i:02d}") for i in range(3)] for b in range(4)
    ]
    expected = [module.scrub_batch(docs, PiiPolicy()) for docs in batches]
    assert list(in_order(module.scrub_batch, ((docs, PiiPolicy(), None) for docs in batches), 2)) == expected


def test_one_batch_of_work_is_scrubbed_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker costs about a second to start: one batch is done in the step's own process (0 workers)."""
    monkeypatch.setenv("EXTRACTION_WORKER_PROCESSES", "2")
    assert workers_for(200, 200) == 0
    assert workers_for(201, 200) == 2


def test_one_batch_more_than_the_workers_is_queued() -> None:
    """A worker that finishes must find the next batch waiting, not wait for the caller to store and load."""
    taken: list[int] = []

    def batches() -> Iterator[list[Document]]:
        for b in range(5):
            taken.append(b)
            yield [_doc("t", f"call 212-555-01{b:02d}")]

    results = in_order(module.scrub_batch, ((docs, PiiPolicy(), None) for docs in batches()), 2)
    first = next(results)
    assert first.rows[0].text == "call [PHONE_1]"
    assert taken == [0, 1, 2]
    assert len(list(results)) == 4


def test_the_check_reads_a_scrubbed_text_only_where_the_scrub_changed_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Away from its placeholders a scrubbed text is the raw text the same detectors (with more kinds) have just
    found clean: the check reads the stretch around each placeholder, and nothing of a text the scrub left as it was.
    """
    from extraction_assets.lib.pii import scrubber

    searched: list[str] = []
    real = scrubber._detect

    def spy(text: str, *args: Any, **kwargs: Any) -> list[Hit]:
        searched.append(text)
        return real(text, *args, **kwargs)

    filler = "The committee met and agreed on the plan.\n" * 100
    docs = [_doc("t", "Meeting moved to Friday, 3 pm."), _doc("t", f"{filler}Write to a@b.com\n{filler}")]
    monkeypatch.setattr(scrubber, "_detect", spy)
    batch = module.scrub_batch(docs, PiiPolicy())
    assert [row.text for row in batch.rows] == [
        "Meeting moved to Friday, 3 pm.",
        f"{filler}Write to [EMAIL_1]\n{filler}",
    ]
    checked = [text for text in searched if "[EMAIL_1]" in text]
    assert len(checked) == 1 and len(checked[0]) < 2 * scrubber.RECHECK_REACH + 200 < len(batch.rows[1].text)


def test_a_value_left_in_clear_next_to_a_placeholder_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """A detector that masks one value and misses its neighbour (here: one that forgets every second e-mail) leaves
    the neighbour within the stretch the check reads: the document is a dead letter, never stored."""
    from extraction_assets.lib.pii import scrubber

    real = scrubber._detect

    def forgetful(text: str, region: str | None, kinds: frozenset[str], *args: Any) -> list[Hit]:
        hits = real(text, region, kinds, *args)
        return hits[::2] if len(kinds) > 3 else hits  # the scrub (every kind) forgets; the check (three) does not

    monkeypatch.setattr(scrubber, "_detect", forgetful)
    filler = "The committee met and agreed on the plan.\n" * 100
    batch = module.scrub_batch([_doc("t", f"{filler}Write to a@b.com or c@d.com\n{filler}")], PiiPolicy())
    assert batch.rows == []
    assert batch.failures[0].reason == "UnmaskedAfterScrub: 1 value(s) still readable after scrubbing (EMAIL)"


def test_scrub_workers_run_at_a_lower_priority_than_the_run_by_default_or_as_far_below_as_asked() -> None:
    """A reviewer's command on the same cores gets the CPU before the run's background scrubbing; where runs are
    the machine's main work (EXTRACTION_WORKER_NICENESS=0) the workers keep the run's priority."""
    from extraction_assets.lib.parallel import WORKER_NICENESS, background_pool

    own = os.nice(0)
    for asked, expected in ((None, WORKER_NICENESS), (0, 0), (3, 3)):
        with background_pool(1) if asked is None else background_pool(1, asked) as pool:
            niceness = pool.submit(os.nice, 0).result()
        assert niceness == min(own + expected, 19), asked


_KILLED_RUN = """
import sys, time
from extraction_assets.lib.parallel import background_pool
pool = background_pool(2)
busy = [pool.submit(time.sleep, 120) for _ in range(3)]  # both workers busy, one task queued
while len(pool._processes) < 2:
    time.sleep(0.05)
print(*pool._processes, flush=True)
time.sleep(120)
"""


def _gone(pid: int) -> bool:
    """Ended: no such process, or a zombie nobody has reaped yet (in a container, nobody may)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the kernel's parent-death signal is Linux's")
def test_scrub_workers_end_when_their_run_is_killed() -> None:
    """A run killed mid-scrub (SIGKILL, the out-of-memory killer) leaves no worker waiting on its queue for good."""
    run = subprocess.Popen([sys.executable, "-c", _KILLED_RUN], stdout=subprocess.PIPE, text=True)
    try:
        assert run.stdout is not None
        workers = [int(pid) for pid in run.stdout.readline().split()]
        assert len(workers) == 2 and not any(_gone(pid) for pid in workers)
    finally:
        run.kill()
        run.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not all(_gone(pid) for pid in workers):
        time.sleep(0.1)
    left = [pid for pid in workers if not _gone(pid)]
    for pid in left:  # the test's own clean-up; the assertion below says the pool did not do it
        os.kill(pid, signal.SIGKILL)
    assert not left, f"scrub workers outlived their killed run: {left}"
