"""Ingest: the inbox becomes raw_documents, then PII-scrubbed text, with the checks that guard both."""
