"""Tests of the Textual app: Pilot tests and SVG snapshots (``__snapshots__/``, beside them)."""
