"""Datasets in a run: loaded once per process, and what to say when one cannot load."""

from __future__ import annotations

from functools import lru_cache

from bayesldp.datasets import Dataset, get_dataset
from bayesldp.datasets._registry import dataset_spec


@lru_cache(maxsize=16)
def load_dataset(spec: str) -> Dataset:
    """Load a dataset by spec (cached per process, so each worker loads it once).

    Synthetic datasets are drawn with their builders' fixed default seed, so the true
    data are the same in every repetition, as in the papers.

    Parameters
    ----------
    spec : str
        A dataset spec, as :func:`bayesldp.datasets.get_dataset` reads it.

    Returns
    -------
    Dataset
    """
    return get_dataset(spec)


def is_real(dataset: str) -> bool:
    """Whether a dataset spec names real (not synthetic) data.

    Parameters
    ----------
    dataset : str
        A dataset spec.
    """
    return dataset_spec(dataset).kind != "synthetic"


def install_hint(specs: list[str]) -> str:
    """Return ``pip install 'bayesldp[EXTRA]'`` for the extras that datasets ``specs`` need.

    Parameters
    ----------
    specs : list of str
        Dataset specs.
    """
    extras = sorted({dataset_spec(s).extra or "data" for s in specs})
    return "pip install " + ", ".join(f"'bayesldp[{e}]'" for e in extras)


def dataset_error(spec: str, err: BaseException) -> str:
    """Say in one line why dataset ``spec`` could not load (naming the extra it needs).

    Parameters
    ----------
    spec : str
        The dataset spec.
    err : BaseException
        What loading it raised.
    """
    if isinstance(err, ImportError):
        extra = dataset_spec(spec).extra
        hint = f" (pip install 'bayesldp[{extra}]')" if extra else ""
        return f"dataset {spec!r} needs a package that is not installed{hint}"
    text = str(err)
    return text if text.startswith("dataset") else f"dataset {spec!r}: {text}"
