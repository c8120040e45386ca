"""Tests of bayesldp.runner."""
