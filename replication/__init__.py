"""The replication experiment: data, cross-checks, timing sweeps, figures and the report."""
