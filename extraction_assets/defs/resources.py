"""Resources: where the warehouse, inbox and prompts are, and which extractor runs."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dagster as dg
from dagster._core.definitions.job_definition import default_job_io_manager_with_fs_io_manager_schema

from extraction_assets.lib.extraction import Extractor, build_extractor, llm_settings
from extraction_assets.lib.llm.client import LLMSettings
from extraction_assets.lib.settings import ModelSettings, Settings
from extraction_assets.lib.warehouse import held_warehouse, is_lake, open_warehouse

if TYPE_CHECKING:
    import duckdb


class WarehouseResource(dg.ConfigurableResource):
    """The DuckDB file or DuckLake catalog (`path` as EXTRACTION_WAREHOUSE gives it). A process holds a DuckDB file
    open and lends each batch a cursor of it, giving the file back whenever another process waits for it (see the
    give-back rule of `held.py`), so readers still get in between batches, and after two seconds idle (not while its
    worker processes compute); a DuckLake catalog opens a connection per batch."""

    path: str

    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator["duckdb.DuckDBPyConnection"]:
        if is_lake(self.path):
            with open_warehouse(self.path, read_only=read_only) as con:
                yield con
            return
        with held_warehouse(self.path).lease() as con:
            yield con

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """The file kept open for the body (a step's work, whoever launched its run: the command line pins its whole
        pass as well): no close and checkpoint when its batches are more than the holder's idle time apart (a slow
        model, OCR of a large image); a process waiting for the file still gets it between batches."""
        if is_lake(self.path):
            yield
            return
        with held_warehouse(self.path).pinned():
            yield


class PipelineResource(dg.ConfigurableResource):
    """Inputs of the pipeline: the inbox (one folder per tenant) and the prompt files (schema versions)."""

    inbox: str
    prompts_dir: str
    pii_policy: str | None = None  # tenant PII policy YAML; None = the bundled one
    max_file_mb: float | None = None  # the largest inbox file read; None = the readers' default
    sessions_dir: str = ".data/sessions"  # live interview sessions, `<tenant>/<session_id>.json[l]`
    session_light_model: str | None = None  # a small model for the sessions' light extraction; None: heuristic
    worker_niceness: int | None = None  # how far below the run its scrub workers run; None: the default (10)
    reports_url: str | None = None  # where the evaluation reports are served; None: eval_report shows their paths

    @property
    def max_file_bytes(self) -> int | None:
        return int(self.max_file_mb * 1024 * 1024) if self.max_file_mb else None

    @property
    def inbox_path(self) -> Path:
        return Path(self.inbox)

    @property
    def prompts_path(self) -> Path:
        return Path(self.prompts_dir)

    @property
    def sessions_path(self) -> Path:
        return Path(self.sessions_dir)


class ExtractorResource(dg.ConfigurableResource, ModelSettings):
    """Which extractor runs: the model path's settings (`ModelSettings`) as the UI shows and sets them; the endpoint's
    key is named by its variable, read when the client is made, so the UI never holds its value."""

    def build(self, batch: bool = True) -> Extractor:
        return build_extractor(self, batch)

    def llm_settings(self) -> LLMSettings | None:
        return llm_settings(self)


class DeferredIOManager(dg.IOManager):
    """Dagster's default IO manager (an output pickled under the instance's storage), made when an output is first
    stored or an input first loaded. The pipeline's assets return `MaterializeResult`s, which no IO manager stores,
    yet every run made the default one as it started its resources, and its path type (`upath`, `fsspec`) cost a
    fresh process about 30 ms of CPU to import: a run that stores no output now never makes it."""

    def __init__(self, init_context: dg.InitResourceContext) -> None:
        self._init_context = init_context
        self._made: dg.IOManager | None = None

    @property
    def made(self) -> dg.IOManager:
        if self._made is None:
            make = default_job_io_manager_with_fs_io_manager_schema.resource_fn  # typed without its context argument
            self._made = make(self._init_context)  # type: ignore[call-arg]
        return self._made

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        self.made.handle_output(context, obj)

    def load_input(self, context: dg.InputContext) -> Any:
        return self.made.load_input(context)


deferred_io_manager = dg.IOManagerDefinition(
    resource_fn=DeferredIOManager,
    config_schema=default_job_io_manager_with_fs_io_manager_schema.config_schema,
    description="Dagster's default IO manager, made at its first use (`DeferredIOManager`).",
)


def resources_from_settings(settings: Settings) -> dict[str, Any]:
    """The resources of every run; `io_manager` is Dagster's default one, deferred (`DeferredIOManager`)."""
    return {
        "io_manager": deferred_io_manager,
        "warehouse": WarehouseResource(path=str(settings.warehouse)),
        "pipeline": PipelineResource(
            inbox=str(settings.inbox),
            prompts_dir=str(settings.prompts_dir),
            pii_policy=str(settings.pii_policy) if settings.pii_policy else None,
            max_file_mb=settings.max_file_mb,
            sessions_dir=str(settings.sessions_dir),
            session_light_model=settings.session_light_model,
            worker_niceness=settings.worker_niceness,
            reports_url=settings.reports_url,
        ),
        "extractor": ExtractorResource(**settings.model.model_dump()),
    }
