"""Checks on extraction, per schema-version partition: every item has evidence, quotes match their source,
confidences sit in their band, caps hold, statuses agree with reasons, and no evidence crosses tenants.

They are the extraction asset's own checks (`SPECS`), evaluated by its step once every partition of the run is
materialized: one run serves many partitions, and each partition gets its own result (an `AssetCheckEvaluation`
tied to its materialization), shown per partition in the UI. Each check reads the schema versions of the run's
partitions in one query: a run costs what its partitions hold and a query per check, however many versions it
serves. A shard's partition is its documents' rows: each shard's run checks those alone (a version's review queue,
built after every shard, gates on the whole version: `blocking_failures`). Each is still its own check, with its
own key, description, blocking flag and result. They run with the step that writes what they check (the multi-asset
cannot be subset: items and evidence are written together), so the UI's "Execute" on one of them says it needs the
materialization. A failed blocking check holds
back its own version's review queue and nothing else.
"""

import warnings
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import TYPE_CHECKING

import dagster as dg
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData,
)

from extraction_assets.defs.check_results import violations_evaluation
from extraction_assets.defs.partitions import extraction_partition, extraction_partitions
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.warehouse import ALL_DOCUMENTS, Shard, invariants

if TYPE_CHECKING:
    import duckdb

# partitioned checks are a preview feature of Dagster 1.13 (pinned below 1.14); said once in ARCHITECTURE.md
warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec")


@dataclass(frozen=True)
class Invariant:
    """One check: the asset it guards, what it says, whether it blocks, and the query finding what breaks it."""

    name: str
    asset: str
    description: str
    what: str  # how the result names what it found
    find: Callable[["duckdb.DuckDBPyConnection", Sequence[SchemaVersion], Shard], Mapping[str, Sequence[object]]]
    blocking: bool = False

    @property
    def key(self) -> dg.AssetCheckKey:
        return dg.AssetCheckKey(dg.AssetKey(self.asset), self.name)


INVARIANTS = (
    Invariant(
        "every_item_has_evidence",
        "extracted_items",
        "every item asserting a value cites at least one evidence row",
        "items without evidence",
        lambda con, schemas, shard: invariants.items_without_evidence(con, _keys(schemas), shard),
        blocking=True,
    ),
    Invariant(
        "confidence_within_band",
        "extracted_items",
        "heuristic items in the heuristic band, model items in the model band, none at 1.0",
        "items outside their band",
        invariants.confidence_out_of_band,
    ),
    Invariant(
        "items_per_document_capped",
        "extracted_items",
        "no document has more items than its schema's max_items",
        "documents over their max_items",
        invariants.documents_over_cap,
    ),
    Invariant(
        "review_status_consistent",
        "extracted_items",
        "machine-owned items are needs_review exactly when they have review reasons",
        "items whose status and reasons disagree",
        lambda con, schemas, shard: invariants.review_status_mismatches(con, _keys(schemas), shard),
    ),
    Invariant(
        "quotes_match_source",
        "grounded_evidence",
        "every quote equals raw_documents.text[char_start:char_end]",
        "quotes that differ from the source slice",
        lambda con, schemas, shard: invariants.quote_mismatches(con, _keys(schemas), shard),
        blocking=True,
    ),
    Invariant(
        "tenant_scope_kept",
        "grounded_evidence",
        "tenant scope is never widened: item, evidence and document share one tenant",
        "evidence rows crossing tenants",
        lambda con, schemas, shard: invariants.cross_tenant_evidence(con, _keys(schemas), shard),
        blocking=True,
    ),
)


SPECS = [
    dg.AssetCheckSpec(
        i.name,
        asset=i.asset,
        description=i.description + (" (blocking: a failure holds back this version's review queue)" * i.blocking),
        # the gate is this version's own (`review/assets.py`): for Dagster a blocking check would stop every
        # version of the run, and it gates only on results, never on the per-partition evaluations these yield
        blocking=False,
        partitions_def=extraction_partitions,
    )
    for i in INVARIANTS
]
BLOCKING = frozenset(i.key for i in INVARIANTS if i.blocking)


def evaluations(
    con: "duckdb.DuckDBPyConnection",
    schemas: Mapping[str, SchemaVersion],
    selected: Set[dg.AssetCheckKey],
    targets: Mapping[str, Mapping[str, AssetCheckEvaluationTargetMaterializationData]],
) -> list[dg.AssetCheckEvaluation]:
    """The selected invariants of each partition (partition -> its schema version in `schemas`): a query per
    invariant for all of them (for each shard among them: a shard's partition is its documents' rows, and a shard's
    run checks them alone, not every shard's rows again), then each partition's result, tied to its asset's
    materialization of that partition in `targets` (asset -> partition -> materialization)."""
    by_shard: dict[Shard, dict[str, SchemaVersion]] = {}
    for partition, schema in schemas.items():
        by_shard.setdefault(extraction_partition(partition)[1], {})[partition] = schema
    evaluations = []
    for shard, partitions in by_shard.items():
        versions = list({schema.key: schema for schema in partitions.values()}.values())
        found = {i: i.find(con, versions, shard) for i in INVARIANTS if i.key in selected}
        evaluations += [
            violations_evaluation(
                violations.get(schema.key, []), i.what, i.key, partition, targets.get(i.asset, {}).get(partition)
            )
            for partition, schema in partitions.items()
            for i, violations in found.items()
        ]
    return evaluations


def blocking_failures(con: "duckdb.DuckDBPyConnection", schema: SchemaVersion) -> list[str]:
    """The blocking invariants a schema version breaks now (for a queue rebuilt without its extraction's checks)."""
    blocking = [i for i in INVARIANTS if i.blocking]
    return [i.key.to_user_string() for i in blocking if i.find(con, [schema], ALL_DOCUMENTS).get(schema.key)]


def _keys(schemas: Sequence[SchemaVersion]) -> list[str]:
    return [schema.key for schema in schemas]
