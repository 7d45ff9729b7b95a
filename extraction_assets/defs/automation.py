"""Declarative automation: derived assets follow their upstream by themselves.

Extraction follows new scrubbed documents and the review queue follows its partition's extraction, each only
when what it reads changed (a new data version) and while the blocking checks of what it reads have passed: a
failed PII check stops extraction in the UI as it does in `extraction-assets run`.
"""

import dagster as dg

from extraction_assets.lib.settings import Settings

_UPSTREAM_SAFE = dg.AutomationCondition.all_deps_match(
    dg.AutomationCondition.will_be_requested()  # in the same run: a failed blocking check there stops us
    | dg.AutomationCondition.all_checks_match(dg.AutomationCondition.check_passed(), blocking_only=True)
).with_label("upstream blocking checks passed, or upstream runs with us")

# "upstream updated" is a new data version, not any new materialization: a run that changed nothing keeps its
# version (`data_versions.py`), so a manual materialization with nothing to do is not followed by a run that has
# nothing to do either
_UPSTREAM_CHANGED = dg.AutomationCondition.any_deps_match(
    (dg.AutomationCondition.data_version_changed() & ~dg.AutomationCondition.executed_with_root_target())
    | dg.AutomationCondition.will_be_requested()
).with_label("upstream data changed, or upstream runs with us")

AFTER_UPSTREAM = (
    dg.AutomationCondition.eager().replace("any_deps_updated", _UPSTREAM_CHANGED) & _UPSTREAM_SAFE
).with_label("eager on changed upstream data, upstream blocking checks passed")

automation_sensor = dg.AutomationConditionSensorDefinition(
    "extraction_automation",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=Settings.from_env().automation_interval_s,  # EXTRACTION_AUTOMATION_INTERVAL_S
    description="Materializes derived assets when their automation condition says so: what a person materialized "
    "by hand is followed (extraction after new scrubbed documents, a queue after its extraction). A pass leaves it "
    "nothing to do; turn it off to have only passes run.",
)
