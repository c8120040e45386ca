"""The parametric bootstrap of any registered non-Bayesian method.

Support counts are simulated from the fitted frequencies and the same method is re-run
on every replicate with the same options: through its row function, the very code that
made the estimate run on all replicates at once (:attr:`MethodSpec.rows`), or one
replicate at a time for methods without one (cvxpy backends, ``eb-npmle``, methods of
your own).
"""

from __future__ import annotations

import logging
import time
import warnings
from typing import Any

import numpy as np

from bayesldp._draws import cached_rows, draw_set_sums, row_generator
from bayesldp._validation import check_estimates, check_int, check_rng
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.methods import project_simplex
from bayesldp.methods.registry import MeasurementRows, MethodSpec, get_method, postprocess
from bayesldp.oracles import FrequencyOracle, oracle_class

logger = logging.getLogger(__name__)

__all__ = ["ParametricBootstrap", "bootstrap_counts", "fitted_counts", "rerun_rows"]


def fitted_counts(frequencies: np.ndarray, n: int) -> np.ndarray:
    """Integer user counts summing to ``n``: the bootstrap world of an estimate.

    The frequencies are projected onto the probability simplex (Euclidean projection:
    unchanged for consistent methods; for the others a shift and a cut at 0, which
    keeps the large items' values, unlike a rescaling), then ``n f`` is rounded by
    largest remainders.

    Parameters
    ----------
    frequencies : numpy.ndarray
        An estimate's frequencies, one per item (checked: finite).
    n : int
        Number of users.

    Returns
    -------
    numpy.ndarray of int64
        Non-negative counts summing to ``n``.
    """
    f = project_simplex(check_estimates(frequencies, "frequencies"), 1.0)
    raw = n * f
    x = np.floor(raw).astype(np.int64)
    short = n - int(x.sum())
    if short > 0:
        order = np.argsort(-(raw - x), kind="stable")[:short]
        x[order] += 1
    return x


def bootstrap_counts(m: Measurement, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    r"""One replicate of support counts for users with true counts ``x``.

    The oracle class's ``bootstrap_counts`` (its ``bootstrap_simulation`` says how exact
    it is): GRR exactly, in its mixture form (:meth:`bayesldp.GRR.bootstrap_counts`);
    otherwise :math:`\mathrm{Bin}(x_v, p) + \mathrm{Bin}(n - x_v, q)`
    (:meth:`bayesldp.FrequencyOracle.bootstrap_counts`), the exact joint law for OUE and
    SUE and the exact marginals for OLH, SS and HR (whose dependence between items is
    ignored; subset sums of SS and HR replicates then have the wrong variance, see
    :func:`bayesldp.intervals.subset_count_variances`).

    Parameters
    ----------
    m : Measurement
        The oracle output; its oracle's name picks the class.
    x, rng
        As in :meth:`bayesldp.FrequencyOracle.bootstrap_counts` (``x`` as
        :func:`fitted_counts` returns it).
    """
    return oracle_class(m.oracle, FrequencyOracle).bootstrap_counts(m, x, rng)


def rerun_rows(
    spec: MethodSpec,
    m: Measurement,
    counts: np.ndarray,
    *,
    backend: str = "numpy",
    options: dict[str, Any] | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Re-run a registered method on every row of support counts measured like ``m``.

    Through the method's row function when it has one that takes these options
    (:meth:`MethodSpec.row_function`), else one row at a time through
    :func:`~bayesldp.methods.registry.postprocess`. Warnings of the rows are counted and
    reported once (the first one's message).

    Parameters
    ----------
    spec : MethodSpec
        The method.
    m : Measurement
        Supplies ``n``, ``p``, ``q``, the oracle and epsilon.
    counts : numpy.ndarray
        Support counts, shape ``(B, d)``.
    backend : str, default "numpy"
        The method's backend.
    options : dict, optional
        Options as given to :func:`~bayesldp.methods.registry.postprocess` (the name's
        fixed options are added here, as ``postprocess`` does).

    Returns
    -------
    frequencies : numpy.ndarray
        Shape ``(B, d)``; for ``post-pos`` the raw estimates (its query basis).
    info : dict
        ``vectorised`` (bool) and ``warnings`` (how many rows warned).
    """
    options = dict(options or {})
    counts = np.asarray(counts)
    function = spec.row_function(backend, options)
    if function is not None:
        out, row_info = function(
            MeasurementRows.from_counts(m, counts), **spec.fixed_options, **options
        )
        messages = [str(w) for w in np.atleast_1d(row_info.get("warning", "")) if w]
    else:
        logger.debug("%s (%s) re-runs one replicate at a time", spec.name, backend)
        out = np.empty(counts.shape)
        messages = []
        for i, row in enumerate(counts):
            mi = Measurement.from_support_counts(
                row, m.n, m.p, m.q, oracle=m.oracle, epsilon=m.epsilon
            )
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                est = postprocess(mi, spec.name, backend=backend, **options)
            messages.extend(str(w.message) for w in caught)
            out[i] = est.query_basis if est.query_basis is not None else est.frequencies
    if messages:
        warnings.warn(
            f"{len(messages)} warning(s) while re-running {spec.name!r} on {counts.shape[0]} "
            f"bootstrap replicates; the first: {messages[0]}",
            RuntimeWarning,
            stacklevel=3,
        )
    return out, {"vectorised": function is not None, "warnings": len(messages)}


class ParametricBootstrap:
    """Bootstrap replicates of an Estimate's method (an :class:`~bayesldp.estimate.Uncertainty`).

    Support counts are simulated from the fitted user counts (the Estimate's
    frequencies projected onto the probability simplex and rounded to ``n`` users:
    :func:`fitted_counts`) by :func:`bootstrap_counts`, and the method is re-run on
    every replicate with the options recorded in ``estimate.info["options"]``
    (:func:`rerun_rows`).

    Replicate ``i`` is simulated from ``SeedSequence(seed, spawn_key=(i,))``
    (:func:`bayesldp._draws.row_generator`), so it is the same whatever chunk it is
    asked in. All replicates are computed on first use and kept while the
    ``(n_replicates, d)`` array takes at most
    :data:`bayesldp._draws.ROW_CACHE_MAX_BYTES`; larger ones are regenerated chunk by
    chunk each time (:func:`bayesldp._draws.cached_rows`).

    Parameters
    ----------
    estimate : Estimate
        The estimate to bootstrap (its method must be registered and not Bayesian).
    n_replicates : int, default 200
        Number of replicates ``B``.
    rng : int, numpy.random.Generator or SeedSequence, default 0
        The seed (a Generator is asked for one).
    world : array_like, optional
        Frequencies to simulate from instead of the estimate's (e.g. another method's
        estimate); projected onto the simplex like them.

    Attributes
    ----------
    kind : str
        ``"parametric bootstrap"``.
    n_draws : int
        ``B``.
    fitted : numpy.ndarray
        Frequencies of the bootstrap world (``counts / n``).
    query_rule : str
        The method's query rule: ``"clip-sum"`` for ``post-pos``, whose replicates are
        raw estimates clipped at query time.
    info : dict
        ``vectorised``, ``seconds`` (time to compute all replicates, once cached),
        ``seed``, ``simulation``.
    """

    kind = "parametric bootstrap"

    def __init__(
        self, estimate: Estimate, n_replicates: int = 200, rng: Any = 0, world=None
    ) -> None:
        if not isinstance(estimate, Estimate):
            raise ValueError(f"estimate must be an Estimate, got {type(estimate).__name__}")
        self.n_draws = check_int(n_replicates, "n_replicates", minimum=2)
        try:
            spec = get_method(estimate.method)
        except ValueError:
            raise ValueError(
                f"method {estimate.method!r} is not registered, so it cannot be re-run on "
                "bootstrap replicates; use method='normal'"
            ) from None
        if spec.bayesian:
            raise ValueError(
                f"method 'bootstrap' is not available for the Bayesian method "
                f"{estimate.method!r} (re-running MCMC per replicate); use 'posterior'"
            )
        if isinstance(rng, int | np.integer) and not isinstance(rng, bool) and rng >= 0:
            self.seed = int(rng)
        else:
            self.seed = int(check_rng(rng).integers(2**63))
        self.estimate = estimate
        self.spec = spec
        self.method = estimate.method
        self.backend = str(estimate.info.get("backend", "numpy"))
        self.options = dict(estimate.info.get("options", {}))
        self.query_rule = spec.query_rule
        m = estimate.measurement
        base = estimate.frequencies if world is None else check_estimates(world, "world")
        if base.shape != (m.domain_size,):
            raise ValueError(f"world must have length {m.domain_size}, got {base.size}")
        self.counts_fitted = fitted_counts(base, m.n)
        self.fitted = self.counts_fitted / m.n
        self._cache: dict[str, np.ndarray] = {}
        self.info: dict[str, Any] = {
            "seed": self.seed,
            "simulation": oracle_class(m.oracle, FrequencyOracle).bootstrap_simulation,
            "vectorised": None,
            "seconds": None,
        }

    def counts(self, start: int, stop: int) -> np.ndarray:
        """Simulate the support counts of replicates ``start .. stop - 1``.

        Replicate ``i`` uses its own stream (``SeedSequence(seed, spawn_key=(i,))``), so it
        is the same whatever range it is asked in.

        Parameters
        ----------
        start, stop : int
            First replicate and one past the last, ``0 <= start <= stop``.

        Returns
        -------
        numpy.ndarray
            Shape ``(stop - start, d)``.
        """
        start = check_int(start, "start", minimum=0)
        stop = check_int(stop, "stop", minimum=start)
        m = self.estimate.measurement
        rows = [
            bootstrap_counts(m, self.counts_fitted, row_generator(self.seed, i))
            for i in range(start, stop)
        ]
        return np.stack(rows)

    def _compute(self, start: int, stop: int) -> np.ndarray:
        begin = time.perf_counter()
        counts = self.counts(start, stop)
        out, info = rerun_rows(
            self.spec,
            self.estimate.measurement,
            counts,
            backend=self.backend,
            options=self.options,
        )
        self.info["vectorised"] = info["vectorised"]
        self.info["seconds_last"] = time.perf_counter() - begin
        return out

    def sample(self, start: int, stop: int) -> np.ndarray:
        """Replicates ``start .. stop - 1`` of the method's output, shape ``(rows, d)``.

        For ``post-pos`` these are the raw estimates its queries clip. All replicates are
        computed and cached on the first call unless the ``(n_draws, d)`` array would
        take more than :data:`bayesldp._draws.ROW_CACHE_MAX_BYTES`
        (:func:`bayesldp._draws.cached_rows`); ``info["seconds"]`` is the time that took.

        Parameters
        ----------
        start, stop : int
            First replicate and one past the last, ``0 <= start <= stop <= n_draws``.

        Returns
        -------
        numpy.ndarray
            Read-only, shape ``(stop - start, d)``.
        """
        filling = "rows" not in self._cache
        rows = cached_rows(
            self._cache, self._compute, start, stop, self.n_draws, self.estimate.domain_size
        )
        if filling and "rows" in self._cache:
            self.info["seconds"] = self.info["seconds_last"]
            logger.debug(
                "bootstrap of %s: %d replicates in %.3f s (vectorised: %s)",
                self.method,
                self.n_draws,
                self.info["seconds"],
                self.info["vectorised"],
            )
        return rows

    def set_sums(self, masks: np.ndarray) -> np.ndarray:
        """Every replicate's answer for each set, shape ``(Q, B)`` (``post-pos``: clipped).

        Parameters
        ----------
        masks : numpy.ndarray of bool
            The ``Q`` sets, shape ``(Q, d)``.
        """
        sums = draw_set_sums(self, masks)
        if self.query_rule == "clip-sum":
            sums = np.maximum(sums, 0.0)
        return sums
