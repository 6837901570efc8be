"""The retention benchmark: what survives compaction, per agent format and artifact kind."""
