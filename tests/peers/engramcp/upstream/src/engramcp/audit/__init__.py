"""Audit subsystem — async JSONL event logging."""

from engramcp.audit.schemas import AuditEvent
from engramcp.audit.schemas import AuditEventType
from engramcp.audit.store import AuditLogger

__all__ = [
    "AuditEvent",
    "AuditEventType",
    "AuditLogger",
]
