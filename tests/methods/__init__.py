"""Tests of bayesldp.methods: one module per module of the package."""
