"""The compressor core: messages in, compacted messages and a report out. No I/O.

The one entry point is ``compress``; see docs/internals.md for the contract.
"""

from worker.compressor.compress import compress
from worker.compressor.config import CompressConfig
from worker.compressor.errors import (
    CompactionError,
    EmptySummaryError,
    InvalidTranscriptError,
    SummarizerAuthError,
    SummarizerContextTooLongError,
    SummarizerError,
)
from worker.compressor.extractive import ExtractiveSummarizer
from worker.compressor.messages import Message, ToolCall, parse_messages, to_wire, to_wire_list
from worker.compressor.report import CompactionReport, CompactionResult
from worker.compressor.summarizer import Summarizer, SummaryRequest, SummaryResponse
from worker.compressor.tokens import TokenCounter

__all__ = [
    "CompactionError",
    "CompactionReport",
    "CompactionResult",
    "CompressConfig",
    "EmptySummaryError",
    "ExtractiveSummarizer",
    "InvalidTranscriptError",
    "Message",
    "Summarizer",
    "SummarizerAuthError",
    "SummarizerContextTooLongError",
    "SummarizerError",
    "SummaryRequest",
    "SummaryResponse",
    "TokenCounter",
    "ToolCall",
    "compress",
    "parse_messages",
    "to_wire",
    "to_wire_list",
]
