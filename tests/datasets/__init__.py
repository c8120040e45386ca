"""Tests of bayesldp.datasets."""
