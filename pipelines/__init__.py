"""The Dagster code location of kgprobe: definitions, jobs, partitions and the command line."""
