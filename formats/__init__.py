"""Everything copter reads or writes on disk: MPS and Parquet problems, delta files, the checkpoint store,
solution and report writers. Depends on ``solver`` for data types only."""
