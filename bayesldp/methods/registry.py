"""The method registry: every post-processing method, declared once with its metadata.

A method is a function ``f(m: Measurement, *, **options) -> Estimate`` (the
:class:`Method` protocol) plus one :class:`MethodSpec`. The built-in methods are
declared at the bottom of this module with direct references to their functions;
other packages (``bayesldp.models`` among them) declare theirs through the entry-point
group ``bayesldp.methods`` (:data:`ENTRY_POINT_GROUP`): each entry point is a module or
a callable whose loading registers methods with :func:`register_method`. They are
loaded once, on the first lookup or listing. Everything else, the list
:data:`bayesldp.METHODS`, the default set of an experiment, the plot order and panels,
the test sets of consistent or non-negative methods, is derived from these
declarations.

Shared option names mean the same in every method that accepts them:

``rng``
    All randomness: a :class:`numpy.random.Generator` or an integer seed.
``max_iter``
    The largest number of iterations of the method's own main loop (EM steps, active
    set passes, solver iterations). A method stopped by it before converging warns
    (:class:`~bayesldp.errors.ConvergenceWarning`) and returns its last valid iterate,
    or raises :class:`~bayesldp.errors.ConvergenceError` when it has none.
``tol``
    The method's convergence tolerance, scale-free (relative, or on a duality gap).

The cvxpy backends and empirical Bayes are imported on their first use (cvxpy and
SciPy's optimisers are heavy), so that ``import bayesldp`` stays light.
"""

from __future__ import annotations

import inspect
import logging
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from importlib.metadata import entry_points
from types import MappingProxyType, ModuleType
from typing import Any, Protocol

from bayesldp._validation import check_choice
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement, check_measurement
from bayesldp.methods._baseline import (
    base,
    base_cut,
    base_cut_rows,
    base_pos,
    base_pos_rows,
    base_rows,
    post_pos,
)
from bayesldp.methods._deferred import (
    Deferred,
    load_convex_cls,
    load_convex_mle,
    load_convex_mle_apx,
    load_eb_npmle,
    load_oracle_bayes,
)
from bayesldp.methods._likelihood import ibu, ibu_rows, mle, mle_apx, mle_apx_rows, mle_rows
from bayesldp.methods._normalise import (
    cls,
    norm,
    norm_cut,
    norm_cut_rows,
    norm_hyb,
    norm_hyb_rows,
    norm_mul,
    norm_mul_rows,
    norm_rows,
    norm_sub,
    simplex_rows,
)
from bayesldp.methods._power import power, power_ns, power_ns_rows, power_rows
from bayesldp.methods._rows import MeasurementRows, RowFunction

logger = logging.getLogger(__name__)

__all__ = [
    "MeasurementRows",
    "MethodSpec",
    "get_method",
    "method_names",
    "parse_method",
    "postprocess",
    "register_method",
]

#: The entry-point group through which other packages register methods.
ENTRY_POINT_GROUP = "bayesldp.methods"

#: Backends a method may offer besides the default NumPy one.
BACKENDS: tuple[str, ...] = ("numpy", "cvxpy")

_PANELS = ("left", "right", "both")
_QUERY_RULES = ("sum", "clip-sum")
_INTERVALS = ("normal", "bootstrap", "posterior")


class Method(Protocol):
    """The shared signature of every post-processing method."""

    def __call__(self, m: Measurement, /, **options: Any) -> Estimate:
        """Post-process ``m`` into an :class:`~bayesldp.Estimate`."""
        ...


@dataclass(frozen=True)
class MethodSpec:
    """A post-processing method and what is known about it.

    Parameters
    ----------
    name : str
        The name :func:`postprocess` takes, e.g. ``"norm-sub"``.
    target : callable
        The NumPy-backend function ``f(m, **options) -> Estimate``.
    summary : str
        One line: what the method does.
    nonnegative : bool
        Every output frequency is ``>= 0``.
    sums_to_one : bool
        The output frequencies sum to 1.
    bayesian : bool
        A posterior mean with posterior draws (needs PyMC).
    backends : mapping of str to callable
        Other backends, e.g. ``{"cvxpy": convex_cls}``.
    default : bool
        Run by default in experiments and the demo.
    slow : bool
        Seconds or more per call at the papers' setting (left out of quick checks).
    minutes : bool
        Minutes per call at the papers' setting (d = 1024; implies ``slow``): ``--bayes``
        of the demo and the experiments leaves it out; name it to run it.
    grows_with_n : bool
        Its time grows with the number of users (a grid of counts as wide as the noise
        in counts): :func:`~bayesldp.plan` leaves it out of its default candidates.
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
    interval : {"normal", "bootstrap", "posterior"}
        The natural interval of :meth:`Estimate.interval` for this method: the normal
        interval of the raw estimate with its exact variance (default: calibrated for
        every set), the parametric bootstrap of the method, or posterior draws. It decides
        even for an estimate that carries draws (``eb-npmle``'s and the Bayesian models'
        posterior intervals undercover set sums, so theirs is ``"normal"``); an estimate of an
        unregistered method with draws uses them.
    rows : callable, optional
        The method's row function ``rows(batch, **options) -> (frequencies, info)``,
        vectorised over the rows of a :class:`MeasurementRows`; the parametric
        bootstrap runs it on its replicates. Without one, the bootstrap re-runs the
        method one replicate at a time.
    """

    name: str
    target: Callable[..., Estimate]
    summary: str
    nonnegative: bool = False
    sums_to_one: bool = False
    bayesian: bool = False
    backends: Mapping[str, Callable[..., Estimate]] = field(default_factory=dict)
    default: bool = True
    slow: bool = False
    minutes: bool = False
    grows_with_n: bool = False
    query_rule: str = "sum"
    panel: str = "right"
    needs_truth: bool = False
    fixed_options: Mapping[str, Any] = field(default_factory=dict)
    color: str | None = None
    interval: str = "normal"
    rows: RowFunction | None = None

    def __post_init__(self) -> None:
        """Check the fields and freeze ``backends`` and ``fixed_options``."""
        if not isinstance(self.name, str) or not self.name or "@" in self.name:
            raise ValueError(f"name must be a non-empty string without '@', got {self.name!r}")
        if not callable(self.target):
            raise ValueError(
                f"method {self.name!r}: target must be a callable, got {self.target!r}"
            )
        check_choice(self.panel, _PANELS, "panel")
        check_choice(self.query_rule, _QUERY_RULES, "query_rule")
        check_choice(self.interval, _INTERVALS, "interval")
        if self.minutes and not self.slow:
            raise ValueError(f"method {self.name!r}: minutes=True needs slow=True")
        for backend, function in self.backends.items():
            check_choice(backend, BACKENDS[1:], "backend")
            if not callable(function):
                raise ValueError(f"method {self.name!r}: its {backend} backend must be a callable")
        if self.rows is not None and not callable(self.rows):
            raise ValueError(f"method {self.name!r}: rows must be a callable")
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
        """Return the implementing function for ``backend``.

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
            return self.target
        if backend in self.backends:
            return self.backends[backend]
        raise ValueError(
            f"method {self.name!r} has no {backend} backend; it offers "
            f"{', '.join(self.available_backends())}"
        )

    def options(self, backend: str = "numpy") -> tuple[str, ...]:
        """Names of the options the implementation accepts (besides ``fixed_options``).

        Read from the signature of the implementing function, after its first (the
        measurement) parameter; ``*args`` and ``**kwargs`` are not options.

        Parameters
        ----------
        backend : {"numpy", "cvxpy"}, default "numpy"
            Whose implementation to read (:meth:`load`).
        """
        return _option_names(self.load(backend), self.fixed_options)

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

    def row_function(self, backend: str, options: Mapping[str, Any]) -> RowFunction | None:
        """Return the row function that re-runs this method with ``options``, or None.

        None when the backend is not NumPy, the method has no row function, or the row
        function does not take every option given (``ibu``'s iteration options ask for
        the iteration itself): then the method is re-run one row at a time.

        Parameters
        ----------
        backend : str
            The backend the estimate was made with.
        options : mapping
            The options it was made with (without ``fixed_options``).
        """
        if backend != "numpy" or self.rows is None:
            return None
        if set(options) - set(_option_names(self.rows, {})):
            return None
        return self.rows


def _option_names(function: Callable[..., Any], fixed: Mapping[str, Any]) -> tuple[str, ...]:
    """Keyword parameters of ``function`` after its first, without ``fixed`` and ``**``."""
    params = list(inspect.signature(function).parameters.values())[1:]
    return tuple(
        p.name
        for p in params
        if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name not in fixed
    )


_REGISTRY: dict[str, MethodSpec] = {}
_plugins_loaded = False


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
    >>> def halve(m):
    ...     return bayesldp.Estimate(m.estimates / 2, "halve", m)
    >>> _ = bayesldp.register_method(name="halve-example", target=halve, summary="f~ / 2")
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


def _registry() -> dict[str, MethodSpec]:
    """Return the registry, with the entry-point plugins loaded (once, on the first call)."""
    global _plugins_loaded
    if not _plugins_loaded:
        _plugins_loaded = True
        found = entry_points(group=ENTRY_POINT_GROUP)
        for entry in found:
            try:
                loaded = entry.load()
                if callable(loaded) and not isinstance(loaded, ModuleType):
                    loaded()
            except Exception as err:  # a broken plugin must not break the library
                warnings.warn(
                    f"could not load the methods of plugin {entry.name!r} ({entry.value}): "
                    f"{type(err).__name__}: {err}",
                    RuntimeWarning,
                    stacklevel=3,
                )
    return _REGISTRY


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
    registry = _registry()
    try:
        return registry[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; choose one of {', '.join(registry)}") from None


def method_names(**flags: Any) -> tuple[str, ...]:
    """Return registered names in registration order, filtered by spec fields.

    Parameters
    ----------
    **flags
        ``field=value`` pairs (any :class:`MethodSpec` field or property, e.g.
        ``bayesian=True``, ``consistent=True``); a name is kept if its spec matches all.

    Examples
    --------
    >>> from bayesldp import method_names
    >>> "norm-sub" in method_names(consistent=True, bayesian=False)
    True
    """
    specs: Iterable[MethodSpec] = _registry().values()
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
        ``cvxpy`` solves ``cls``, ``norm-sub``, ``mle-apx`` and ``mle`` with a convex
        solver.
    **options
        Method options, e.g. ``alpha=2.0`` for ``base-cut``; ``rng`` for the methods
        that draw random numbers.

    Returns
    -------
    Estimate
        Its ``info["options"]`` holds the options given here and ``info["backend"]``
        the backend, so that the method can be re-run the same way (the parametric
        bootstrap does).

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
# panel first). One declaration each; see MethodSpec for the fields.

_CONVEX_CLS = Deferred(load_convex_cls)

# fmt: off
for _spec in (
    MethodSpec("base", base, "raw unbiased estimates", panel="left", rows=base_rows),
    MethodSpec("base-pos", base_pos, "negatives set to 0", nonnegative=True, panel="left",
               rows=base_pos_rows),
    MethodSpec("post-pos", post_pos, "each query answer clipped at 0", nonnegative=True,
               query_rule="clip-sum", panel="left", rows=base_rows),
    MethodSpec("norm", norm, "shift so the sum is 1", sums_to_one=True, panel="left",
               rows=norm_rows),
    MethodSpec("norm-mul", norm_mul, "clip, then scale to sum 1", nonnegative=True,
               sums_to_one=True, panel="left", rows=norm_mul_rows),
    MethodSpec("norm-sub", norm_sub, "max(f~ + delta, 0) summing to 1", nonnegative=True,
               sums_to_one=True, panel="both", backends={"cvxpy": _CONVEX_CLS},
               rows=simplex_rows),
    MethodSpec("mle-apx", mle_apx, "the long paper's Eq. (14)", nonnegative=True,
               sums_to_one=True, backends={"cvxpy": Deferred(load_convex_mle_apx)},
               rows=mle_apx_rows),
    MethodSpec("base-cut", base_cut, "below T set to 0", nonnegative=True, rows=base_cut_rows),
    MethodSpec("norm-cut", norm_cut, "largest estimates summing to <= 1", nonnegative=True,
               rows=norm_cut_rows),
    MethodSpec("norm-hyb", norm_hyb, "keep above T, norm-sub the rest", nonnegative=True,
               sums_to_one=True, rows=norm_hyb_rows),
    MethodSpec("power", power, "Calibrate: power-law posterior mean", nonnegative=True,
               grows_with_n=True, rows=power_rows),
    MethodSpec("power-ns", power_ns, "norm-sub after power (PowerNS)", nonnegative=True,
               sums_to_one=True, grows_with_n=True, rows=power_ns_rows),
    MethodSpec("cls", cls, "Euclidean projection onto the simplex", nonnegative=True,
               sums_to_one=True, backends={"cvxpy": _CONVEX_CLS}, rows=simplex_rows),
    MethodSpec("mle", mle, "exact MLE of the support counts", nonnegative=True,
               sums_to_one=True, backends={"cvxpy": Deferred(load_convex_mle)}, rows=mle_rows),
    MethodSpec("ibu", ibu, "EM (iterative Bayesian update) for the MLE", nonnegative=True,
               sums_to_one=True, default=False, slow=True, rows=ibu_rows),
    MethodSpec("oue-zero", base_cut, "base-cut with alpha = 0.05 (RAPPOR, Calibrate)",
               nonnegative=True, default=False, fixed_options={"alpha": 0.05},
               rows=base_cut_rows),
    MethodSpec("eb-npmle", Deferred(load_eb_npmle),
               "empirical Bayes: NPMLE prior of the counts, posterior mean on the total",
               nonnegative=True, sums_to_one=True, default=False),
    MethodSpec("oracle-bayes", Deferred(load_oracle_bayes),
               "REFERENCE ONLY: posterior mean with the true count histogram as prior",
               nonnegative=True, sums_to_one=True, default=False, needs_truth=True,
               interval="posterior"),
):
    register_method(_spec)
# fmt: on
