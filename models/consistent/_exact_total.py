"""The exact total of ``bayes-consistent``: the probability that the counts sum to ``n``.

:class:`Problem` holds the count estimates and their noise; :func:`saddle_point` and
:func:`summaries` give the saddle-point (exponential-tilting) approximation of the
probability of the total, :class:`ExactTotal` the exact convolution on small problems,
and :func:`log_target` the log posterior of the prior's parameters ``(s, log c)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize
from scipy.special import logsumexp

from bayesldp._draws import cached_rows, row_generator
from bayesldp.models._chebyshev import lagrange_weights
from bayesldp.models._counts import (
    EXACT_MAX_N,
    EXACT_WORK,
    TARGET_SPAN,
    CountGrid,
    ItemMoments,
    item_nodes,
    log_prior_mass,
)
from bayesldp.models._node_sums import LOG_SQRT_2PI, NodeWindows


@dataclass(frozen=True)
class Problem:
    """What the model conditions on: count estimates, noise, and the quadrature grid.

    ``nodes`` cover the estimates widened by ``span`` (the log target's saddle point is
    searched within it; beyond it the target is continued by a tilted normal term)
    and ``weights`` turn sums over items into sums over nodes
    (:func:`lagrange_weights`); ``windows`` are the nodes' windows of cells, which the
    node sums of every prior share (:class:`NodeWindows`). ``exact`` says whether
    ``P(sum x = n)`` is computed by exact convolution over every count
    (``d * (n + 1) <= EXACT_WORK`` and ``n <= EXACT_MAX_N``).
    """

    y: np.ndarray
    sigma_c: float
    n: int
    grid: CountGrid
    nodes: np.ndarray | None = None
    weights: np.ndarray | None = None
    span: float = 0.0
    exact: bool = False
    windows: NodeWindows | None = None

    @classmethod
    def from_counts(
        cls, y: np.ndarray, sigma_c: float, n: int, exact: bool | None = None
    ) -> Problem:
        r"""Set up the grid, nodes and weights for count estimates ``y``.

        ``exact=None`` chooses exact convolution for small problems (see above).

        Parameters
        ----------
        y : numpy.ndarray
            Count estimates :math:`n \tilde f_v`.
        sigma_c : float
            Noise standard deviation in counts.
        n : int
            Number of users.
        exact : bool, optional
            Force (``True``) or forbid (``False``) the exact computation of the total's
            probability; None chooses it when ``d (n + 1) <= EXACT_WORK`` and
            ``n <= EXACT_MAX_N``.
        """
        y = np.asarray(y, dtype=float)
        sigma_c, n = float(sigma_c), int(n)
        span = TARGET_SPAN * sigma_c
        nodes = item_nodes(float(y.min()) - span, float(y.max()) + span, sigma_c)
        if exact is None:
            exact = y.size * (n + 1) <= EXACT_WORK and n <= EXACT_MAX_N
        grid = CountGrid.build(n, sigma_c)
        return cls(
            y, sigma_c, n, grid, nodes, lagrange_weights(y, nodes), span, bool(exact),
            NodeWindows.build(grid.x, sigma_c, nodes),
        )  # fmt: skip

    @property
    def d(self) -> int:
        """Number of items."""
        return int(self.y.size)

    def moments(self, s: float, c: float, pad: float = 0.0) -> ItemMoments:
        """Item splines for prior ``(s, c)`` covering ``y`` widened by ``pad`` counts.

        With ``pad <= span`` the problem's own nodes are used (they cover ``span``).

        Parameters
        ----------
        s, c : float
            Exponent and scale of the prior.
        pad : float, default 0.0
            Widening of the estimates' range on each side, in counts.
        """
        lm = log_prior_mass(self.grid, s, c)
        lo, hi = float(self.y.min()) - pad, float(self.y.max()) + pad
        if self.nodes is not None and pad <= self.span:
            return ItemMoments(
                self.grid, lm, self.sigma_c, lo, hi, nodes=self.nodes, windows=self.windows
            )
        return ItemMoments(self.grid, lm, self.sigma_c, lo, hi)


@dataclass(frozen=True)
class Saddle:
    """The saddle point of the total: shift, log target and the total's tilted moments."""

    shift: float
    log_target: float
    mean: float
    var: float


def saddle_point(problem: Problem, mom: ItemMoments, span: float | None = None) -> Saddle:
    r"""Saddle-point approximation to the log target (see :func:`log_target`).

    Tilting every item's posterior by :math:`e^{\lambda x}` is evaluating it at the
    shifted estimate :math:`y_v + \delta`, :math:`\delta = \lambda\sigma_c^2`, so the
    cumulant generating function of the total is
    :math:`K(\lambda) = \sum_v [A(y_v + \delta) - A(y_v)] + \lambda \sum_v y_v
    + d\,\delta^2 / 2\sigma_c^2`, with :math:`A` the log evidence. The shift solves
    :math:`K'(\lambda) = n` (searched within ``problem.span``; beyond it the normal
    approximation of the distribution tilted to the end of the range is used, which
    is continuous with the saddle point). ``span`` (``problem.span`` by default) must
    not exceed what ``mom`` covers.

    Parameters
    ----------
    problem : Problem
        A problem from :meth:`Problem.from_counts` (with nodes and weights).
    mom : ItemMoments
        The item splines of one prior, covering the estimates widened by ``span``.
    span : float, optional
        Search the shift within ``+-span`` counts; ``problem.span`` by default.
    """
    w, nodes, sc, n = problem.weights, problem.nodes, problem.sigma_c, problem.n
    assert w is not None and nodes is not None, "a Problem from Problem.from_counts"
    active = w != 0
    wa, na = w[active], nodes[active]

    # at shift 0 on the problem's own nodes the exact node values are used
    own = mom.nodes is nodes or (mom.nodes.shape == nodes.shape and np.all(mom.nodes == nodes))

    def total_mean(shift: float) -> float:
        if shift == 0.0 and own:
            return float(wa @ mom.node_mean[active])
        return float(wa @ np.exp(mom._log_mean(na + shift)))

    span = problem.span if span is None else float(span)
    lo, hi = total_mean(-span) - n, total_mean(span) - n
    if lo > 0:
        shift = -span
    elif hi < 0:
        shift = span
    else:
        shift = optimize.brentq(
            lambda h: total_mean(h) - n, -span, span, xtol=1e-10 * sc, rtol=1e-14
        )
    if shift == 0.0 and own:
        at_nodes = (mom.node_log_ev, mom.node_mean, mom.node_var)
        a, mean, var = (float(wa @ v[active]) for v in at_nodes)
    else:
        z = na + shift
        a = float(wa @ mom._log_ev(z))
        mean = float(wa @ np.exp(mom._log_mean(z)))
        var = float(wa @ np.exp(mom._log_var(z)))
    lam = shift / sc**2
    value = (
        a + lam * (float(problem.y.sum()) - n) + problem.d * shift**2 / (2 * sc**2)
        - 0.5 * math.log(2 * math.pi * var) - 0.5 * (n - mean) ** 2 / var
    )  # fmt: skip
    return Saddle(float(shift), float(value), mean, var)


def summaries(problem: Problem, s: float, log_c: float) -> tuple[float, float, float]:
    """Total log evidence ``T``, and mean ``M`` and variance ``V`` of the total count.

    Parameters
    ----------
    problem : Problem
        A problem from :meth:`Problem.from_counts` (with nodes and weights).
    s : float
        The prior's exponent.
    log_c : float
        Log of the prior's scale.
    """
    mom = problem.moments(s, math.exp(log_c))
    w = problem.weights
    return (
        float(w @ mom.node_log_ev),
        float(w @ mom.node_mean),
        float(w @ mom.node_var),
    )


class ExactTotal:
    r"""The item posteriors over every count ``0..n`` and their sum, exactly (small cases).

    Each item's posterior is tilted by :math:`e^{\lambda x}` so that the tilted means
    add up to ``n`` (which changes nothing once the total is conditioned on, and keeps
    :math:`P(\sum x = n)` in the bulk of the tilted sum's law, where convolution is
    accurate), then the items are convolved one by one, truncated at ``n``.

    Attributes
    ----------
    log_evidence : numpy.ndarray
        Per item, :math:`\log p(y_v \mid s, c)`.
    log_total : float
        :math:`\log P(\sum_v x_v = n \mid y, s, c)` under the items' posteriors.
    q : numpy.ndarray
        Tilted item posteriors, shape ``(d, n + 1)``, rows summing to 1.
    suffix : numpy.ndarray
        ``suffix[v]`` is the (rescaled) law of :math:`x_v + \dots + x_{d-1}` on ``0..n``;
        ``suffix[d]`` is a point mass at 0.
    """

    def __init__(self, y: np.ndarray, sigma_c: float, n: int, s: float, c: float) -> None:
        self.log_evidence, q, log_z, lam = _tilted_item_posteriors(y, sigma_c, n, s, c)
        self.q, self.lam = q, lam
        d = q.shape[0]
        suffix = np.zeros((d + 1, n + 1))
        suffix[d, 0] = 1.0
        log_scale = 0.0
        for v in range(d - 1, -1, -1):
            # direct convolution: sums of positive products, accurate over any range
            row = np.convolve(suffix[v + 1], q[v])[: n + 1]
            top = row.max()
            suffix[v] = row / top
            log_scale += math.log(top)
        self.suffix = suffix
        p_n = suffix[0, n]
        self.log_total = (
            _untilted(math.log(p_n) + log_scale, log_z, lam, n) if p_n > 0 else -math.inf
        )

    def means(self) -> np.ndarray:
        r""":math:`E[x_v \mid y, \sum x = n]` for every item."""
        q, suffix = self.q, self.suffix
        d, n1 = q.shape
        n = n1 - 1
        k = np.arange(n1)
        prefix = np.zeros(n1)
        prefix[0] = 1.0
        out = np.empty(d)
        for v in range(d):
            others = np.convolve(prefix, suffix[v + 1])[:n1]
            w = q[v] * others[n - k]
            out[v] = (w @ k) / w.sum()
            prefix = np.convolve(prefix, q[v])[:n1]
            prefix /= prefix.max()
        return out

    def sample(self, u: np.ndarray) -> np.ndarray:
        r"""Count vectors summing to ``n`` drawn exactly from the conditioned posterior.

        ``u`` holds uniforms of shape ``(rows, d)``; item ``v`` is drawn given the
        items before it, from :math:`q_v(k)\,\mathrm{suffix}_{v+1}(r - k)`, ``r`` the
        users left.

        Parameters
        ----------
        u : numpy.ndarray
            Uniforms in [0, 1), shape ``(rows, d)``.
        """
        q, suffix = self.q, self.suffix
        d, n1 = q.shape
        rows = u.shape[0]
        left = np.full(rows, n1 - 1)
        out = np.empty((rows, d))
        k = np.arange(n1)
        for v in range(d):
            idx = left[:, None] - k[None, :]
            w = np.where(idx >= 0, q[v][None, :] * suffix[v + 1][np.maximum(idx, 0)], 0.0)
            cdf = np.cumsum(w, axis=1)
            pick = (cdf < u[:, v : v + 1] * cdf[:, -1:]).sum(axis=1)
            pick = np.minimum(pick, left)
            out[:, v] = pick
            left = left - pick
        return out


def _tilted_item_posteriors(
    y: np.ndarray, sigma_c: float, n: int, s: float, c: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    r"""Return the items' log evidence and posteriors on ``0..n``, tilted: means sum to ``n``.

    Returns ``(log_evidence, q, log_z, lam)``: ``q[v]`` is item ``v``'s posterior times
    :math:`e^{\lambda x}`, normalised, and ``log_z[v]`` the log of that normaliser.
    """
    x = np.arange(n + 1, dtype=float)
    lp = -s * np.log1p(x / c)
    lp -= logsumexp(lp)
    lw = lp[None, :] - (x[None, :] - y[:, None]) ** 2 / (2 * sigma_c**2)
    lw -= math.log(sigma_c) + LOG_SQRT_2PI
    q, log_evidence = _normalised_exp(lw)
    log_post = lw  # (in place: lw is not used again)
    log_post -= log_evidence[:, None]

    def tilted(lam: float) -> tuple[np.ndarray, np.ndarray]:
        return _normalised_exp(log_post + lam * x[None, :]) if lam else (q, np.zeros(y.size))

    lam = 0.0
    if y.size > 1:
        lam = _solve_tilt(tilted, x, n, 1.0 / max(sigma_c, 1.0))
    q, log_z = tilted(lam)
    return log_evidence, q, log_z, lam


def _untilted(log_p_n: float, log_z: np.ndarray, lam: float, n: int) -> float:
    r""":math:`\log P(\sum x = n)` under the item posteriors, from that under the tilted ones.

    Tilting each posterior by :math:`e^{\lambda x} / z_v` multiplies the law of the sum
    at ``n`` by :math:`e^{\lambda n} / \prod_v z_v`; this undoes it.
    """
    return log_p_n + float(log_z.sum()) - lam * n


def _normalised_exp(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``exp(t)`` normalised to sum to 1, and each row's log of the sum.

    One exponential per element (``scipy.special.logsumexp`` followed by ``exp`` takes
    two, and this sits in the exact target's innermost loop).
    """
    top = t.max(axis=1)
    e = t - top[:, None]
    np.exp(e, out=e)
    total = e.sum(axis=1)
    e /= total[:, None]
    return e, top + np.log(total)


def _log_total_probability(q: np.ndarray, n: int) -> float:
    """Log of the probability that independent counts with laws ``q`` (rows) sum to ``n``.

    Pairwise FFT convolutions, all pairs of a level at once, truncated at ``n`` (every
    count is non-negative, so counts above ``n`` never come back). FFT rounding is
    absolute, about 1e-16 of each law's peak, and the rows are tilted so that ``n`` is
    the mean of the sum: the products that make up the value at ``n`` pair each half's
    bulk with the other's, so the value keeps ~13 significant digits
    (:class:`ExactTotal`'s direct convolution is the reference in the tests).
    """
    from scipy import fft

    size = fft.next_fast_len(2 * n + 1, real=True)  # no wrap-around of two laws on 0..n
    top = q.max(axis=1)
    laws = q / top[:, None]
    log_scale = float(np.log(top).sum())
    while laws.shape[0] > 1:
        pairs = laws.shape[0] // 2
        spectra = fft.rfft(laws[: 2 * pairs], n=size, axis=1)
        paired = fft.irfft(spectra[0::2] * spectra[1::2], n=size, axis=1)[:, : n + 1]
        np.maximum(paired, 0.0, out=paired)
        top = paired.max(axis=1)
        paired /= top[:, None]
        log_scale += float(np.log(top).sum())
        laws = np.vstack([paired, laws[2 * pairs :]])
    p_n = float(laws[0, n])
    return math.log(p_n) + log_scale if p_n > 0 else -math.inf


def _solve_tilt(tilted, x: np.ndarray, n: int, scale: float) -> float:
    """Find the tilt whose item means add up to ``n``: Newton steps inside a bracket.

    The bracket is grown geometrically from ``scale`` until it holds the root. A Newton
    step that leaves the bracket, or one after a step that did not halve the error, is
    replaced by bisection (the sum of the means is increasing in the tilt, so Newton
    from the convex side can overshoot: bisecting only then keeps Newton's quadratic
    convergence near the root).
    """
    lam, lo, hi, step = 0.0, -math.inf, math.inf, scale
    last = math.inf
    for _ in range(400):
        p, _ = tilted(lam)
        mean_each = p @ x
        f = float(mean_each.sum()) - n
        var = float((p @ (x * x) - mean_each**2).sum())
        if abs(f) <= 1e-10 * max(1.0, math.sqrt(max(var, 0.0))):
            return lam
        if f < 0:
            lo = lam
        else:
            hi = lam
        newton = lam - f / var if var > 0 else math.nan
        if math.isfinite(lo) and math.isfinite(hi):
            if hi - lo <= 1e-15 * max(1.0, abs(lam)):
                return lam
            slow = abs(f) > 0.5 * last
            new = newton if lo < newton < hi and not slow else 0.5 * (lo + hi)
        else:
            new = lam + (step if f < 0 else -step)
            step *= 2.0
            if lo < newton < hi and abs(newton - lam) < abs(new - lam):
                new = newton
        last = abs(f)
        lam = new
    return lam


def log_target(problem: Problem, s: float, log_c: float) -> float:
    r"""Log-likelihood of the parameters given the estimates and the known total.

    .. math::

        G(s, c) = \sum_v \log p(y_v \mid s, c)
            + \log P\big(\textstyle\sum_v x_v = n \mid y, s, c\big)

    The second term is the probability that counts drawn from the items' posteriors add
    up to ``n``: exact (convolution over every count, :class:`ExactTotal`) when
    ``problem.exact``, otherwise the saddle-point approximation
    (:func:`saddle_point`), whose relative error is :math:`O(1/d)`.

    Parameters
    ----------
    problem : Problem
        The count estimates, noise and total.
    s : float
        The prior's exponent.
    log_c : float
        Log of the prior's scale.
    """
    if problem.exact:
        n = problem.n
        log_ev, q, log_z, lam = _tilted_item_posteriors(
            problem.y, problem.sigma_c, n, s, math.exp(log_c)
        )
        log_total = _untilted(_log_total_probability(q, n), log_z, lam, n)
        return float(log_ev.sum() + log_total)
    return saddle_point(problem, problem.moments(s, math.exp(log_c))).log_target


@dataclass(frozen=True)
class ExactTotalDraws:
    """Exact draws of the counts given ``sum x = n`` (small problems; an ``Uncertainty``).

    Row ``i`` uses point ``i % len(points)`` (an :class:`ExactTotal`) and draws the items
    one after another given those before (:meth:`ExactTotal.sample`). Rows are generated
    on first use and kept like :class:`ItemPosteriorDraws`' rows.
    """

    points: tuple[ExactTotal, ...]
    n: int
    seed: int
    n_draws: int
    kind: str = "posterior"
    _cache: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    def sample(self, start: int, stop: int) -> np.ndarray:
        """Draws ``start .. stop - 1``, read-only, shape ``(stop - start, d)``.

        Parameters
        ----------
        start, stop : int
            First draw and one past the last, ``0 <= start <= stop <= n_draws``.
        """
        d = self.points[0].q.shape[0]
        return cached_rows(self._cache, self._rows, start, stop, self.n_draws, d)

    def _rows(self, start: int, stop: int) -> np.ndarray:
        d = self.points[0].q.shape[0]
        out = np.empty((stop - start, d))
        for j, i in enumerate(range(start, stop)):
            u = row_generator(self.seed, i).random((1, d))
            out[j] = self.points[i % len(self.points)].sample(u)[0] / self.n
        return out
