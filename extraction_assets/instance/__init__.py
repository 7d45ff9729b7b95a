"""The Dagster instance the command line runs against: `dagster.yaml` (copied into `DAGSTER_HOME` by `make ui` and
`make demo`), its storage created once, and the `duckdb` pool kept usable after a run is killed."""

from extraction_assets.instance.pool import pool_turn, release_dead_runs, run_tags
from extraction_assets.instance.storage import open_instance

__all__ = ["open_instance", "pool_turn", "release_dead_runs", "run_tags"]
