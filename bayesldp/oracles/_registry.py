"""The table of registered oracle classes and the look-ups by name.

:func:`~bayesldp.oracles.register_oracle` (in :mod:`bayesldp.oracles._base`, next to the
class it accepts) adds a class; this module only stores and finds them. It imports no
oracle and no :class:`~bayesldp.Measurement`, so that a Measurement can ask the
registered class of its oracle for its facts (``counts_sum_to_n``) without an import
cycle.
"""

from __future__ import annotations

from typing import Any

#: The registered oracle classes by name, in registration order.
ORACLES: dict[str, type[Any]] = {}


def find_oracle(name: object) -> type[Any] | None:
    """Return the oracle class registered under ``name`` (case-insensitive), or None.

    Parameters
    ----------
    name : object
        An oracle name; anything that is not a registered name (including a non-str)
        gives None.

    Returns
    -------
    type or None
        The registered class.
    """
    if not isinstance(name, str):
        return None
    key = name.upper()
    for registered, cls in ORACLES.items():
        if registered.upper() == key:
            return cls
    return None


def add_oracle(cls: type[Any]) -> None:
    """Store ``cls`` under its ``name`` (checked by the caller to be an oracle class).

    Parameters
    ----------
    cls : type
        The class; its ``name`` must not be registered yet (ignoring case).

    Raises
    ------
    ValueError
        The name is taken.
    """
    if find_oracle(cls.name) is not None:
        raise ValueError(f"an oracle named {cls.name!r} is already registered")
    ORACLES[cls.name] = cls


def oracle_class(name: str, default: type[Any] | None = None) -> type[Any]:
    """Return the registered oracle class called ``name`` (case-insensitive).

    Facts about an oracle (its likelihood, how its counts are simulated, the variance
    of a set's summed counts) are class attributes and class methods, so they are asked
    of the class: ``oracle_class(m.oracle, FrequencyOracle).likelihood_kind``.

    Parameters
    ----------
    name : str
        A registered name: ``"GRR"``, ``"OUE"``, ``"SUE"``, ``"OLH"``, ``"SS"``,
        ``"HR"`` or one added with :func:`~bayesldp.oracles.register_oracle`.
    default : type, optional
        Returned for a name no oracle is registered under (e.g. a Measurement's
        ``"custom"``: pass :class:`~bayesldp.FrequencyOracle` for its generic facts); by
        default such a name is an error.

    Returns
    -------
    type
        The :class:`~bayesldp.FrequencyOracle` subclass (or ``default``).

    Raises
    ------
    ValueError
        Unknown ``name`` and no ``default``.

    Examples
    --------
    >>> oracle_class("grr").likelihood_kind
    'multinomial'
    """
    cls = find_oracle(str(name))
    if cls is not None:
        return cls
    if default is not None:
        return default
    raise ValueError(f"unknown oracle {name!r}; name must be one of {', '.join(ORACLES)}")


def make_oracle(name: str, epsilon: float, domain_size: int, **params: Any) -> Any:
    """Build a registered oracle by name (case-insensitive).

    Parameters
    ----------
    name : str
        ``"GRR"``, ``"OUE"``, ``"SUE"``, ``"OLH"``, ``"SS"`` or ``"HR"``.
    epsilon : float
        Privacy budget.
    domain_size : int
        Number of items.
    **params
        The oracle's own parameters: ``g`` (OLH), ``k`` (SS).

    Returns
    -------
    FrequencyOracle

    Raises
    ------
    ValueError
        Unknown oracle or a parameter the oracle does not accept (both named).

    Examples
    --------
    >>> make_oracle("olh", 1.0, 1024, g=5).g
    5
    """
    cls = oracle_class(name)
    unknown = sorted(set(params) - set(cls.parameter_names))
    if unknown:
        accepts = ", ".join(cls.parameter_names) or "no other parameter"
        raise ValueError(
            f"unknown parameter(s) {', '.join(map(repr, unknown))} for oracle {cls.name}; "
            f"it accepts epsilon, domain_size and {accepts}"
        )
    return cls(epsilon, domain_size, **params)
