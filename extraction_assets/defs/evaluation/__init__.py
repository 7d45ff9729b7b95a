"""Evaluation: each schema version scored against gold data, then every version compared."""
