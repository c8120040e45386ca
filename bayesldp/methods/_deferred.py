"""Functions imported on their first call: the heavy implementations the registry names.

The registry refers to every method by a callable. The cvxpy backends and empirical
Bayes sit in modules whose imports are heavy (cvxpy, SciPy's optimisers), so the
registry holds a :class:`Deferred` of each: a callable that imports the function on its
first call or signature read, so that ``import bayesldp`` stays light. Each loader
names its function in an ordinary import statement.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from bayesldp.estimate import Estimate

__all__ = [
    "Deferred",
    "load_convex_cls",
    "load_convex_mle",
    "load_convex_mle_apx",
    "load_eb_npmle",
    "load_oracle_bayes",
]


class Deferred:
    """A function imported on its first call or signature read (for heavy dependencies).

    ``load()`` imports and returns the function; its signature is the function's, so
    :meth:`MethodSpec.options` reads the real options.
    """

    def __init__(self, load: Callable[[], Callable[..., Estimate]]) -> None:
        self._load = load
        self.__name__ = load.__name__.removeprefix("load_")

    def __call__(self, *args: Any, **kwargs: Any) -> Estimate:
        return self._load()(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self._load())

    def __repr__(self) -> str:
        return f"<deferred {self.__name__}>"


def load_eb_npmle() -> Callable[..., Estimate]:
    """Import and return :func:`bayesldp.empirical_bayes.eb_npmle`."""
    from bayesldp.empirical_bayes import eb_npmle

    return eb_npmle


def load_oracle_bayes() -> Callable[..., Estimate]:
    """Import and return :func:`bayesldp.empirical_bayes.oracle_bayes`."""
    from bayesldp.empirical_bayes import oracle_bayes

    return oracle_bayes


def load_convex_cls() -> Callable[..., Estimate]:
    """Import and return :func:`bayesldp.convex.cls`."""
    from bayesldp.convex import cls as convex_cls

    return convex_cls


def load_convex_mle_apx() -> Callable[..., Estimate]:
    """Import and return :func:`bayesldp.convex.mle_apx`."""
    from bayesldp.convex import mle_apx as convex_mle_apx

    return convex_mle_apx


def load_convex_mle() -> Callable[..., Estimate]:
    """Import and return :func:`bayesldp.convex.mle`."""
    from bayesldp.convex import mle as convex_mle

    return convex_mle
