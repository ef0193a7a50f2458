"""What a replayed session says: why it overflowed (``diagnosis``), what filled the window
(``context_walk``, ``breakdown``), why each compaction ran (``compaction_causes``), what its summary
forgot (``conversation_facts``, ``forgotten_facts``), what it cost (``prices``, ``cost``), and every
compaction in one record (``compaction_records``).
"""
