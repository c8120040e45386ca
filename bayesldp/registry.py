"""The method registry: every post-processing method, declared once with its metadata.

A method is a function ``f(m: Measurement, *, **options) -> Estimate`` (the
:class:`Method` protocol) plus one :class:`MethodSpec` line in :data:`BUILTIN` below
(or a call to :func:`register_method` for a method of your own). Everything else, the
list :data:`bayesldp.METHODS`, the default set of an experiment, the plot order and
panels, the test sets of consistent or non-negative methods, is derived from these
declarations.

Shared option names mean the same in every method that accepts them:

``rng``
    All randomness: a :class:`numpy.random.Generator` or an integer seed.
``max_iter``
    The largest number of iterations of the method's own main loop (EM steps, active
    set passes, solver iterations). A method stopped by it before converging warns
    (:class:`ConvergenceWarning`) and returns its last valid iterate, or raises
    :class:`ConvergenceError` when it has none.
``tol``
    The method's convergence tolerance, scale-free (relative, or on a duality gap).

Heavy implementations (cvxpy, PyMC) are imported on first use: a spec names its
function as ``"module:function"``.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Protocol

from bayesldp._validation import check_choice
from bayesldp.errors import ConvergenceError, ConvergenceWarning
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement, check_measurement

logger = logging.getLogger(__name__)

__all__ = [
    "BACKENDS",
    "BUILTIN",
    "ConvergenceError",
    "ConvergenceWarning",
    "Method",
    "MethodSpec",
    "get_method",
    "method_names",
    "parse_method",
    "postprocess",
    "register_method",
]


class Method(Protocol):
    """The shared signature of every post-processing method."""

    def __call__(self, m: Measurement, /, **options: Any) -> Estimate:
        """Post-process ``m`` into an :class:`~bayesldp.Estimate`."""
        ...


#: Backends a method may offer besides the default NumPy one.
BACKENDS: tuple[str, ...] = ("numpy", "cvxpy")

_PANELS = ("left", "right", "both")
_QUERY_RULES = ("sum", "clip-sum")
_INTERVALS = ("bootstrap", "normal", "posterior")


@dataclass(frozen=True)
class MethodSpec:
    """A post-processing method and what is known about it.

    Parameters
    ----------
    name : str
        The name :func:`postprocess` takes, e.g. ``"norm-sub"``.
    target : str or callable
        The NumPy-backend function, or ``"module:function"`` to import on first use.
    summary : str
        One line: what the method does.
    nonnegative : bool
        Every output frequency is ``>= 0``.
    sums_to_one : bool
        The output frequencies sum to 1.
    bayesian : bool
        A posterior mean with posterior draws (needs PyMC).
    backends : mapping of str to str
        Other backends, e.g. ``{"cvxpy": "bayesldp.convex:cls"}``.
    default : bool
        Run by default in experiments and the demo.
    slow : bool
        Seconds or more per call at the papers' setting (left out of quick checks).
    minutes : bool
        Minutes per call at the papers' setting (d = 1024; implies ``slow``): ``--bayes``
        of the demo and the experiments leaves it out; name it to run it.
    query_rule : {"sum", "clip-sum"}
        How a subset query is answered: the sum of the frequencies, or (``post-pos``)
        the raw sum clipped at 0.
    panel : {"left", "right", "both"}
        Where the papers' two-panel figures draw it (baselines left).
    needs_truth : bool
        A reference that takes the true counts (``oracle-bayes``): never usable on real
        data, run by experiments only.
    fixed_options : mapping
        Options the name implies, e.g. ``oue-zero`` is ``base-cut`` with ``alpha=0.05``.
    color : str, optional
        A fixed plot colour; by default one is derived from the registration order.
    interval : {"bootstrap", "normal", "posterior"}
        The natural interval of :meth:`Estimate.interval` for this method: the
        parametric bootstrap (default), the normal interval of the raw estimates
        (``base``, ``post-pos``), or posterior draws. An estimate that carries its own
        ``uncertainty`` uses its draws whatever this says.
    """

    name: str
    target: str | Callable[..., Estimate]
    summary: str
    nonnegative: bool = False
    sums_to_one: bool = False
    bayesian: bool = False
    backends: Mapping[str, str] = field(default_factory=dict)
    default: bool = True
    slow: bool = False
    minutes: bool = False
    query_rule: str = "sum"
    panel: str = "right"
    needs_truth: bool = False
    fixed_options: Mapping[str, Any] = field(default_factory=dict)
    color: str | None = None
    interval: str = "bootstrap"

    def __post_init__(self) -> None:
        """Check the fields and freeze ``backends``."""
        if not isinstance(self.name, str) or not self.name or "@" in self.name:
            raise ValueError(f"name must be a non-empty string without '@', got {self.name!r}")
        check_choice(self.panel, _PANELS, "panel")
        check_choice(self.query_rule, _QUERY_RULES, "query_rule")
        check_choice(self.interval, _INTERVALS, "interval")
        if self.minutes and not self.slow:
            raise ValueError(f"method {self.name!r}: minutes=True needs slow=True")
        for backend in self.backends:
            check_choice(backend, BACKENDS[1:], "backend")
        object.__setattr__(self, "backends", MappingProxyType(dict(self.backends)))
        object.__setattr__(self, "fixed_options", MappingProxyType(dict(self.fixed_options)))

    @property
    def consistent(self) -> bool:
        """Non-negative and summing to 1: a probability vector."""
        return self.nonnegative and self.sums_to_one

    def available_backends(self) -> tuple[str, ...]:
        """``"numpy"`` and the other backends this method offers."""
        return ("numpy", *self.backends)

    def load(self, backend: str = "numpy") -> Callable[..., Estimate]:
        """Return the implementing function for ``backend`` (imported on first use).

        Parameters
        ----------
        backend : {"numpy", "cvxpy"}, default "numpy"
            The implementation wanted; ``"numpy"`` is :attr:`target`, others come from
            :attr:`backends`.

        Raises
        ------
        ValueError
            An unknown backend, or one this method does not offer.
        """
        check_choice(backend, BACKENDS, "backend")
        if backend == "numpy":
            target = self.target
        elif backend in self.backends:
            target = self.backends[backend]
        else:
            raise ValueError(
                f"method {self.name!r} has no {backend} backend; it offers "
                f"{', '.join(self.available_backends())}"
            )
        if callable(target):
            return target
        module, _, func = target.partition(":")
        return getattr(importlib.import_module(module), func)

    def options(self, backend: str = "numpy") -> tuple[str, ...]:
        """Names of the options the implementation accepts (besides ``fixed_options``).

        Read from the signature of the implementing function, after its first (the
        measurement) parameter; ``*args`` and ``**kwargs`` are not options.

        Parameters
        ----------
        backend : {"numpy", "cvxpy"}, default "numpy"
            Whose implementation to read (:meth:`load`).
        """
        params = list(inspect.signature(self.load(backend)).parameters.values())[1:]
        return tuple(
            p.name
            for p in params
            if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name not in self.fixed_options
        )

    def accepts(self, option: str, backend: str = "numpy") -> bool:
        """Whether the implementation takes ``option`` (e.g. ``"rng"``).

        Parameters
        ----------
        option : str
            Name of a keyword parameter.
        backend : {"numpy", "cvxpy"}, default "numpy"
            Whose implementation to ask (:meth:`options`).
        """
        return option in self.options(backend)


_REGISTRY: dict[str, MethodSpec] = {}


def register_method(spec: MethodSpec | None = None, /, **fields: Any) -> MethodSpec:
    """Declare a method: ``register_method(MethodSpec(...))`` or ``register_method(name=...)``.

    Parameters
    ----------
    spec : MethodSpec, optional
        The declaration; or give its fields as keyword arguments.
    **fields
        The fields of a :class:`MethodSpec`, when ``spec`` is not given.

    Returns
    -------
    MethodSpec
        The registered declaration.

    Raises
    ------
    ValueError
        If the name is taken.

    Examples
    --------
    >>> import numpy as np, bayesldp
    >>> from bayesldp.registry import register_method
    >>> def halve(m):
    ...     return bayesldp.Estimate(m.estimates / 2, "halve", m)
    >>> _ = register_method(name="halve-example", target=halve, summary="f~ / 2")
    >>> m = bayesldp.Measurement.from_support_counts([60, 20, 20], n=100, p=0.5, q=0.25)
    >>> bayesldp.postprocess(m, "halve-example").frequencies.round(2).tolist()
    [0.7, -0.1, -0.1]
    """
    if spec is None:
        spec = MethodSpec(**fields)
    elif fields:
        raise ValueError("give a MethodSpec or its fields, not both")
    if not isinstance(spec, MethodSpec):
        raise ValueError(f"spec must be a MethodSpec, got {type(spec).__name__}")
    if spec.name in _REGISTRY:
        raise ValueError(f"method {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def get_method(name: str) -> MethodSpec:
    """Return the declaration of method ``name``; ValueError listing the names if unknown.

    Parameters
    ----------
    name : str
        A registered method name, e.g. ``"norm-sub"`` (no ``@backend`` suffix: see
        :func:`parse_method`).
    """
    if not isinstance(name, str):
        raise ValueError(f"method must be a string, got {type(name).__name__}")
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; choose one of {', '.join(_REGISTRY)}") from None


def method_names(**flags: Any) -> tuple[str, ...]:
    """Return registered names in registration order, filtered by spec fields.

    Parameters
    ----------
    **flags
        ``field=value`` pairs (any :class:`MethodSpec` field or property, e.g.
        ``bayesian=True``, ``consistent=True``); a name is kept if its spec matches all.

    Examples
    --------
    >>> from bayesldp.registry import method_names
    >>> "norm-sub" in method_names(consistent=True, bayesian=False)
    True
    """
    specs: Iterable[MethodSpec] = _REGISTRY.values()
    for key, want in flags.items():
        if not hasattr(MethodSpec, key) and key not in MethodSpec.__dataclass_fields__:
            raise ValueError(f"MethodSpec has no field {key!r}")
        specs = [s for s in specs if getattr(s, key) == want]
    return tuple(s.name for s in specs)


def parse_method(text: str) -> tuple[MethodSpec, str]:
    """Parse ``"name"`` or ``"name@backend"`` into (spec, backend); ValueError if unknown.

    Parameters
    ----------
    text : str
        A method name, optionally followed by ``@`` and a backend it offers.

    Returns
    -------
    tuple of (MethodSpec, str)
        The method's declaration and the backend (``"numpy"`` when none is named).
    """
    if not isinstance(text, str) or not text:
        raise ValueError(f"method must be a non-empty string, got {text!r}")
    name, _, backend = text.partition("@")
    spec = get_method(name)
    backend = backend or "numpy"
    if backend not in spec.available_backends():
        raise ValueError(
            f"method {name!r} has no {backend!r} backend; it offers "
            f"{', '.join(spec.available_backends())}"
        )
    return spec, backend


def postprocess(
    measurement: Measurement, method: str, *, backend: str = "numpy", **options: Any
) -> Estimate:
    """Post-process a measurement with the named method.

    Parameters
    ----------
    measurement : Measurement
        Raw oracle output.
    method : str
        A registered name (:data:`bayesldp.METHODS`), optionally ``"name@backend"``.
    backend : {"numpy", "cvxpy"}
        ``cvxpy`` solves ``cls``, ``mle-apx`` and ``mle`` with a convex solver.
    **options
        Method options, e.g. ``alpha=2.0`` for ``base-cut``; ``rng`` for the methods
        that draw random numbers.

    Returns
    -------
    Estimate
        Its ``info["options"]`` holds the options given here and ``info["backend"]``
        the backend, so that the method can be re-run the same way (the parametric
        bootstrap of :meth:`Estimate.interval` does).

    Raises
    ------
    ValueError
        Unknown method, backend or option, or a measurement of the wrong type.

    Examples
    --------
    >>> import numpy as np, bayesldp
    >>> oracle = bayesldp.OUE(epsilon=1.0, domain_size=8)
    >>> m = oracle.simulate([400, 300, 200, 100, 0, 0, 0, 0], np.random.default_rng(0))
    >>> est = bayesldp.postprocess(m, "norm-sub")
    >>> bool(est.is_consistent())
    True
    """
    check_measurement(measurement, "measurement")
    spec, parsed_backend = parse_method(method)
    if parsed_backend != "numpy":
        if backend != "numpy" and backend != parsed_backend:
            raise ValueError(f"backend {backend!r} contradicts {method!r}")
        backend = parsed_backend
    check_choice(backend, BACKENDS, "backend")
    func = spec.load(backend)
    params = inspect.signature(func).parameters
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    allowed = spec.options(backend)
    unknown = sorted(set(options) - set(allowed))
    if unknown and not accepts_any:
        raise ValueError(
            f"method {spec.name!r} got unknown option(s) {unknown}; "
            f"it accepts: {', '.join(allowed) or 'no options'}"
        )
    clash = sorted(set(options) & set(spec.fixed_options))
    if clash:
        raise ValueError(f"method {spec.name!r} fixes option(s) {clash}")
    logger.debug("postprocess %s (%s), d=%d", spec.name, backend, measurement.domain_size)
    est = func(measurement, **spec.fixed_options, **options)
    info = {**est.info, "options": dict(options), "backend": backend}
    return replace(est, method=spec.name, info=info)


# ---------------------------------------------------------------------------
# The built-in methods, in the order plots and tables show them (the papers' left
# panel first). One line each; see MethodSpec for the fields.

_M = "bayesldp.methods:"
_CVX = "bayesldp.convex:"
_MODELS = "bayesldp.models"

# fmt: off
BUILTIN: tuple[MethodSpec, ...] = (
    MethodSpec("base", _M + "base", "raw unbiased estimates", panel="left", interval="normal"),
    MethodSpec("base-pos", _M + "base_pos", "negatives set to 0", nonnegative=True, panel="left"),
    MethodSpec("post-pos", _M + "post_pos", "each query answer clipped at 0", nonnegative=True,
               query_rule="clip-sum", panel="left", interval="normal"),
    MethodSpec("norm", _M + "norm", "shift so the sum is 1", sums_to_one=True, panel="left"),
    MethodSpec("norm-mul", _M + "norm_mul", "clip, then scale to sum 1", nonnegative=True,
               sums_to_one=True, panel="left"),
    MethodSpec("norm-sub", _M + "norm_sub", "max(f~ + delta, 0) summing to 1", nonnegative=True,
               sums_to_one=True, panel="both"),
    MethodSpec("mle-apx", _M + "mle_apx", "the long paper's Eq. (14)", nonnegative=True,
               sums_to_one=True, backends={"cvxpy": _CVX + "mle_apx"}),
    MethodSpec("base-cut", _M + "base_cut", "below T set to 0", nonnegative=True),
    MethodSpec("norm-cut", _M + "norm_cut", "largest estimates summing to <= 1", nonnegative=True),
    MethodSpec("norm-hyb", _M + "norm_hyb", "keep above T, norm-sub the rest", nonnegative=True,
               sums_to_one=True),
    MethodSpec("power", _M + "power", "Calibrate: power-law posterior mean", nonnegative=True),
    MethodSpec("power-ns", _M + "power_ns", "norm-sub after power (PowerNS)", nonnegative=True,
               sums_to_one=True),
    MethodSpec("cls", _M + "cls", "Euclidean projection onto the simplex", nonnegative=True,
               sums_to_one=True, backends={"cvxpy": _CVX + "cls"}),
    MethodSpec("mle", _M + "mle", "exact MLE of the support counts", nonnegative=True,
               sums_to_one=True, backends={"cvxpy": _CVX + "mle"}),
    MethodSpec("ibu", _M + "ibu", "EM (iterative Bayesian update) for the MLE", nonnegative=True,
               sums_to_one=True, default=False, slow=True),
    MethodSpec("oue-zero", _M + "base_cut", "base-cut with alpha = 0.05 (RAPPOR, Calibrate)",
               nonnegative=True, default=False, fixed_options={"alpha": 0.05}),
    MethodSpec("bayes-power", _MODELS + ".power:bayes_power",
               "posterior mean, power-law prior with a posterior on its exponent",
               nonnegative=True, bayesian=True, default=False, slow=True, interval="posterior"),
    MethodSpec("bayes-power-zi", _MODELS + ".power:bayes_power",
               "bayes-power with a point mass at count 0", nonnegative=True, bayesian=True,
               default=False, slow=True, interval="posterior",
               fixed_options={"zero_inflated": True}),
    MethodSpec("bayes-consistent", _MODELS + ".consistent:bayes_consistent",
               "posterior mean, shifted power-law prior conditioned on the total",
               nonnegative=True, sums_to_one=True, bayesian=True, default=False, slow=True,
               color="black", interval="posterior"),
    MethodSpec("bayes-dirichlet", _MODELS + ".dirichlet:bayes_dirichlet",
               "posterior mean, symmetric Dirichlet prior with a hyperprior on its concentration",
               nonnegative=True, sums_to_one=True, bayesian=True, default=False, slow=True,
               minutes=True, interval="posterior"),
    MethodSpec("bayes-hier", _MODELS + ".hierarchical:bayes_hier",
               "posterior mean, hierarchical Dirichlet prior over a grouping of the domain",
               nonnegative=True, sums_to_one=True, bayesian=True, default=False, slow=True,
               minutes=True, interval="posterior"),
    MethodSpec("eb-npmle", "bayesldp.empirical_bayes:eb_npmle",
               "empirical Bayes: NPMLE prior of the counts, posterior mean on the total",
               nonnegative=True, sums_to_one=True, default=False, interval="posterior"),
    MethodSpec("oracle-bayes", "bayesldp.empirical_bayes:oracle_bayes",
               "REFERENCE ONLY: posterior mean with the true count histogram as prior",
               nonnegative=True, sums_to_one=True, default=False, needs_truth=True,
               interval="posterior"),
)
# fmt: on

for _spec in BUILTIN:
    register_method(_spec)
