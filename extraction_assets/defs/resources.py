"""Resources: where the warehouse, inbox and prompts are, and which extractor runs."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import duckdb

from extraction_assets.lib.extractors import Extractor, HeuristicExtractor
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import open_warehouse


class WarehouseResource(dg.ConfigurableResource):
    """The DuckDB file; connections are opened per batch and never held while waiting on a model."""

    path: str

    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        with open_warehouse(Path(self.path), read_only=read_only) as con:
            yield con


class PipelineResource(dg.ConfigurableResource):
    """Inputs of the pipeline: the inbox (one folder per tenant) and the prompt files (schema versions)."""

    inbox: str
    prompts_dir: str

    @property
    def inbox_path(self) -> Path:
        return Path(self.inbox)

    @property
    def prompts_path(self) -> Path:
        return Path(self.prompts_dir)


class ExtractorResource(dg.ConfigurableResource):
    """Which extractor runs: the deterministic heuristic unless a model endpoint is configured."""

    def build(self) -> Extractor:
        return HeuristicExtractor()


def resources_from_settings(settings: Settings) -> dict[str, dg.ConfigurableResource]:
    return {
        "warehouse": WarehouseResource(path=str(settings.warehouse)),
        "pipeline": PipelineResource(inbox=str(settings.inbox), prompts_dir=str(settings.prompts_dir)),
        "extractor": ExtractorResource(),
    }
