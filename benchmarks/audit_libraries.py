"""Audit the per-user clients of pure-LDP and multi-freq-ldpy (and ours) for epsilon-LDP.

Every frequency-oracle client of the two libraries is run user by user, as a
deployment would run it, on ``--samples`` users holding each value of a small domain
(``--domain-size``, default 5), at epsilon 0.5, 1, 2 and 4; the reports are audited
with :func:`bayesldp.audit.empirical_epsilon` (Clopper-Pearson lower bound at
confidence 0.99, sample splitting). A report is the tuple or array the client returns,
serialised field by field in that order (integers as int64, floats as float64, arrays
in their own dtype): the audit sees everything the client hands to the network.

Events searched besides the raw bytes (each a fixed function of the report and the
pair of inputs ``(a, b)``; for a correct client each contains every report of the
largest likelihood ratio, see ``bayesldp.audit.SupportEvent``):

- GRR/DE and friends: ``(report == a, report == b)``;
- unary encodings (SUE, OUE, longitudinal UE, dBitFlipPM): the entries at ``a`` and ``b``;
- local hashing (BLH, OLH, FastLH, sketch response): does the bucket equal the hash of
  ``a``, of ``b`` (recomputed from the reported seed);
- histogram encoding (Laplace noise): each of the entries at ``a``, ``b`` in
  ``(-inf, 0]``, ``(0, 1)`` or ``[1, inf)``;
- subset selection: membership and slots of ``a`` and ``b``;
- Hadamard mechanism, RAPPOR, CMS, HCMS, private count sketch: whether the reported
  coefficients / bloom bits / sketch entries are those of ``a`` and of ``b``.

Both libraries hash with ``xxhash``; xxhash 4 refuses ``str`` input
("Strings must be encoded before hashing"), which every hash-based client passes. The
script first calls each client once as installed and records whether it runs; those
that crash are then audited with ``xxhash.xxh32``/``xxh64`` wrapped to encode ``str``
as UTF-8, which is what xxhash 3.x did internally (same digests).

Two historical or usage variants are audited too: pure-LDP's ``UEClient._perturb``
before 1.2.0 (its issue #11: the true bit was set with probability ``q + (1-q) p``
instead of ``p``; re-implemented here from the fix's diff), and RAPPOR configured
with ``RAPPORClient.convert_eps_to_f(eps)`` and two hash functions (the library's
recommended number), claiming ``eps``.

Writes ``OUT/libraries.csv`` (one row per library, protocol and epsilon) and
``OUT/libraries.md``. Run::

    python benchmarks/audit_libraries.py --out benchmarks/results/audit

(``pip install -e '.[bench]'``; ``--quick`` for a small run, ``--only NAME`` to select
protocols; finished rows are kept, so an interrupted run resumes.)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import math
import random
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

import bayesldp
from bayesldp._io import markdown_table, write_csv, write_json
from bayesldp.audit import audit_oracle, empirical_epsilon, position_event

EPSILONS = (0.5, 1.0, 2.0, 4.0)

# ---------------------------------------------------------------------------
# randomness and the xxhash shim


def _numba_seeder():
    try:
        from numba import njit
    except ImportError:  # pragma: no cover - multi-freq-ldpy needs numba
        return lambda seed: None

    @njit(cache=False)
    def seed_numba(seed):  # numba keeps its own generator for jitted functions
        np.random.seed(seed)  # noqa: NPY002 - the libraries' global generator

    return seed_numba


_SEED_NUMBA = None


def seed_everything(seed: int) -> None:
    """Seed the global generators the libraries draw from (random, numpy, numba)."""
    global _SEED_NUMBA
    if _SEED_NUMBA is None:
        _SEED_NUMBA = _numba_seeder()
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - the libraries draw from the global generator
    _SEED_NUMBA(seed)


@contextlib.contextmanager
def xxhash_str_shim():
    """Let ``xxhash.xxh32``/``xxh64`` accept ``str`` again, encoding it as UTF-8."""
    import xxhash

    originals = {name: getattr(xxhash, name) for name in ("xxh32", "xxh64")}

    def wrap(func):
        def hashed(data=b"", seed=0):
            if isinstance(data, str):
                data = data.encode("utf-8")
            return func(data, seed=seed)

        return hashed

    for name, func in originals.items():
        setattr(xxhash, name, wrap(func))
    try:
        yield
    finally:
        for name, func in originals.items():
            setattr(xxhash, name, func)


def _xxh32(text: str, seed: int) -> int:
    import xxhash

    return xxhash.xxh32(text.encode("utf-8"), seed=seed).intdigest()


# ---------------------------------------------------------------------------
# events on serialised reports (pair events: (reports, a, b) -> keys)


def eq_event(reports, a, b):
    """GRR-like reports: ``(report == a, report == b)``."""
    r = np.asarray(reports).reshape(len(reports), -1)[:, 0]
    return np.stack([r == a, r == b], axis=1).astype(np.uint8)


eq_event.name = "support"


def coords_event(reports, a, b):
    """Vector reports: the entries at positions ``a`` and ``b``."""
    return np.ascontiguousarray(np.asarray(reports)[:, [a, b]])


coords_event.name = "entries"


def laplace_event(reports, a, b):
    """Histogram encoding: entries at a and b in (-inf, 0], (0, 1) or [1, inf)."""
    r = np.asarray(reports)[:, [a, b]]
    return (np.where(r <= 0, 0, np.where(r >= 1, 2, 1))).astype(np.uint8)


laplace_event.name = "regions"


def adaptive_event(reports, a, b):
    """ADP: GRR value (one column) or a unary vector."""
    r = np.asarray(reports)
    if r.ndim == 1 or r.shape[1] == 1:
        return eq_event(r, a, b)
    return (r[:, [a, b]] > 0).astype(np.uint8)


adaptive_event.name = "support"


def membership_event(reports, a, b):
    """Subset selection: ``(a in report, b in report)``."""
    r = np.asarray(reports)
    return np.stack([(r == a).any(axis=1), (r == b).any(axis=1)], axis=1).astype(np.uint8)


membership_event.name = "support"


def lh_event(g: int, value_of: Callable[[int], int] = lambda v: v):
    """Local hashing, report ``(bucket, seed, ...)``: bucket == xxh32(str(value), seed) % g."""

    def event(reports, a, b):
        r = np.asarray(reports)
        out = np.zeros((r.shape[0], 2), dtype=np.uint8)
        for i, (y, seed) in enumerate(r[:, :2].tolist()):
            out[i, 0] = y == _xxh32(str(value_of(a)), seed) % g
            out[i, 1] = y == _xxh32(str(value_of(b)), seed) % g
        return out

    event.name = "support"
    return event


# ---------------------------------------------------------------------------
# protocol set-ups


@dataclass
class Setup:
    """One configured client: ``privatise(v)`` for a 0-based value, and how to audit it."""

    privatise: Callable[[int], object]
    encode: Callable[[list], object]
    claimed: float
    events: list = field(default_factory=lambda: [None])
    note: str = ""
    domain_size: int | None = None  # if not the run's
    inputs: tuple[int, ...] | None = None  # default: the whole domain


def encode_ints(reports: list) -> np.ndarray:
    """Scalars or tuples of scalars -> int64 array (users x fields)."""
    return np.asarray(reports, dtype=np.int64).reshape(len(reports), -1)


def encode_arrays(reports: list) -> np.ndarray:
    """One array per user, kept in its dtype."""
    return np.stack([np.asarray(r) for r in reports])


def encode_vector_and_ints(reports: list) -> np.ndarray:
    """``(vector, int, ...)`` -> int64 array: the vector's entries then the ints."""
    rows = [np.concatenate([np.asarray(r[0], dtype=np.int64).ravel(), r[1:]]) for r in reports]
    return np.asarray(rows, dtype=np.int64)


def encode_pairs(reports: list) -> np.ndarray:
    """Hadamard mechanism: a list (or zip) of (index, coefficient) pairs -> int64 rows."""
    return np.asarray([np.asarray(list(r), dtype=np.int64).ravel() for r in reports])


def pure_ldp_setups(eps: float, d: int) -> dict[str, Setup]:
    """pure-LDP's clients (inputs are 1-based: the default index mapper is ``x - 1``)."""
    from pure_ldp.core import generate_hash_funcs
    from pure_ldp.frequency_oracles.apple_cms import CMSClient
    from pure_ldp.frequency_oracles.direct_encoding import DEClient
    from pure_ldp.frequency_oracles.hadamard_mechanism import HadamardMechClient
    from pure_ldp.frequency_oracles.hadamard_response import (
        HadamardResponseClient,
        HadamardResponseServer,
    )
    from pure_ldp.frequency_oracles.histogram_encoding import HEClient
    from pure_ldp.frequency_oracles.local_hashing import FastLHClient, LHClient
    from pure_ldp.frequency_oracles.priv_count_sketch import PCSClient
    from pure_ldp.frequency_oracles.rappor import RAPPORClient
    from pure_ldp.frequency_oracles.sketch_response import SketchResponseClient
    from pure_ldp.frequency_oracles.unary_encoding import UEClient

    out: dict[str, Setup] = {}
    de = DEClient(eps, d)
    out["DE (GRR)"] = Setup(lambda v: de.privatise(v + 1), encode_ints, eps, [None, eq_event])
    for name, oue in (("UE (SUE)", False), ("UE (OUE)", True)):
        ue = UEClient(eps, d, use_oue=oue)
        out[name] = Setup(
            lambda v, ue=ue: ue.privatise(v + 1), encode_arrays, eps, [None, coords_event]
        )

        # the pre-1.2.0 perturbation (issue #11): the true bit was OR-ed, not replaced
        def old_perturb(index, ue=ue):
            vec = np.random.choice([1, 0], size=ue.d, p=[ue.q, 1 - ue.q])  # noqa: NPY002
            if random.random() < ue.p:
                vec[index] = 1
            return vec

        out[name + " 1.1.x, before the #11 fix"] = Setup(
            lambda v, f=old_perturb: f(v),
            encode_arrays,
            eps,
            [None, coords_event],
            note="pre-1.2.0 _perturb re-implemented from the fix's diff",
        )
    for name, olh in (("LH (BLH)", False), ("LH (OLH)", True)):
        lh = LHClient(eps, d, use_olh=olh)
        out[name] = Setup(
            lambda v, lh=lh: lh.privatise(v + 1), encode_ints, eps, [None, lh_event(lh.g)]
        )
    flh = FastLHClient(eps, d, k=100, use_olh=True)
    out["FastLH (OLH, 100 seeds)"] = Setup(
        lambda v: flh.privatise(v + 1), encode_ints, eps, [None, lh_event(flh.g)]
    )
    he = HEClient(eps, d)
    out["HE (SHE/THE client)"] = Setup(
        lambda v: he.privatise(v + 1), encode_arrays, eps, [None, laplace_event]
    )
    hr_server = HadamardResponseServer(eps, d)
    hr = HadamardResponseClient(eps, d, hr_server.get_hash_funcs())
    out["HR (Hadamard response)"] = Setup(lambda v: hr.privatise(v + 1), encode_ints, eps)
    hm = HadamardMechClient(eps, d, t=None, use_optimal_t=True)
    out["HM (Hadamard mechanism)"] = Setup(
        lambda v: hm.privatise(v + 1), encode_pairs, eps, [None, hm_event(hm.t)]
    )
    # RAPPOR: epsilon = 2 k ln((1 - f/2) / (f/2)) with k hash functions (its server's formula)
    for name, k_hash, use_convert in (
        ("RAPPOR (1 hash, f = convert_eps_to_f(eps))", 1, True),
        ("RAPPOR (2 hashes, f for eps)", 2, False),
        ("RAPPOR (2 hashes, f = convert_eps_to_f(eps))", 2, True),
    ):
        m, cohorts = 16, 4
        family = [
            [generate_hash_funcs(k_hash * cohorts, m)[c * k_hash + i] for i in range(k_hash)]
            for c in range(cohorts)
        ]
        convert = RAPPORClient(0.5, m, family, num_of_cohorts=cohorts).convert_eps_to_f
        f = convert(eps) if use_convert else 2 / (math.exp(eps / (2 * k_hash)) + 1)
        # (built with f: its update_params(f=...) also resets the hash family to None)
        client = RAPPORClient(f, m, family, num_of_cohorts=cohorts)
        claim = 2 * k_hash * math.log((1 - f / 2) / (f / 2))
        out[name] = Setup(
            lambda v, c=client: c.privatise(v + 1),
            encode_vector_and_ints,
            eps if use_convert else claim,
            [None, rappor_event(family, m)],
            note=f"f = {f:.4g}, its server's epsilon 2k ln((1-f/2)/(f/2)) = {claim:.4g}",
        )
    # CMSServer and PCSServer cannot be built with numpy 2 (np.zeros(None) in their
    # base class); their hash functions are generate_hash_funcs, as the servers make them.
    cms_hashes = generate_hash_funcs(4, 16)
    cms = CMSClient(eps, cms_hashes, 16)
    out["CMS (Apple)"] = Setup(
        lambda v: cms.privatise(v),
        encode_vector_and_ints,
        eps,
        [None, cms_event(cms)],
        note="hash functions from generate_hash_funcs (CMSServer fails under numpy 2)",
    )
    hcms = CMSClient(eps, cms_hashes, 16, is_hadamard=True)
    out["HCMS (Apple)"] = Setup(
        lambda v: hcms.privatise(v),
        encode_ints,
        eps,
        [None, hcms_event(hcms)],
        note="hash functions from generate_hash_funcs (CMSServer fails under numpy 2)",
    )
    pcs_hashes = list(zip(generate_hash_funcs(4, 16), generate_hash_funcs(4, 2), strict=True))
    pcs = PCSClient(eps, 4, 16, pcs_hashes)
    out["PCS (private count sketch)"] = Setup(
        lambda v: pcs.privatise(v),
        encode_vector_and_ints,
        eps,
        [None, pcs_event(pcs)],
        note="hash functions from generate_hash_funcs (PCSServer fails under numpy 2)",
    )
    sr_hashes = generate_hash_funcs(4, 16)
    sr = SketchResponseClient(eps, 16, sr_hashes, lh_k=100)
    out["Sketch response (FastLH inside)"] = Setup(
        lambda v: _flat_sketch(sr.privatise(v + 1)),
        encode_ints,
        eps,
        [None, sketch_response_event(sr, sr_hashes)],
    )
    return out


def _flat_sketch(report) -> tuple[int, int, int]:
    (y, seed), k = report
    return int(y), int(seed), int(k)


def hm_event(t: int):
    """Hadamard mechanism ``(j_1, c_1, ..., j_t, c_t)``: coefficients are those of a, of b."""

    def coeff(v: int, j: np.ndarray) -> np.ndarray:
        bits = np.bitwise_count(np.bitwise_and(np.int64(v), j))
        return np.where(bits % 2 == 0, 1, -1)

    def event(reports, a, b):
        r = np.asarray(reports).reshape(len(reports), t, 2)
        j, c = r[:, :, 0], r[:, :, 1]
        return np.stack(
            [(c == coeff(a, j)).all(axis=1), (c == coeff(b, j)).all(axis=1)], axis=1
        ).astype(np.uint8)

    event.name = "support"
    return event


def rappor_event(family, m: int):
    """RAPPOR ``(bits..., cohort)``: the bits at a's and at b's bloom positions."""

    def event(reports, a, b):
        r = np.asarray(reports)
        bits, cohort = r[:, :m], r[:, m]
        keys = []
        for c in range(len(family)):
            pos = [h(str(v)) for v in (a, b) for h in family[c]]
            keys.append(bits[:, pos])
        chosen = np.stack(keys, axis=0)[cohort, np.arange(r.shape[0])]
        return np.concatenate([cohort[:, None], chosen], axis=1).astype(np.int8)

    event.name = "bloom bits"
    return event


def cms_event(client):
    """CMS ``(v_1..v_m, j)``: the entries at h_j(a) and h_j(b)."""
    m = client.m

    def event(reports, a, b):
        r = np.asarray(reports)
        vec, j = r[:, :m], r[:, m]
        ha = np.array([client.hash_funcs[k](str(a)) for k in range(client.k)])[j]
        hb = np.array([client.hash_funcs[k](str(b)) for k in range(client.k)])[j]
        rows = np.arange(r.shape[0])
        return np.stack([vec[rows, ha], vec[rows, hb]], axis=1).astype(np.int8)

    event.name = "sketch entries"
    return event


def hcms_event(client):
    """HCMS ``(s, j, l)``: does s equal the Hadamard entry of a, of b."""
    from scipy.linalg import hadamard

    had = hadamard(client.m)

    def event(reports, a, b):
        r = np.asarray(reports)
        s, j, col = r[:, 0], r[:, 1], r[:, 2]
        ha = np.array([client.hash_funcs[k](str(a)) for k in range(client.k)])[j]
        hb = np.array([client.hash_funcs[k](str(b)) for k in range(client.k)])[j]
        return np.stack([s == had[col, ha], s == had[col, hb]], axis=1).astype(np.uint8)

    event.name = "support"
    return event


def pcs_event(client):
    """PCS ``(v_1..v_w, j)``: v[h_j(x)] == g_j(x) for x = a, b."""
    w = client.w

    def event(reports, a, b):
        r = np.asarray(reports)
        vec, j = r[:, :w], r[:, w]
        rows = np.arange(r.shape[0])
        out = []
        for x in (a, b):
            h = np.array([pair[0](str(x)) for pair in client.hash_funcs])[j]
            g = 2 * np.array([pair[1](str(x)) for pair in client.hash_funcs])[j] - 1
            out.append(vec[rows, h] == g)
        return np.stack(out, axis=1).astype(np.uint8)

    event.name = "support"
    return event


def sketch_response_event(client, hashes):
    """Sketch response ``(y, seed, k)``: y == FastLH hash of h_k(x) under the seed."""
    g = client.client.g

    def event(reports, a, b):
        r = np.asarray(reports)
        out = np.zeros((r.shape[0], 2), dtype=np.uint8)
        for i, (y, seed, k) in enumerate(r.tolist()):
            for col, x in enumerate((a, b)):
                out[i, col] = y == _xxh32(str(hashes[k](x)), seed) % g
        return out

    event.name = "support"
    return event


def multi_freq_setups(eps: float, d: int) -> dict[str, Setup]:
    """multi-freq-ldpy's client functions (0-based inputs)."""
    from multi_freq_ldpy.long_freq_est.dBitFlipPM import dBitFlipPM_Client
    from multi_freq_ldpy.long_freq_est.L_ADP import L_ADP_Client
    from multi_freq_ldpy.long_freq_est.L_GRR import L_GRR_Client
    from multi_freq_ldpy.long_freq_est.L_LH import L_LH_Client
    from multi_freq_ldpy.long_freq_est.L_OSUE import L_OSUE_Client
    from multi_freq_ldpy.long_freq_est.L_OUE import L_OUE_Client
    from multi_freq_ldpy.long_freq_est.L_SOUE import L_SOUE_Client
    from multi_freq_ldpy.long_freq_est.L_SUE import L_SUE_Client
    from multi_freq_ldpy.pure_frequency_oracles.ADP import ADP_Client
    from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Client
    from multi_freq_ldpy.pure_frequency_oracles.HE import HE_Client
    from multi_freq_ldpy.pure_frequency_oracles.LH import LH_Client
    from multi_freq_ldpy.pure_frequency_oracles.SS import SS_Client
    from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Client

    out: dict[str, Setup] = {
        "GRR": Setup(lambda v: GRR_Client(v, d, eps), encode_ints, eps, [None, eq_event]),
        "UE (SUE)": Setup(
            lambda v: UE_Client(v, d, eps, False), encode_arrays, eps, [None, coords_event]
        ),
        "UE (OUE)": Setup(
            lambda v: UE_Client(v, d, eps, True), encode_arrays, eps, [None, coords_event]
        ),
        "LH (BLH)": Setup(
            lambda v: LH_Client(v, d, eps, False), encode_ints, eps, [None, lh_event(2)]
        ),
        "LH (OLH)": Setup(
            lambda v: LH_Client(v, d, eps, True),
            encode_ints,
            eps,
            [None, lh_event(round(math.exp(eps)) + 1)],
        ),
        "SS": Setup(
            lambda v: SS_Client(v, d, eps),
            encode_arrays,
            eps,
            [None, membership_event, position_event()],
        ),
        "SS (d = 16, inputs 0-3)": Setup(
            lambda v: SS_Client(v, 16, eps),
            encode_arrays,
            eps,
            [None, membership_event, position_event()],
            note="d = 16 so that the subset has k >= 2 items up to eps = 2",
            domain_size=16,
            inputs=(0, 1, 2, 3),
        ),
        "HE (SHE/THE client)": Setup(
            lambda v: HE_Client(v, d, eps), encode_arrays, eps, [None, laplace_event]
        ),
        "ADP (GRR or OUE)": Setup(
            lambda v: ADP_Client(v, d, eps), encode_arrays, eps, [None, adaptive_event]
        ),
        "dBitFlipPM (b = d, 2 bits)": Setup(
            lambda v: dBitFlipPM_Client(v, d, d, 2, eps), encode_arrays, eps, [None, coords_event]
        ),
    }
    # longitudinal protocols: one report (fresh memoization per user) is eps_1-LDP;
    # audited against eps_1 = eps with eps_perm = 2 eps
    perm = 2 * eps
    longitudinal = {
        "L-GRR": (lambda v: L_GRR_Client(v, d, perm, eps), encode_ints, eq_event),
        "L-OUE": (lambda v: L_OUE_Client(v, d, perm, eps), encode_arrays, coords_event),
        "L-SUE": (lambda v: L_SUE_Client(v, d, perm, eps), encode_arrays, coords_event),
        "L-OSUE": (lambda v: L_OSUE_Client(v, d, perm, eps), encode_arrays, coords_event),
        "L-SOUE": (lambda v: L_SOUE_Client(v, d, perm, eps), encode_arrays, coords_event),
        "L-ADP": (lambda v: L_ADP_Client(v, d, perm, eps), encode_arrays, adaptive_event),
        "L-LH (L-OLH)": (
            lambda v: L_LH_Client(v, d, perm, eps, True),
            encode_ints,
            lh_event(l_olh_buckets(perm, eps)),
        ),
    }
    for name, (fn, enc, ev) in longitudinal.items():
        events = [None] if ev is None else [None, ev]
        out[name + " (eps_perm = 2 eps_1)"] = Setup(
            fn, enc, eps, events, note="claimed: eps_1 (one report), eps_perm = 2 eps_1"
        )
    return out


def l_olh_buckets(eps_perm: float, eps_1: float) -> int:
    """Buckets g of multi-freq-ldpy's L-OLH (its optimal g, computed as it does)."""
    e = math.exp
    p, a = eps_perm, eps_1 / eps_perm
    root = math.sqrt(
        e(4 * p)
        - 14 * e(2 * p)
        - 12 * e(2 * p * (a + 1))
        + 12 * e(p * (a + 1))
        + 12 * e(p * (a + 3))
        + 1
    )
    g = (root - e(2 * p) + 6 * e(p) - 6 * e(p * a) + 1) / (6 * (e(p) - e(p * a)))
    return int(max(np.rint(g), 2))


LIBRARIES = {
    "pure-LDP": ("pure-ldp", pure_ldp_setups),
    "multi-freq-ldpy": ("multi-freq-ldpy", multi_freq_setups),
}


# ---------------------------------------------------------------------------
# running


def per_user(setup: Setup):
    """Return a vectorised ``privatize(values, rng)`` that calls the client user by user."""

    def privatize(values, rng):
        seed_everything(int(rng.integers(0, 2**31 - 1)))
        return setup.encode([setup.privatise(int(v)) for v in values])

    return privatize


def runs_as_installed(setup: Setup) -> str:
    """'' if one report can be made with the installed packages, else the error."""
    try:
        setup.encode([setup.privatise(0), setup.privatise(1)])
    except Exception as err:
        return f"{type(err).__name__}: {err}"
    return ""


def build(library: str, eps: float, d: int) -> tuple[dict[str, Setup], str]:
    """Return the set-ups of one library, built without and (if needed) with the xxhash shim."""
    _, make = LIBRARIES[library]
    try:
        return make(eps, d), ""
    except TypeError as err:  # hash functions are built eagerly by some servers
        with xxhash_str_shim():
            return make(eps, d), f"{type(err).__name__}: {err}"


def pivot(table: pd.DataFrame) -> pd.DataFrame:
    """One row per library and protocol, one column per epsilon: 'eps_hat / lower verdict'."""
    cell = table.apply(
        lambda r: (
            f"{r.epsilon_hat:.2f} / {r.epsilon_lower:.2f}"
            + (
                " **VIOLATION**"
                if r.verdict == "VIOLATION"
                else " pass"
                if r.verdict == "pass"
                else " error"
            )
        ),
        axis=1,
    )
    wide = table.assign(cell=cell).pivot_table(
        index=["library", "protocol"], columns="epsilon", values="cell", aggfunc="first", sort=False
    )
    wide.columns = [f"eps = {c:g}" for c in wide.columns]
    return wide.reset_index()


def write_tables(table: pd.DataFrame, out: Path) -> None:
    """libraries.md (long) and libraries_pivot.md (protocol x epsilon)."""
    show = table.assign(
        eps_hat=table["epsilon_hat"].map("{:.3f}".format),
        lower=table["epsilon_lower"].map("{:.3f}".format),
        claimed=table["claimed_epsilon"].map("{:.3g}".format),
    )[["library", "protocol", "epsilon", "claimed", "eps_hat", "lower", "verdict", "event"]]
    (out / "libraries.md").write_text(markdown_table(show) + "\n")
    (out / "libraries_pivot.md").write_text(markdown_table(pivot(table)) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Audit every client and write the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=30_000, help="users per input")
    parser.add_argument("--domain-size", type=int, default=5)
    parser.add_argument("--eps", default="0.5,1,2,4")
    parser.add_argument("--confidence", type=float, default=0.99)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="substring of the protocols to run")
    parser.add_argument("--quick", action="store_true", help="2000 users per input")
    parser.add_argument("--out", default="benchmarks/results/audit")
    parser.add_argument("--tables-only", action="store_true", help="rewrite the .md tables")
    args = parser.parse_args(argv)
    if args.tables_only:
        write_tables(pd.read_csv(Path(args.out) / "libraries.csv"), Path(args.out))
        return 0
    samples = 2000 if args.quick else args.samples
    epsilons = [float(e) for e in args.eps.split(",")]
    d = args.domain_size
    out = Path(args.out)
    csv = out / "libraries.csv"
    done = pd.read_csv(csv) if csv.exists() else pd.DataFrame()
    rows = done.to_dict("records")
    seen = {(r["library"], r["protocol"], float(r["epsilon"]), int(r["samples"])) for r in rows}
    versions = {
        "pure-LDP": importlib.metadata.version("pure-ldp"),
        "multi-freq-ldpy": importlib.metadata.version("multi-freq-ldpy"),
        "bayesldp": bayesldp.__version__,
        "xxhash": importlib.metadata.version("xxhash"),
        "numpy": np.__version__,
    }
    warnings.simplefilter("ignore")  # their DeprecationWarnings (random.randint on floats)
    started = time.perf_counter()

    def record(library, protocol, eps, res, claimed, status, note, seconds, dom=None):
        row = {
            "library": library,
            "version": versions.get(library, ""),
            "protocol": protocol,
            "epsilon": eps,
            "claimed_epsilon": claimed,
            "domain_size": dom or d,
            "samples": samples,
            "epsilon_hat": res.epsilon_hat if res else math.nan,
            "epsilon_lower": res.epsilon_lower if res else math.nan,
            "verdict": ("VIOLATION" if res.contradicted else "pass") if res else "error",
            "event": res.event if res else "",
            "pair": f"{res.pair[0]} vs {res.pair[1]}" if res else "",
            "output": res.description if res else "",
            "counts": f"{res.counts[0]} vs {res.counts[1]} of {res.holdout}" if res else "",
            "runs_as_installed": status == "",
            "error_as_installed": status,
            "note": note,
            "seconds": round(seconds, 1),
        }
        rows.append(row)
        write_csv(csv, pd.DataFrame(rows))
        print(
            f"{library:16s} {protocol:48s} eps={eps:<4g} {row['verdict']:9s} "
            f"eps_hat={row['epsilon_hat']:.3f} lower={row['epsilon_lower']:.3f} "
            f"[{row['event']}] {status[:40]} ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )

    for eps in epsilons:
        if ("bayesldp", "GRR", eps, samples) not in seen or args.only:
            for name in bayesldp.ORACLES:
                if args.only and args.only not in name:
                    continue
                if ("bayesldp", name, eps, samples) in seen:
                    continue
                t0 = time.perf_counter()
                res = audit_oracle(
                    bayesldp.make_oracle(name, eps, d),
                    samples=samples,
                    confidence=args.confidence,
                    rng=args.seed,
                )
                record("bayesldp", name, eps, res, eps, "", "", time.perf_counter() - t0)
            name = "SS (d = 16, inputs 0-3)"
            if (not args.only or args.only in name) and (
                "bayesldp",
                name,
                eps,
                samples,
            ) not in seen:
                t0 = time.perf_counter()
                res = audit_oracle(
                    bayesldp.SS(eps, 16),
                    inputs=[0, 1, 2, 3],
                    samples=samples,
                    confidence=args.confidence,
                    rng=args.seed,
                )
                record("bayesldp", name, eps, res, eps, "", "", time.perf_counter() - t0, 16)
        for library in LIBRARIES:
            seed_everything(args.seed)
            setups, build_error = build(library, eps, d)
            for protocol, setup in setups.items():
                if args.only and args.only not in protocol:
                    continue
                if (library, protocol, eps, samples) in seen:
                    continue
                status = build_error or runs_as_installed(setup)
                t0 = time.perf_counter()
                res, note = None, setup.note
                try:
                    shim = xxhash_str_shim() if status else contextlib.nullcontext()
                    with shim:
                        if status and runs_as_installed(setup):
                            raise RuntimeError(f"fails even with the shim: {status}")
                        res = empirical_epsilon(
                            per_user(setup),
                            setup.inputs or range(d),
                            samples=samples,
                            confidence=args.confidence,
                            rng=args.seed,
                            event=setup.events,
                            epsilon=setup.claimed,
                        )
                    if status:
                        note = (note + "; " if note else "") + "audited with the xxhash str shim"
                except Exception as err:
                    note = (note + "; " if note else "") + f"audit failed: {err}"
                record(
                    library,
                    protocol,
                    eps,
                    res,
                    setup.claimed,
                    status,
                    note,
                    time.perf_counter() - t0,
                )

    table = pd.DataFrame(rows)
    write_csv(csv, table)
    write_tables(table, out)
    write_json(
        out / "libraries_meta.json",
        {
            "command": "python benchmarks/audit_libraries.py "
            + " ".join(argv if argv is not None else sys.argv[1:]),
            "versions": versions,
            "samples": samples,
            "domain_size": d,
            "confidence": args.confidence,
            "seed": args.seed,
            "seconds": time.perf_counter() - started,
        },
    )
    print(f"wrote {csv} and {out / 'libraries.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
