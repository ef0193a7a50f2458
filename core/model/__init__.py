"""The data model every part of ctxscope speaks: a recorded session (``session``), the pydantic
models built without validation (``fastmodel``), token counts (``tokens``), and numbers as they are
read from untrusted files (``read_numbers``) and written for people (``write_numbers``).
"""
