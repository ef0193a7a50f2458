"""LLMs that write compaction summaries.

``protocol`` is what compaction asks of a summariser; ``mock`` (offline, deterministic) and
``live`` (any OpenAI-compatible endpoint) implement it; ``factory`` picks one from a policy;
``mock_server`` serves the mock over HTTP for end-to-end tests of the live client. This module
imports none of them, so that importing the protocol never loads the ``openai`` SDK.
"""
