"""Exceptions and warnings shared by the methods (what ``max_iter`` and ``tol`` lead to)."""

from __future__ import annotations

__all__ = ["ConvergenceError", "ConvergenceWarning"]


class ConvergenceWarning(RuntimeWarning):
    """An iterative method stopped (on ``max_iter``) before meeting its tolerance."""


class ConvergenceError(RuntimeError):
    """An iterative method stopped before converging and has no valid answer to give."""
