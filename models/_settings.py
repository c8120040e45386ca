"""The sampler settings every Bayesian model takes: one frozen, validated object.

:class:`SamplerSettings` is what :func:`bayesldp.models.fit` and every ready-made model
(``bayes_power``, ``bayes_consistent``, ``bayes_dirichlet``, ``bayes_hier``) accept as
``settings=``; their keyword shortcuts (``draws=500``, ``sampler="pymc"``, ...) go
through :func:`resolve_settings`, so each setting is checked in one place.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from bayesldp._validation import (
    check_bool,
    check_choice,
    check_int,
    check_keywords,
    check_probability,
)

#: NUTS implementations :func:`bayesldp.models.fit` runs through ``pymc.sample``, in the
#: order ``sampler="auto"`` tries them.
SAMPLERS = ("numpyro", "nutpie", "pymc")
#: Also accepted when asked for by name: BlackJAX's NUTS, which ``pymc.sample`` runs with
#: the BlackJAX versions it supports, and ``"numpyro-hmc"``, NumPyro's static HMC with a
#: jittered trajectory length (``bayesldp.models._jax_hmc``), the ready-made Dirichlet
#: models' first choice.
OTHER_SAMPLERS = ("blackjax", "numpyro-hmc")

#: Arguments of ``pymc.sample`` that :func:`bayesldp.models.fit` sets itself, so
#: ``sampler_kwargs`` cannot.
RESERVED_SAMPLER_KWARGS = (
    "draws", "tune", "chains", "cores", "random_seed", "progressbar", "model",
    "compute_convergence_checks", "nuts_sampler", "return_inferencedata", "target_accept",
    "quiet",
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class SamplerSettings:
    """How a Bayesian model is sampled (validated when made; immutable).

    Parameters
    ----------
    draws : int, default 1000
        Draws kept per chain (at least 1).
    tune : int, default 1000
        Warm-up iterations per chain (at least 0).
    chains : int, default 2
        Number of chains (at least 1).
    sampler : {"auto", "numpyro", "nutpie", "blackjax", "pymc", "numpyro-hmc"}
        The NUTS implementation ``pymc.sample`` runs (``nuts_sampler``), or NumPyro's
        static HMC with a jittered length (``"numpyro-hmc"``). ``"auto"``: for a model
        of your own, the first installed of :data:`SAMPLERS` that can run it; for
        bayes-dirichlet and bayes-hier, ``"numpyro-hmc"``; for the two-parameter models
        (``bayes-power``, ``bayes-consistent``), NumPyro's NUTS with vectorised chains.
    target_accept : float, optional
        NUTS's target acceptance probability in (0, 1); None leaves the model's default
        (the sampler's 0.8, or 0.9 for ``bayes-consistent``).
    cores : int, optional
        Chains run in parallel; None for ``min(chains, os.cpu_count())``.
    threads : int or None, default 1
        BLAS/OpenMP threads while sampling; None leaves the libraries' defaults.
    progressbar : bool, default False
        Show the sampler's progress bar.
    sampler_kwargs : mapping, optional
        More keyword arguments for ``pymc.sample`` (e.g. ``{"nuts_sampler_kwargs":
        {"chain_method": "vectorized"}}``), passed through unchecked except that the
        arguments set here (:data:`RESERVED_SAMPLER_KWARGS`) are refused; for
        ``"numpyro-hmc"``, its own (``trajectory_length``, ``jitter``, ``max_steps``,
        ``chain_method``).
    warmup_tree_depth : int, optional
        NumPyro only: the largest NUTS tree depth during warm-up (the draws keep
        NumPyro's 10); the other samplers ignore it.
    clear_jax_caches : bool, default False
        After a JAX sampler (NumPyro, BlackJAX), empty JAX's compilation caches: for long
        loops of fits in one process, whose compiled functions JAX otherwise keeps.

    Raises
    ------
    ValueError
        A setting of the wrong type or out of range, named.
    """

    draws: int = 1000
    tune: int = 1000
    chains: int = 2
    sampler: str = "auto"
    target_accept: float | None = None
    cores: int | None = None
    threads: int | None = 1
    progressbar: bool = False
    sampler_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    warmup_tree_depth: int | None = None
    clear_jax_caches: bool = False

    def __post_init__(self) -> None:
        """Check every setting; store ints as ints and the kwargs read-only."""
        set_ = object.__setattr__
        set_(self, "draws", check_int(self.draws, "draws", minimum=1))
        set_(self, "tune", check_int(self.tune, "tune", minimum=0))
        set_(self, "chains", check_int(self.chains, "chains", minimum=1))
        if not isinstance(self.sampler, str):
            raise ValueError(f"sampler must be a string, got {self.sampler!r}")
        check_choice(self.sampler, ("auto", *SAMPLERS, *OTHER_SAMPLERS), "sampler")
        if self.target_accept is not None:
            set_(self, "target_accept", check_probability(self.target_accept, "target_accept"))
        for name in ("cores", "threads", "warmup_tree_depth"):
            value = getattr(self, name)
            if value is not None:
                set_(self, name, check_int(value, name, minimum=1))
        set_(self, "progressbar", check_bool(self.progressbar, "progressbar"))
        set_(self, "clear_jax_caches", check_bool(self.clear_jax_caches, "clear_jax_caches"))
        kwargs = check_keywords(self.sampler_kwargs, "sampler_kwargs", RESERVED_SAMPLER_KWARGS)
        set_(self, "sampler_kwargs", MappingProxyType(kwargs))


def resolve_settings(
    settings: SamplerSettings | None, options: Mapping[str, Any]
) -> SamplerSettings:
    """Return ``settings`` (default :class:`SamplerSettings`) with ``options`` replaced.

    Parameters
    ----------
    settings : SamplerSettings or None
        The caller's settings object.
    options : mapping
        Keyword shortcuts for fields of :class:`SamplerSettings` (``draws=500``...).

    Returns
    -------
    SamplerSettings
        Validated.

    Raises
    ------
    ValueError
        ``settings`` is not a SamplerSettings, an option is not one of its fields, or a
        value is bad (named).
    """
    if settings is None:
        settings = SamplerSettings()
    elif not isinstance(settings, SamplerSettings):
        raise ValueError(
            f"settings must be a bayesldp.models.SamplerSettings or None, got {settings!r:.80}"
        )
    fields = {f.name for f in dataclasses.fields(SamplerSettings)}
    unknown = sorted(set(options) - fields)
    if unknown:
        raise ValueError(
            f"unknown option {', '.join(unknown)}; the sampler's are {', '.join(sorted(fields))}"
        )
    return dataclasses.replace(settings, **options) if options else settings
