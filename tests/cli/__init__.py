"""Tests of the bayesldp command line."""
