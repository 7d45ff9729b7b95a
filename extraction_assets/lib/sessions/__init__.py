"""Live interview sessions: a growing transcript, light extraction into `session_state`, checkpoint drafts of
covered objectives, and post-session extraction when the session is completed."""

from extraction_assets.lib.sessions.light import (
    LIGHT_PROMPT,
    FieldState,
    HeuristicLight,
    LightExtractor,
    ModelLight,
    covered_objectives,
    light_extractor,
    light_instructions,
)
from extraction_assets.lib.sessions.service import (
    SessionEnv,
    SessionReport,
    final_extraction,
    reextract_session,
    sync_session,
    sync_sessions,
)
from extraction_assets.lib.sessions.transcript import (
    DEFAULT_SESSION_SCHEMA,
    SessionFile,
    SessionFileError,
    read_session,
    session_document,
    session_files,
)

__all__ = [
    "DEFAULT_SESSION_SCHEMA",
    "LIGHT_PROMPT",
    "FieldState",
    "HeuristicLight",
    "LightExtractor",
    "ModelLight",
    "SessionEnv",
    "SessionFile",
    "SessionFileError",
    "SessionReport",
    "covered_objectives",
    "final_extraction",
    "light_extractor",
    "light_instructions",
    "read_session",
    "reextract_session",
    "session_document",
    "session_files",
    "sync_session",
    "sync_sessions",
]
