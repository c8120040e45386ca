"""Tests of the studies of bayesldp.experiments."""
