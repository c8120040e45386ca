"""Tests of bayesldp (run with pytest from the repository root)."""
