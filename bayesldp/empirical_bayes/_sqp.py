r"""The NPMLE by active-set sequential quadratic programming (the default solver).

In the manner of mixsqp (Kim, Carbonetto, Stephens and Anitescu 2020): Newton steps on
the atoms that carry weight, with a nonnegativity-constrained quadratic subproblem
solved by a primal active-set method and a backtracking line search, and atoms added
wherever the KKT condition is violated on the whole grid (the support-reduction idea of
Groeneboom, Jongbloed and Wellner 2008). The Hessian is only ever formed on the
support (tens of atoms), so a solve costs a few matrix-vector products with the full
likelihood matrix.
"""

from __future__ import annotations

import numpy as np

from bayesldp.empirical_bayes._likelihood import CountLikelihood


def start_weights(lik: CountLikelihood, sd: np.ndarray | None = None) -> np.ndarray:
    """Return starting weights: the histogram of the items' maximum-likelihood atoms, thinned.

    Every row then has an atom near its best one in the support, so no item starts
    with a tiny marginal likelihood (which would make the Hessian useless). Atoms
    closer than half a noise standard deviation ``sd`` to the previous kept atom are
    merged into it: the start then has tens of atoms, not hundreds, and the first
    quadratic subproblem does not spend its time dropping them one by one.

    Parameters
    ----------
    lik : CountLikelihood
        The likelihood matrix.
    sd : numpy.ndarray, optional
        Noise standard deviation at each atom; without it no atoms are merged.

    Returns
    -------
    numpy.ndarray
        Weights on the simplex, one per atom.
    """
    best = np.argmax(lik.matrix, axis=1)
    w = np.bincount(best, weights=lik.multiplicity, minlength=lik.atoms.size)
    if sd is not None:
        idx = np.flatnonzero(w)
        keep = idx[0]
        for k in idx[1:]:
            if lik.atoms[k] - lik.atoms[keep] < 0.5 * sd[keep]:
                w[keep] += w[k]
                w[k] = 0.0
            else:
                keep = k
    return w / w.sum()


def qp_simplex(
    hess: np.ndarray, lin: np.ndarray, start: np.ndarray, max_iter: int = 1000
) -> tuple[np.ndarray, bool]:
    """Minimise ``u H u / 2 - lin . u`` subject to ``sum(u) = sum(start)``, ``u >= 0``.

    A primal active-set method (Nocedal and Wright, Algorithm 16.3) from the feasible
    point ``start``: solve the equality-constrained problem on the free variables;
    if that leaves the feasible set, step to the boundary and fix the variable that
    reaches zero; otherwise free the fixed variable with the most negative multiplier,
    or stop when there is none.

    Parameters
    ----------
    hess : numpy.ndarray
        Symmetric positive semi-definite matrix ``H``, shape ``(s, s)``.
    lin : numpy.ndarray
        Linear term, shape ``(s,)``.
    start : numpy.ndarray
        Feasible starting point (non-negative), shape ``(s,)``.
    max_iter : int, default 1000
        Most active-set changes.

    Returns
    -------
    tuple of (numpy.ndarray, bool)
        The minimiser and whether the method finished.
    """
    total = float(start.sum())
    u = start.copy()
    free = u > 0
    ridge = 1e-13 * float(np.abs(np.diag(hess)).max())
    for _ in range(max_iter):
        idx = np.flatnonzero(free)
        nf = idx.size
        kkt = np.empty((nf + 1, nf + 1))
        kkt[:nf, :nf] = hess[np.ix_(idx, idx)]
        kkt[np.arange(nf), np.arange(nf)] += ridge
        kkt[:nf, nf] = 1.0
        kkt[nf, :nf] = 1.0
        kkt[nf, nf] = 0.0
        rhs = np.append(lin[idx], total)
        try:
            sol = np.linalg.solve(kkt, rhs)
        except np.linalg.LinAlgError:
            sol = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
        z, nu = sol[:nf], sol[nf]
        if z.min() >= 0:
            u = np.zeros_like(u)
            u[idx] = z
            fixed = np.flatnonzero(~free)
            if fixed.size == 0:
                return u, True
            mult = hess[fixed] @ u - lin[fixed] + nu
            j = int(np.argmin(mult))
            if mult[j] >= -1e-13 * float(np.abs(lin).max()):
                return u, True
            free[fixed[j]] = True
            continue
        uf = u[idx]
        neg = np.flatnonzero(z < 0)
        ratios = uf[neg] / (uf[neg] - z[neg])
        j = int(np.argmin(ratios))
        u[idx] = uf + ratios[j] * (z - uf)
        block = idx[neg[j]]
        u[block] = 0.0
        np.maximum(u, 0.0, out=u)
        free[block] = False
    return u, False


def solve_sqp(
    lik: CountLikelihood, tol: float, max_iter: int, start: np.ndarray | None
) -> tuple[np.ndarray, int, dict]:
    """Maximise the marginal log-likelihood by active-set SQP (see the module notes).

    Parameters
    ----------
    lik : CountLikelihood
        The likelihood matrix.
    tol : float
        Stop when the relative KKT gap is at most ``tol``.
    max_iter : int
        Most outer iterations (each ends with a check of the whole grid).
    start : numpy.ndarray, optional
        Starting weights (non-negative); by default :func:`start_weights` unthinned.

    Returns
    -------
    tuple of (numpy.ndarray, int, dict)
        Weights, outer iterations, and ``{"newton_steps", "qp_unfinished"}``.
    """
    mat, mult = lik.matrix, lik.multiplicity
    d = lik.n_items
    w_full = start_weights(lik) if start is None else start / start.sum()
    support = np.flatnonzero(w_full > 0)
    w = w_full[support]
    newton_steps = 0
    qp_unfinished = 0
    outer = 0
    for outer in range(1, max_iter + 1):  # noqa: B007 - reported after the loop
        # Newton (SQP) iterations on the current support
        for _ in range(100):
            ls = mat[:, support]
            lw = ls @ w
            g = ls.T @ (mult / lw)
            hm = ls * (np.sqrt(mult) / lw)[:, None]
            hess = hm.T @ hm / d
            u, finished = qp_simplex(hess, 2 * g / d, w)
            qp_unfinished += not finished
            newton_steps += 1
            step = u - w
            # g . step with sum(step) = 0, written so that it does not cancel: g ~ d
            slope = float((g / d - 1) @ step) * d
            if np.abs(step).max() <= 1e-15 or slope <= -1e-12 * d:
                break
            # backtracking (Armijo) line search; near the optimum the rounding of the
            # log-likelihood (~1e-16 of it) exceeds the predicted gain, hence the slack.
            # A step may also not take more than 99% of any item's marginal likelihood:
            # far from the optimum the quadratic model would otherwise drop atoms that
            # some items need (a start far from the NPMLE can gain overall by doing so,
            # and those items' terms then wreck the next Hessian).
            f0 = float(mult @ np.log(lw))
            slack = 1e-13 * abs(f0)
            t = 1.0
            while True:
                new_lw = ls @ (w + t * step)
                if (new_lw >= 0.01 * lw).all():
                    f1 = float(mult @ np.log(new_lw))
                    if f1 >= f0 + 1e-4 * t * max(slope, 0.0) - slack:
                        break
                if t < 1e-12:
                    break
                t *= 0.5
            if t < 1e-12:
                break
            w = u if t == 1.0 else np.maximum(w + t * step, 0.0)
            keep = w > 0
            support, w = support[keep], w[keep]
            if slope < 1e-3 * tol * d:
                break
        w_full = np.zeros(lik.atoms.size)
        w_full[support] = w / w.sum()
        s = lik.gradient(w_full)
        if s.max() / d - 1 <= tol:
            break
        # add atoms where the KKT condition fails: local maxima of S off the support
        viol = s.copy()
        viol[support] = -np.inf
        pad = np.concatenate([[-np.inf], viol, [-np.inf]])
        peaks = np.flatnonzero((viol > (1 + tol) * d) & (viol >= pad[:-2]) & (viol >= pad[2:]))
        if peaks.size == 0:
            # the violation is on the support itself: Newton iterations must go on
            continue
        support = np.concatenate([support, peaks])
        order = np.argsort(support)
        w = np.concatenate([w, np.zeros(peaks.size)])[order]
        support = support[order]
    info = {"newton_steps": newton_steps, "qp_unfinished": qp_unfinished}
    return w_full, outer, info
