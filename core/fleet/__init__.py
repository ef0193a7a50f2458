"""Many sessions at once: the rows of one replayed session (``session_rows``), run over many
sessions in parallel processes (``session_pool``), the fleet's table (``survey``) and its Parquet
export (``export``).
"""
