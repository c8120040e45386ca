"""The interval type: a 2-tuple ``(lo, hi)`` that says how it was made and around what."""

from __future__ import annotations

__all__ = ["CENTERS", "Interval"]

#: What each kind of interval is built around (:attr:`Interval.centered_on`).
CENTERS: dict[str, str] = {
    "normal": "raw estimate",
    "bootstrap": "method answer",
    "percentile": "bootstrap replicates",
    "posterior": "posterior draws",
}


class Interval(tuple):
    """An interval ``(lo, hi)`` that also says how it was made.

    A 2-tuple (so ``lo, hi = est.interval(...)`` works) with attributes.

    Parameters
    ----------
    lo, hi : float
        The bounds.
    kind : str
        ``"normal"``, ``"bootstrap"``, ``"percentile"`` or ``"posterior"``.
    prob : float
        Nominal coverage.
    center : float
        The point the interval is built around (see ``centered_on``).
    note : str, default ""
        Anything the caller should know: a known undercoverage, or that the method's
        own answer lies outside the interval.
    centered_on : str, optional
        What ``center`` is: ``"raw estimate"`` (normal: the raw unbiased set estimate),
        ``"method answer"`` (bootstrap: the method's answer for the set), ``"bootstrap
        replicates"`` or ``"posterior draws"`` (percentile, posterior: the median of
        the draws' set sums). By default the one of ``kind`` (:data:`CENTERS`).

    Attributes
    ----------
    lo, hi, kind, prob, center, note, centered_on
        As given.
    """

    lo: float
    hi: float
    kind: str
    prob: float
    center: float
    note: str
    centered_on: str

    def __new__(
        cls,
        lo: float,
        hi: float,
        kind: str,
        prob: float,
        center: float,
        note: str = "",
        centered_on: str | None = None,
    ) -> Interval:
        """Build the interval."""
        self = super().__new__(cls, (float(lo), float(hi)))
        self.lo, self.hi = float(lo), float(hi)
        self.kind, self.prob, self.center, self.note = kind, float(prob), float(center), note
        self.centered_on = CENTERS.get(kind, "") if centered_on is None else centered_on
        return self

    def __getnewargs__(self):  # pickling
        """Return the arguments that rebuild the interval when unpickled."""
        return (self.lo, self.hi, self.kind, self.prob, self.center, self.note, self.centered_on)

    def __repr__(self) -> str:
        """Return ``Interval(lo=..., hi=..., kind=..., prob=..., centered_on=...)`` and the note."""
        text = (
            f"Interval(lo={self.lo!r}, hi={self.hi!r}, kind={self.kind!r}, prob={self.prob!r}, "
            f"centered_on={self.centered_on!r}"
        )
        return text + (f", note={self.note!r})" if self.note else ")")

    @property
    def width(self) -> float:
        """``hi - lo``."""
        return self.hi - self.lo
