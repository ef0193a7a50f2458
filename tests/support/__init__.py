"""What the tests share: session builders, transcript writers, the mock LLM, the TUI harness."""
