"""Extraction, partitioned by schema version: items with grounded evidence, and the checks that guard them."""
