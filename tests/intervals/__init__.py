"""Tests of bayesldp.intervals: one module per module of the package."""
