"""The model path: an OpenAI-protocol client (instructor + openai), prompts, response models, a local model,
token budgets and Batch API backfills."""

from extraction_assets.lib.llm.batch import BatchRequest, BatchState, batch_answers, retrieve_batch, submit_batch
from extraction_assets.lib.llm.budget import Deferred, Prices, TokenBudget, estimated_cost
from extraction_assets.lib.llm.client import CallStats, LLMClient, LLMError, LLMSettings, MemoryCache
from extraction_assets.lib.llm.local_model import LOCAL_EXTRA_BODY, LOCAL_MAX_TOKENS, idle_cores, local_base_url
from extraction_assets.lib.llm.prompting import boundary_tag, build_messages, defuse, document_from_messages
from extraction_assets.lib.llm.response_models import (
    candidate_from_record,
    candidates_from_fields,
    candidates_from_items,
    classification_model,
    fields_model,
    items_model,
    module_model,
    record_model,
    response_model,
)

__all__ = [
    "LOCAL_EXTRA_BODY",
    "LOCAL_MAX_TOKENS",
    "BatchRequest",
    "BatchState",
    "CallStats",
    "Deferred",
    "LLMClient",
    "LLMError",
    "LLMSettings",
    "MemoryCache",
    "Prices",
    "TokenBudget",
    "batch_answers",
    "boundary_tag",
    "build_messages",
    "candidate_from_record",
    "candidates_from_fields",
    "candidates_from_items",
    "classification_model",
    "defuse",
    "document_from_messages",
    "estimated_cost",
    "fields_model",
    "idle_cores",
    "items_model",
    "local_base_url",
    "module_model",
    "record_model",
    "response_model",
    "retrieve_batch",
    "submit_batch",
]
