"""Tests of bayesldp.models, one file per module."""
