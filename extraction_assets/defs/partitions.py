"""Extraction is partitioned by schema version: one partition per prompt file (`pulse@v1`)."""

import dagster as dg

schema_versions = dg.DynamicPartitionsDefinition(name="schema_versions")

POOL = "duckdb"  # DuckDB allows one writer per file: every writing asset and check shares this pool
