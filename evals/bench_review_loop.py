"""Review loop bench: how many actions clear the bench inbox's queue, and whether two reviewers lose work.

The bench inbox (`evals.bench_inbox`: every dev record of the eval sets once, one tenant) is run end to end offline.
A scripted reviewer (`evals.review_oracle`) decides every queued item from the gold, twice, on two copies of the
warehouse: one item at a time (one action per queued item, the queue's order), and by groups (the queue's groups,
most valuable first; in each group the members the gold gives one decision are decided in one action, so a group
costs as many actions as it needs different decisions). Both must leave every queued item in the same state.
Then two reviewers change one item at once, one on the page and one through the API, each against the version they
read, both ways round: a lost update is a change the other one's silently undid. On the warehouse decided by groups,
the scripted reviewer adds what the gold names and the extractor missed (receipt and contract fields, by their span
in the scrubbed text), each version's eval on the reviewers' decisions gives its missed-item recall, and one command
(`extraction-assets challenger receipt@v2`, receipt@v1 marked a challenger) goes from the prompt file to the
comparison on the dev sets and the reviewed decisions.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from evals.bench_inbox import build_inbox, source_files
from evals.review_oracle import GoldReviewer, Verdict, missed_items
from extraction_assets.lib.review import AuthConfig, Authenticator, Change, corrections, hash_token
from extraction_assets.lib.review.groups import group_item_ids, list_groups
from extraction_assets.lib.settings import DEFAULT_PROMPTS, Settings
from extraction_assets.lib.warehouse import open_warehouse, rows_as_dicts

Figures = dict[str, float | int | str]
TENANT = "tenant-1"
REVIEWER = "bench-reviewer"
TOKENS = {"page-reviewer": "bench-page-token", "api-reviewer": "bench-api-token"}
FIELD_VERSIONS = ("receipt@v1", "contract@v1")  # the versions whose misses the gold can name (values with spans)
TAUGHT_VERSIONS = ("receipt@v1", "contract@v1")  # the calibrated versions a tenant's refit applies to
TEACHING_DECISIONS = 200  # scripted decisions before the refit
CHALLENGER_DEV_LIMIT = 50  # dev records per dataset the challenger command scores (the reviewed decisions: all)


def bench_inbox_warehouse(tmp: Path) -> tuple[Settings, float]:
    """The bench inbox (one tenant) run end to end offline; its settings and how long the run took."""
    import dagster as dg

    from extraction_assets.runner import run_pipeline

    files = source_files()
    inbox = tmp / "inbox"
    build_inbox(inbox, len(files), files)
    settings = Settings(warehouse=tmp / "bench.duckdb", inbox=inbox, prompts_dir=DEFAULT_PROMPTS)
    started = time.perf_counter()
    steps = run_pipeline(settings, instance=dg.DagsterInstance.ephemeral())
    failed = [s.name for s in steps if not s.success]
    if failed:
        raise RuntimeError(f"the bench inbox's run failed: {failed}")
    return settings, time.perf_counter() - started


def undecided(con: Any, tenant: str) -> dict[str, dict[str, Any]]:
    """Every draft and queued item of the tenant with what the scripted reviewer reads: source, type, value, quote."""
    import json

    rows = rows_as_dicts(
        con,
        """SELECT i.item_id, i.schema_version, i.item_type, i.value, i.status, r.source_uri,
                  (SELECT e.quote FROM evidence e WHERE e.item_id = i.item_id ORDER BY e.char_start LIMIT 1) AS quote
           FROM extracted_items i JOIN raw_documents r USING (doc_id)
           WHERE i.tenant_id = ? AND i.status IN ('draft', 'needs_review')""",
        [tenant],
    )
    return {r["item_id"]: {**r, "value": json.loads(r["value"]), "quote": r["quote"] or ""} for r in rows}


def verdicts(reviewer: GoldReviewer, items: dict[str, dict[str, Any]]) -> dict[str, Verdict]:
    return {
        item_id: reviewer.verdict(i["source_uri"], i["item_type"], i["value"], i["quote"])
        for item_id, i in items.items()
    }


def _decide(con: Any, ids: list[str], verdict: Verdict, groups: dict[str, str] | None = None) -> int:
    """One action: `verdict` on `ids`; the items it changed."""
    change = Change(status="accepted") if verdict.action == "accept" else Change(status="rejected")
    if verdict.action == "correct":
        change = Change(value=verdict.value, status="accepted")
    decision = corrections.apply_changes(con, TENANT, ids, change, REVIEWER, verdict.action, groups=groups)
    return len(decision.results)


def queued(con: Any) -> list[str]:
    return [r[0] for r in con.execute("SELECT item_id FROM review_queue WHERE tenant_id = ?", [TENANT]).fetchall()]


def one_by_one(path: Path, judged: dict[str, Verdict]) -> tuple[int, float]:
    """Every queued item decided alone, in the queue's order: (actions, seconds)."""
    with open_warehouse(path) as con:
        order = [r.item_id for r in _queue_rows(con)]
        started = time.perf_counter()
        for item_id in order:
            _decide(con, [item_id], judged[item_id])
        seconds = time.perf_counter() - started
        assert not queued(con), "one by one, every queued item was decided"
    return len(order), seconds


def _queue_rows(con: Any) -> list[Any]:
    from extraction_assets.lib.review import list_queue

    return list_queue(con, TENANT, limit=1_000_000)


def by_groups(path: Path, judged: dict[str, Verdict]) -> tuple[int, int, int, float]:
    """The queue's groups, most valuable first; in each, one action per distinct decision its members need:
    (actions, groups, items decided, seconds)."""
    actions = decided = 0
    with open_warehouse(path) as con:
        groups = list_groups(con, TENANT, limit=1_000_000)
        started = time.perf_counter()
        for group in groups:
            group_id, members, _ = group_item_ids(con, TENANT, group.group_id)
            buckets: dict[str, list[str]] = {}
            for item_id in members:
                buckets.setdefault(judged[item_id].key, []).append(item_id)
            for ids in buckets.values():
                decided += _decide(con, ids, judged[ids[0]], dict.fromkeys(ids, group_id))
                actions += 1
        seconds = time.perf_counter() - started
        assert not queued(con), "by groups, every queued item was decided"
    return actions, len(groups), decided, seconds


def _form_value(value: Any) -> str:
    """A value as a typed input of the correction form holds it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def by_queue_page(path: Path, judged: dict[str, Verdict]) -> tuple[int, int]:
    """The review page as a reviewer clears it: on the queue page (the groups it shows, most valuable first), tick
    every group whose items all get one decision and accept the ticked ones in one submit, reject the others' ticked
    ones in another; a group whose items need a correction, or different decisions, is opened and decided there, one
    submit per decision it needs. Then the queue page again, until it is empty: (submits, queue pages read)."""
    import re

    submits = pages = 0
    with _review_client(path) as client:
        auth = ("page-reviewer", TOKENS["page-reviewer"])
        while True:
            html = client.get("/", auth=auth).text
            pages += 1
            token = re.search(r'name="token" value="([^"]+)"', html)
            shown = re.findall(r'name="group" value="([^":]+):([^"]+)"', html)
            if not shown:
                break
            assert token
            ticked: dict[str, list[str]] = {"accept": [], "reject": []}
            opened = []
            with open_warehouse(path) as con:  # what the reviewer sees of each group's items (the page's rows)
                members_of = {g: group_item_ids(con, TENANT, g)[1] for g, _ in shown}
            for group_id, version in shown:
                members = members_of[group_id]
                decisions = {judged[i].key for i in members}
                action = judged[members[0]].action
                if len(decisions) == 1 and action in ticked:
                    ticked[action].append(f"{group_id}:{version}")
                else:
                    opened.append(group_id)
            for decided, groups in ticked.items():
                if groups:
                    form = {"token": token[1], "action": decided, "group": groups}
                    assert client.post("/decide", data=form, auth=auth, follow_redirects=False).status_code == 303
                    submits += 1
            for group_id in opened:
                submits += _decide_on_group_page(client, auth, group_id, judged)
    return submits, pages


def _decide_on_group_page(client: Any, auth: tuple[str, str], group_id: str, judged: dict[str, Verdict]) -> int:
    """A group's page: one submit per decision its items need, each with the items that need it ticked."""
    import re

    html = client.get(f"/groups/{group_id}", auth=auth).text
    token = re.search(r'name="token" value="([^"]+)"', html)
    members = re.findall(r'name="item" value="([^":]+):([^"]+)"', html)
    assert token and members
    buckets: dict[str, list[str]] = {}
    for item_id, version in members:
        buckets.setdefault(judged[item_id].key, []).append(f"{item_id}:{version}")
    for ticked in buckets.values():
        verdict = judged[ticked[0].split(":")[0]]
        form: dict[str, Any] = {"token": token[1], "action": verdict.action, "item": ticked, "back_group": group_id}
        if verdict.action == "correct":
            form.update({f"field.{k}": _form_value(v) for k, v in verdict.value.items()}, status="accepted")
        answer = client.post("/decide", data=form, auth=auth, follow_redirects=False)
        assert answer.status_code == 303, answer.text[:500]
    return len(buckets)


def add_missed(path: Path, reviewer: GoldReviewer, versions: tuple[str, ...]) -> tuple[int, int]:
    """The scripted reviewer adds what the gold has and the extractor missed, by its span in the scrubbed text (as the
    document page's selection sends it): (items added, refused)."""
    from extraction_assets.lib.prompt_files import load_schema
    from extraction_assets.lib.review.corrections import ReviewError
    from extraction_assets.lib.review.missed import add_missed_item
    from extraction_assets.lib.warehouse import load_scrubbed

    added = refused = 0
    with open_warehouse(path) as con:
        for version in versions:
            schema = load_schema(DEFAULT_PROMPTS, version)
            docs = con.execute(
                """SELECT s.doc_id, r.source_uri, list(i.item_type) FILTER (WHERE e.item_id IS NOT NULL)
                   FROM extraction_status s JOIN raw_documents r USING (doc_id)
                   LEFT JOIN extracted_items i ON i.doc_id = s.doc_id AND i.schema_version = s.schema_version
                   LEFT JOIN (SELECT DISTINCT item_id FROM evidence) e ON e.item_id = i.item_id
                   WHERE s.schema_version = ? AND s.tenant_id = ? GROUP BY ALL""",
                [version, TENANT],
            ).fetchall()
            for doc_id, source_uri, found in docs:
                for missed in missed_items(reviewer, source_uri, set(found or [])):
                    scrubbed = load_scrubbed(con, [doc_id])[doc_id]
                    span = scrubbed.offset_map.to_scrubbed(*missed.span)
                    try:
                        add_missed_item(
                            con, TENANT, doc_id, schema, missed.item_type, missed.value, REVIEWER, span=span
                        )
                        added += 1
                    except ReviewError:  # a span the field's value cannot come from (the gold's own slips)
                        refused += 1
    return added, refused


def challenger_command(tmp: Path, warehouse: Path, inbox: Path, limit: int) -> tuple[float, int, dict[str, Any]]:
    """`extraction-assets challenger receipt@v2` on a copy of the prompt files where receipt@v2 is receipt@v1 marked a
    challenger: one command from the prompt file to the comparison. (seconds, exit code, its JSON)."""
    import json
    import os
    import subprocess
    import sys

    prompts = tmp / "prompts"
    shutil.copytree(DEFAULT_PROMPTS, prompts)
    v1 = (prompts / "receipt" / "v1.md").read_text(encoding="utf-8")
    (prompts / "receipt" / "v2.md").write_text(
        v1.replace("version: v1", "version: v2\nchallenger: true", 1), encoding="utf-8"
    )
    command = [str(Path(sys.executable).with_name("extraction-assets")), "challenger", "receipt@v2", "--json"]
    command += ["--limit", str(limit), "--warehouse", str(warehouse), "--prompts", str(prompts)]
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"} | {"EXTRACTION_INBOX": str(inbox)}
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    lines = done.stdout.strip().splitlines()
    return seconds, done.returncode, json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}


def missed_item_recall(path: Path, versions: tuple[str, ...]) -> dict[str, float | None]:
    """Each version's recall of the items reviewers added, as its eval report on the reviewers' decisions says."""
    from extraction_assets.lib.evaluation.reviewed import score_version_on_reviews
    from extraction_assets.lib.prompt_files import load_schema

    recall: dict[str, float | None] = {}
    with open_warehouse(path, read_only=True) as con:
        for version in versions:
            score = score_version_on_reviews(con, load_schema(DEFAULT_PROMPTS, version), TENANT)
            added = [f for f in score.result.fields if f.field == "_added_by_reviewers"] if score else []
            recall[version] = added[0].recall if added and added[0].support else None
    return recall


def wrong_unqueued(con: Any, items: dict[str, dict[str, Any]], judged: dict[str, Verdict], docs: set[str]) -> int:
    """Drafts of the calibrated versions on documents outside `docs` that the gold says are wrong."""
    drafts = con.execute(
        "SELECT item_id FROM extracted_items WHERE tenant_id = ? AND status = 'draft' AND schema_version IN ?",
        [TENANT, list(TAUGHT_VERSIONS)],
    ).fetchall()
    return sum(
        1
        for (item_id,) in drafts
        if item_id in items
        and items[item_id]["source_uri"] not in docs
        and judged[item_id].judged
        and judged[item_id].action != "accept"
    )


def teaching(path: Path, items: dict[str, dict[str, Any]], judged: dict[str, Verdict]) -> dict[str, Any]:
    """The scripted reviewer decides the first `TEACHING_DECISIONS` items of the queue one by one (its order), then the
    queue's step runs (each tenant's refit from its decisions, `review.lessons`): the wrong values left unqueued on
    the documents no decision touched, before and after."""
    from extraction_assets.lib.prompt_files import load_schema
    from extraction_assets.lib.review import list_queue
    from extraction_assets.lib.stages import refresh_review_queue

    with open_warehouse(path) as con:
        order = [r.item_id for r in list_queue(con, TENANT, limit=TEACHING_DECISIONS)]
        docs = {items[i]["source_uri"] for i in order}
        before = wrong_unqueued(con, items, judged, docs)
        for item_id in order:
            _decide(con, [item_id], judged[item_id])
        refits: dict[str, Any] = {}
        sent = 0
        for version in TAUGHT_VERSIONS:
            report = refresh_review_queue(con, version, load_schema(DEFAULT_PROMPTS, version))
            refits[version] = report.figures["tenant_refits"].get(TENANT, "no decision")
            sent += report.figures["sent_to_review_by_refits"]
        after = wrong_unqueued(con, items, judged, docs)
    by_version: dict[str, int] = {}
    for item_id in order:
        by_version[items[item_id]["schema_version"]] = by_version.get(items[item_id]["schema_version"], 0) + 1
    return {
        "teaching_decisions": len(order),
        "teaching_decisions_by_version": ", ".join(f"{k} {v}" for k, v in sorted(by_version.items())),
        "teaching_documents_decided": len(docs),
        **{f"teaching_refit_{v}": str(r) for v, r in refits.items()},
        "teaching_sent_to_review": sent,
        "wrong_unqueued_rest_no_decisions": before,
        "wrong_unqueued_rest_after_decisions": after,
        "target_wrong_unqueued_rest_after": f"<= {before / 2:g}",
    }


def states(path: Path, item_ids: list[str]) -> dict[str, tuple[str, str]]:
    with open_warehouse(path, read_only=True) as con:
        rows = con.execute(
            "SELECT item_id, status, CAST(value AS VARCHAR) FROM extracted_items WHERE item_id IN (SELECT unnest(?))",
            [item_ids],
        ).fetchall()
    return {item_id: (status, value) for item_id, status, value in rows}


@contextmanager
def _review_client(path: Path) -> Iterator[Any]:
    from starlette.testclient import TestClient

    from extraction_assets.web.review_app import create_review_app

    principals = [{"name": n, "tenant": TENANT, "token_sha256": hash_token(t)} for n, t in TOKENS.items()]
    auth = Authenticator(AuthConfig.model_validate({"principals": principals}))
    with TestClient(create_review_app(path, TENANT, DEFAULT_PROMPTS, auth), base_url="http://127.0.0.1") as client:
        yield client


def lost_updates(path: Path) -> tuple[int, int, list[int]]:
    """Two reviewers on one queued item, the page's form and the API's PATCH each made against the version its author
    read, both orders: (lost updates, scenarios, the second writer's status codes)."""
    import re

    with open_warehouse(path) as con:
        first, second = queued(con)[:2]
    page_auth = ("page-reviewer", TOKENS["page-reviewer"])
    api_headers = {"Authorization": f"Bearer {TOKENS['api-reviewer']}"}
    lost, codes = 0, []
    with _review_client(path) as client:
        for item_id, page_first in ((first, False), (second, True)):
            html = client.get(f"/items/{item_id}", auth=page_auth).text
            form = {k: re.search(rf'name="{k}" value="([^"]+)"', html)[1] for k in ("token", "version")}  # type: ignore[index]
            read = client.get(f"/extracted-fields/{item_id}", headers=api_headers)
            version = read.json()["version"]
            assert version == form["version"], "both read the item at the same version"
            page = (
                "POST",
                f"/items/{item_id}/reject",
                {"data": {**form, "note": "page"}, "auth": page_auth, "follow_redirects": False},
            )
            api = (
                "PATCH",
                f"/extracted-fields/{item_id}",
                {"json": {"status": "accepted", "note": "api", "version": version}, "headers": api_headers},
            )
            winner, loser = (page, api) if page_first else (api, page)
            assert client.request(winner[0], winner[1], **winner[2]).status_code in (200, 303)
            codes.append(client.request(loser[0], loser[1], **loser[2]).status_code)
            with open_warehouse(path, read_only=True) as con:
                actions = con.execute("SELECT note FROM audit_log WHERE item_id = ?", [item_id]).fetchall()
            lost += len(actions) != 1  # the second writer's change went in over the first one's
    return lost, 2, codes


def bench_review_loop() -> Figures:
    with tempfile.TemporaryDirectory() as tmp:
        settings, run_s = bench_inbox_warehouse(Path(tmp))
        reviewer = GoldReviewer()
        with open_warehouse(settings.warehouse, read_only=True) as con:
            items = undecided(con, TENANT)
            queue = queued(con)
        judged = verdicts(reviewer, items)
        alone, grouped = Path(tmp) / "alone.duckdb", Path(tmp) / "grouped.duckdb"
        for copy in (alone, grouped):
            shutil.copyfile(settings.warehouse, copy)
        actions_alone, alone_s = one_by_one(alone, judged)
        actions_grouped, groups, decided, grouped_s = by_groups(grouped, judged)
        same = states(alone, queue) == states(grouped, queue)
        on_page = Path(tmp) / "page.duckdb"
        shutil.copyfile(settings.warehouse, on_page)
        submits, pages = by_queue_page(on_page, judged)
        same_on_page = states(alone, queue) == states(on_page, queue)
        shutil.copyfile(settings.warehouse, alone)
        lost, scenarios, codes = lost_updates(alone)
        taught = Path(tmp) / "taught.duckdb"
        shutil.copyfile(settings.warehouse, taught)
        teaching_figures = teaching(taught, items, judged)
        added, refused = add_missed(grouped, reviewer, FIELD_VERSIONS)
        recall = missed_item_recall(grouped, FIELD_VERSIONS)
        challenger_s, challenger_code, challenger = challenger_command(
            Path(tmp), grouped, settings.inbox, CHALLENGER_DEV_LIMIT
        )
    by_action: dict[str, int] = {}
    for item_id in queue:
        by_action[judged[item_id].action] = by_action.get(judged[item_id].action, 0) + 1
    return {
        "queue_items": len(queue),
        "actions_one_by_one": actions_alone,
        "actions_by_groups": actions_grouped,
        "target_actions_by_groups": "<= 100",
        "groups_in_queue": groups,
        "items_decided_by_groups": decided,
        "queued_items_same_state_both_ways": str(same),
        "submits_on_the_review_page": submits,
        "queue_pages_read": pages,
        "queued_items_same_state_on_the_page": str(same_on_page),
        "queued_decisions": ", ".join(f"{k} {v}" for k, v in sorted(by_action.items())),
        "queued_items_judged_by_gold": sum(judged[i].judged for i in queue),
        "decide_s_one_by_one": round(alone_s, 2),
        "decide_s_by_groups": round(grouped_s, 2),
        "lost_updates_two_reviewers": f"{lost} of {scenarios}",
        **teaching_figures,
        "missed_items_added_by_reviewer": added,
        "missed_items_refused": refused,
        **{f"missed_item_recall_{v}": "n/a" if r is None else r for v, r in recall.items()},
        "challenger_commands_to_comparison": 1 if challenger_code == 0 and "receipt@v2/comparison" in challenger else 0,
        "challenger_command_s": round(challenger_s, 1),
        "challenger_compared_on": ", ".join(
            sorted(
                line[5:]
                for line in str(challenger.get("receipt@v2/comparison", "")).splitlines()
                if line[:5] == "#### "
            )
        ),
        **{
            f"challenger_{key.split('/', 1)[1].replace('/', '_')}": value
            for key, value in challenger.items()
            if key.startswith("receipt@v2/") and key.endswith(("/f1", "/missed_item_recall"))
        },
        "second_writer_status_codes": ", ".join(map(str, codes)),
        "pipeline_run_s": round(run_s, 1),
        "measured_on": (
            f"the bench inbox (every dev record of sroie, cuad, enron_categories, qmsum_meetings once; one tenant), "
            f"offline run; scripted reviewer deciding from the gold (evals/review_oracle.py); {len(items)} undecided "
            "items, of which the queue's"
        ),
    }
