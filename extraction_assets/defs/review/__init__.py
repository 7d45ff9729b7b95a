"""Review: the queue of items that need a person, and the audit trail's check."""
