"""The golden ``--json`` outputs of tests/functional/test_golden.py, and their regenerator."""
