"""Summarizer implementations: the LLM client over httpx, or the extractive one without an LLM."""

from __future__ import annotations

from worker.compressor.summarizer import Summarizer
from worker.encodings import counter_for_model
from worker.settings import Settings
from worker.summarizers.llm import LLMConfig, LLMSummarizer


def build_summarizer(settings: Settings) -> Summarizer:
    """The LLM client when ``COMPACTION_LLM_BASE_URL`` is set, else ``ExtractiveSummarizer()``.

    The LLM client holds a connection pool: build it once per process and ``close()`` it at
    shutdown (``close_summarizer`` does that for any summarizer).
    """
    if not settings.llm_base_url:
        from worker.compressor.extractive import ExtractiveSummarizer

        return ExtractiveSummarizer()
    config = LLMConfig.from_settings(settings)
    counter = counter_for_model(config.models[0]) if config.models else None
    return LLMSummarizer(config, counter=counter)


def close_summarizer(summarizer: Summarizer) -> None:
    """Release what a summarizer holds (the LLM client's connections); others hold nothing."""
    if isinstance(summarizer, LLMSummarizer):
        summarizer.close()


__all__ = ["LLMConfig", "LLMSummarizer", "build_summarizer", "close_summarizer"]
