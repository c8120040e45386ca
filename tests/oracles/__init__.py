"""Tests of bayesldp.oracles, one module per oracle module."""
