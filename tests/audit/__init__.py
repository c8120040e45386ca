"""Tests of bayesldp.audit, one module per part of the audit."""
