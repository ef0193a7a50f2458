"""Tests through the command line, files on disk and HTTP (the mock and live LLM servers)."""
