r"""Posterior draws of the frequency vector behind ``eb-npmle``'s and ``oracle-bayes``' intervals.

Two kinds of :class:`bayesldp.estimate.Uncertainty`: the plug-in posterior under a fixed
discrete prior (:class:`DiscretePosteriorDraws`), and a parametric bootstrap that refits
the prior (:class:`BootstrapPosteriorDraws`). Row ``i`` of either has its own seeded
generator, so it is the same whatever chunk it is asked in; rows are generated on first
use and kept while they fit the row cache (:func:`bayesldp.estimate.cached_rows`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from bayesldp._draws import cached_rows, row_generator
from bayesldp._threads import limit_threads
from bayesldp._validation import check_int
from bayesldp.empirical_bayes._grid import support_probability
from bayesldp.empirical_bayes._likelihood import count_likelihood
from bayesldp.empirical_bayes._npmle import PriorSettings, fit_prior
from bayesldp.empirical_bayes._posterior import PosteriorTable, tilted_posterior
from bayesldp.measurement import Measurement
from bayesldp.oracles._likelihood import likelihood_kind


@dataclass(frozen=True)
class DiscretePosteriorDraws:
    """Plug-in posterior draws under a fixed discrete prior (an ``Uncertainty``).

    Row ``i`` draws every item's count from its (tilted) discrete posterior and
    conditions the vector on the total (:meth:`PosteriorTable.draw`), from its own seed
    ``SeedSequence(seed, spawn_key=(i,))``: the same whatever chunk it is asked in. The
    rows are generated on first use and kept while they fit the row cache; larger sets
    of draws are generated chunk by chunk at every query
    (:func:`bayesldp.estimate.cached_rows`).

    The prior is treated as known. That is right for ``oracle-bayes``; for an estimated
    prior it ignores the estimate's uncertainty, and an item alone in its region of
    counts (the NPMLE puts an atom at its own estimate) gets an interval of zero width.
    """

    table: PosteriorTable
    n: int
    seed: int
    n_draws: int
    kind: str = "posterior"
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def sample(self, start: int, stop: int) -> np.ndarray:
        """Draws ``start .. stop - 1`` of the frequency vector, shape ``(stop - start, d)``.

        Read-only (see :class:`bayesldp.estimate.Uncertainty`).

        Parameters
        ----------
        start, stop : int
            First draw and one past the last, ``0 <= start <= stop <= n_draws``.

        Returns
        -------
        numpy.ndarray
            Read-only rows, each on the simplex.
        """
        d = self.table.item_row.size
        return cached_rows(self._cache, self._rows, start, stop, self.n_draws, d)

    def _rows(self, start: int, stop: int) -> np.ndarray:
        out = np.empty((stop - start, self.table.item_row.size))
        for i in range(start, stop):
            out[i - start] = self.table.draw(row_generator(self.seed, i), self.n)
        return out


def simulate_support_counts(
    m: Measurement, x: np.ndarray, likelihood: str, rng: np.random.Generator
) -> np.ndarray:
    r"""Support counts of a bootstrap replicate whose items have true counts ``x``.

    ``binomial``: :math:`c_v \sim \mathrm{Binomial}(n, \pi_v)` with
    :math:`\pi_v = q + (p - q) x_v / n` (the likelihood of the fit); ``gaussian``:
    :math:`\mathrm{Binomial}(x_v, p) + \mathrm{Binomial}(n - x_v, q)` (the law given the
    counts). For an oracle whose users each support exactly one item (GRR: a
    multinomial likelihood) the counts must add up to ``n``, so they are drawn as one
    :math:`\mathrm{Multinomial}(n, \pi / \sum_u \pi_u)` whichever the likelihood (``x``
    is drawn item by item and need not add up to ``n``).

    Parameters
    ----------
    m : Measurement
        The observed measurement (``n``, ``p``, ``q``, oracle).
    x : numpy.ndarray of int
        True counts of the replicate, in ``[0, n]``.
    likelihood : {"binomial", "gaussian"}
        The fit's likelihood.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray of int
        One support count per item.
    """
    if likelihood_kind(m, "auto") == "multinomial":
        pi = support_probability(m, x)
        return rng.multinomial(m.n, pi / pi.sum())
    if likelihood == "binomial":
        return rng.binomial(m.n, support_probability(m, x))
    return rng.binomial(x, m.p) + rng.binomial(m.n - x, m.q)


@dataclass(frozen=True)
class BootstrapPosteriorDraws:
    r"""Posterior draws that carry the uncertainty of the estimated prior (an ``Uncertainty``).

    A parametric bootstrap of the empirical-Bayes posterior (Laird and Louis 1987):
    replicate ``b`` draws every item's count from its posterior under :math:`\hat G`,
    simulates support counts from the model (:func:`simulate_support_counts`), refits
    the NPMLE :math:`G^*_b` to them exactly as ``eb_npmle`` does, and keeps the item
    posteriors of the *observed* counts under :math:`G^*_b` (tilted to the total). Row
    ``i`` belongs to replicate ``i mod n_boot`` and is drawn from it as in
    :class:`DiscretePosteriorDraws`. An item alone in its region of counts then varies
    with the refitted atom near it, by about its own noise, instead of sitting at a
    point; items in dense regions keep their plug-in posteriors, which refitting barely
    moves.

    Replicates are fitted on first use (each costs about one ``eb_npmle`` fit) and
    cached; replicate ``b`` and row ``i`` have their own seeds, so a row is the same
    whatever chunk it is asked in. The rows are kept like
    :class:`DiscretePosteriorDraws`' rows (:func:`bayesldp.estimate.cached_rows`).
    """

    measurement: Measurement
    counts: np.ndarray
    table: PosteriorTable
    settings: PriorSettings
    n_boot: int
    seed: int
    n_draws: int
    kind: str = "parametric-bootstrap posterior"
    _tables: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def replicate(self, b: int) -> PosteriorTable:
        """Return the posterior table of replicate ``b`` (fitted on first use).

        Parameters
        ----------
        b : int
            Replicate number, in ``[0, n_boot)``.

        Returns
        -------
        PosteriorTable
            The observed counts' posteriors under the replicate's prior.
        """
        b = check_int(b, "b", minimum=0, maximum=self.n_boot - 1)
        if b not in self._tables:
            self._tables[b] = self._fit(b)
        return self._tables[b]

    def _fit(self, b: int) -> PosteriorTable:
        m, settings = self.measurement, self.settings
        g = row_generator(self.seed, 0, b)
        x = np.clip(np.round(self.table.draw_counts(g)), 0, m.n).astype(np.int64)
        c = simulate_support_counts(m, x, settings.likelihood, g)
        star = Measurement.from_support_counts(c, m.n, m.p, m.q, oracle=m.oracle)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            fit, star_lik = fit_prior(star, settings)
        keep = fit.weights > 0
        lik = count_likelihood(m, star_lik.atoms[keep], settings.likelihood, self.counts)
        post = tilted_posterior(lik, fit.weights[keep], total=float(m.n))
        return PosteriorTable.from_posterior(post)

    def sample(self, start: int, stop: int) -> np.ndarray:
        """Draws ``start .. stop - 1`` of the frequency vector, shape ``(stop - start, d)``.

        Row ``i`` is drawn from replicate ``i mod n_boot``, which is fitted on first use.
        Read-only (see :class:`bayesldp.estimate.Uncertainty`).

        Parameters
        ----------
        start, stop : int
            First draw and one past the last, ``0 <= start <= stop <= n_draws``.

        Returns
        -------
        numpy.ndarray
            Read-only rows, each on the simplex.
        """
        d = self.table.item_row.size
        return cached_rows(self._cache, self._rows, start, stop, self.n_draws, d)

    def _rows(self, start: int, stop: int) -> np.ndarray:
        out = np.empty((stop - start, self.table.item_row.size))
        with limit_threads(1, user_api="blas"):
            for i in range(start, stop):
                table = self.replicate(i % self.n_boot)
                out[i - start] = table.draw(row_generator(self.seed, 1, i), self.measurement.n)
        return out
