"""Pictures of cala-bench output (scripts/plots is the command line)."""
