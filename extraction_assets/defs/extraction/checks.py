"""Checks on extraction, per schema-version partition: every item has evidence, quotes match their source,
confidences sit in their band, caps hold, statuses agree with reasons, and no evidence crosses tenants.

Each check reads the schema version it runs for (the one just materialized, every shard of it), so a run costs
what its partition holds, not what the whole warehouse holds; a backfill of every partition checks every row.
The six are one step (`extraction_invariants`) reading through one connection: as six steps they cost a Dagster
step and a warehouse connection each, most of an incremental run's checking. Each is still its own check, with
its own key, description, blocking flag and result, and any subset of them can run alone.
"""

import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import dagster as dg

from extraction_assets.defs.check_results import violations_result
from extraction_assets.defs.partitions import POOL, extraction_partition, extraction_partitions
from extraction_assets.defs.resources import PipelineResource, WarehouseResource
from extraction_assets.lib.schemas import SchemaVersion, load_schema
from extraction_assets.lib.warehouse import invariants

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
    find: Callable[["duckdb.DuckDBPyConnection", SchemaVersion], Sequence[object]]
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
        lambda con, schema: invariants.items_without_evidence(con, schema.key),
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
        lambda con, schema: invariants.review_status_mismatches(con, schema.key),
    ),
    Invariant(
        "quotes_match_source",
        "grounded_evidence",
        "every quote equals raw_documents.text[char_start:char_end]",
        "quotes that differ from the source slice",
        lambda con, schema: invariants.quote_mismatches(con, schema.key),
        blocking=True,
    ),
    Invariant(
        "tenant_scope_kept",
        "grounded_evidence",
        "tenant scope is never widened: item, evidence and document share one tenant",
        "evidence rows crossing tenants",
        lambda con, schema: invariants.cross_tenant_evidence(con, schema.key),
        blocking=True,
    ),
)


@dg.multi_asset_check(
    specs=[
        dg.AssetCheckSpec(
            i.name, asset=i.asset, description=i.description, blocking=i.blocking, partitions_def=extraction_partitions
        )
        for i in INVARIANTS
    ],
    can_subset=True,
    pool=POOL,
    description="The extraction invariants of one partition, read through one warehouse connection.",
)
def extraction_invariants(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, pipeline: PipelineResource
) -> Iterator[dg.AssetCheckResult]:
    schema = load_schema(pipeline.prompts_path, extraction_partition(context.partition_key)[0])
    selected = [i for i in INVARIANTS if i.key in context.selected_asset_check_keys]
    with warehouse.connect(read_only=True) as con:
        results = [violations_result(i.find(con, schema), i.what, i.key) for i in selected]
    yield from results  # the connection is closed before Dagster records them
