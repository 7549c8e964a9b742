"""Walk-throughs and real-data loaders for the three workload domains (not part of the installed package)."""
