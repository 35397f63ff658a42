"""Several runs: the runs table, compare, and sweeps."""
