"""Power and false-alarm rate of ``bayesldp.audit`` on correct and deliberately broken oracles.

For every oracle (GRR, OUE, SUE, OLH, SS, HR) and epsilon in 0.5, 1, 2, 4, the audit
(:func:`bayesldp.audit.audit_oracle`) runs over many seeds on

- the correct oracle: a seed whose lower bound exceeds epsilon is a false alarm
  (the audit promises at most ``1 - confidence`` of them);
- an *inflated* oracle that claims epsilon but privatizes with ``factor * epsilon``
  (same ``g`` for OLH and ``k`` for SS): a flagged seed is a detection;
- for SS, the *ordered* oracle of the old code (the user's own item in slot 0 when it
  is reported, the others after it in random order, with ``k = 2``): as a set it is
  eps-LDP, as transmitted it is not.

Writes ``OUT/power.csv`` (one row per audit) and ``OUT/summary.csv`` /
``OUT/summary.md`` (rate of flagged seeds per case, with a 95% Clopper-Pearson
interval). Run::

    python benchmarks/audit_power.py --seeds 100 --samples 20000 --out benchmarks/results/audit

The test doubles (:func:`inflated_oracle`, :class:`OrderedSS`) are used by
``tests/test_audit.py`` as well.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd

import bayesldp
from bayesldp._io import markdown_table, write_csv, write_json
from bayesldp.audit import audit_oracle, clopper_pearson
from bayesldp.oracles import OLH, SS, FrequencyOracle, make_oracle

EPSILONS = (0.5, 1.0, 2.0, 4.0)


def inflated_oracle(
    name: str, epsilon: float, domain_size: int, factor: float = 2.0
) -> FrequencyOracle:
    """Build an oracle that claims ``epsilon`` but privatizes with ``factor * epsilon``.

    For OLH the number of buckets ``g`` and for SS the subset size ``k`` stay those of
    the claimed epsilon, so only the randomization is weakened (its worst likelihood
    ratio becomes ``e^(factor * epsilon)``).
    """
    honest = make_oracle(name, epsilon, domain_size)
    extra = {}
    if isinstance(honest, OLH):
        extra = {"g": honest.g}
    elif isinstance(honest, SS):
        extra = {"k": honest.k}
    cheat = type(honest)(factor * epsilon, domain_size, **extra)

    class Inflated(type(honest)):
        def privatize(self, values, rng):
            return cheat.privatize(values, rng)

    Inflated.__name__ = f"Inflated{type(honest).__name__}"
    return Inflated(epsilon, domain_size, **extra)


class OrderedSS(SS):
    """Subset selection as it was before the fix: the own item first when reported.

    With probability ``p`` the report lists the user's value in slot 0 and ``k - 1``
    other items after it; otherwise ``k`` other items. The other items are in random
    order. The *set* is distributed exactly as :class:`bayesldp.SS`'s.
    """

    def privatize(self, values, rng: np.random.Generator) -> np.ndarray:
        """Privatize ``values``, listing the own item first when it is reported."""
        v = np.asarray(values, dtype=np.int64)
        d, k = self.domain_size, self.k
        others = np.argsort(rng.random((v.size, d - 1)), axis=1)[:, :k]
        others = others + (others >= v[:, None])
        include = rng.random(v.size) < self.p
        others[include, 0] = v[include]
        return others.astype(self.report_dtype)

    def _check_values(self, r: np.ndarray, name: str) -> None:
        # the old layout: items in range and distinct, in any order (the leak)
        if r.max() >= self.domain_size or np.any(np.diff(np.sort(r, axis=1), axis=1) == 0):
            raise ValueError(f"{name}: items out of range or repeated")


def cases(domain_size: int, factor: float) -> list[tuple[str, str, float, FrequencyOracle]]:
    """(oracle, kind, epsilon, oracle object) for every audited case."""
    out = []
    for name in bayesldp.ORACLES:
        for eps in EPSILONS:
            out.append((name, "correct", eps, make_oracle(name, eps, domain_size)))
            out.append(
                (
                    name,
                    f"inflated x{factor:g}",
                    eps,
                    inflated_oracle(name, eps, domain_size, factor),
                )
            )
    for eps in EPSILONS:
        out.append(("SS", "ordered (k=2)", eps, OrderedSS(eps, domain_size, k=2)))
    return out


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    """Rate of flagged seeds per case, with a 95% Clopper-Pearson interval."""
    out = []
    for (oracle, kind, eps), grp in rows.groupby(["oracle", "kind", "epsilon"], sort=False):
        flagged = int(grp["flagged"].sum())
        low, high = clopper_pearson(flagged, len(grp), 0.95)
        out.append(
            {
                "oracle": oracle,
                "kind": kind,
                "epsilon": eps,
                "seeds": len(grp),
                "flagged": flagged,
                "rate": flagged / len(grp),
                "rate_low95": low,
                "rate_high95": high,
                "median_eps_hat": float(grp["epsilon_hat"].median()),
                "median_lower": float(grp["epsilon_lower"].median()),
                "mean_seconds": float(grp["seconds"].mean()),
            }
        )
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> int:
    """Run the power study and write its tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100, help="audits per case")
    parser.add_argument("--samples", type=int, default=20_000, help="users per input")
    parser.add_argument("--domain-size", type=int, default=5)
    parser.add_argument("--factor", type=float, default=2.0, help="epsilon inflation")
    parser.add_argument("--confidence", type=float, default=0.99)
    parser.add_argument("--out", default="benchmarks/results/audit")
    parser.add_argument("--tag", default="", help="suffix of the output file names")
    args = parser.parse_args(argv)

    rows = []
    started = time.perf_counter()
    todo = cases(args.domain_size, args.factor)
    for n_case, (name, kind, eps, oracle) in enumerate(todo, 1):
        for seed in range(args.seeds):
            t0 = time.perf_counter()
            res = audit_oracle(oracle, samples=args.samples, confidence=args.confidence, rng=seed)
            rows.append(
                {
                    "oracle": name,
                    "kind": kind,
                    "epsilon": eps,
                    "seed": seed,
                    "epsilon_hat": res.epsilon_hat,
                    "epsilon_lower": res.epsilon_lower,
                    "flagged": bool(res.contradicted),
                    "event": res.event,
                    "pair": f"{res.pair[0]}>{res.pair[1]}",
                    "seconds": time.perf_counter() - t0,
                }
            )
        done = pd.DataFrame(rows[-args.seeds :])
        print(
            f"[{n_case}/{len(todo)}] {name} {kind} eps={eps:g}: flagged "
            f"{int(done['flagged'].sum())}/{args.seeds}, median lower bound "
            f"{done['epsilon_lower'].median():.3f} ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )
    table = pd.DataFrame(rows)
    summary = summarise(table)
    out = Path(args.out)
    tag = f"_{args.tag}" if args.tag else ""
    write_csv(out / f"power{tag}.csv", table)
    write_csv(out / f"power_summary{tag}.csv", summary)
    show = summary.assign(
        rate=summary["rate"].map("{:.3f}".format),
        ci95=[
            f"[{a:.3f}, {b:.3f}]"
            for a, b in zip(summary.rate_low95, summary.rate_high95, strict=True)
        ],
        median_lower=summary["median_lower"].map("{:.3f}".format),
        median_eps_hat=summary["median_eps_hat"].map("{:.3f}".format),
    )[["oracle", "kind", "epsilon", "seeds", "flagged", "rate", "ci95", "median_lower"]]
    (out / f"power_summary{tag}.md").write_text(markdown_table(show) + "\n")
    correct = table[table["kind"] == "correct"]
    broken = table[table["kind"] != "correct"]
    write_json(
        out / f"power_meta{tag}.json",
        {
            "command": "python benchmarks/audit_power.py "
            + " ".join(argv if argv is not None else __import__("sys").argv[1:]),
            "seeds": args.seeds,
            "samples": args.samples,
            "domain_size": args.domain_size,
            "factor": args.factor,
            "confidence": args.confidence,
            "false_alarms": int(correct["flagged"].sum()),
            "correct_audits": len(correct),
            "detections": int(broken["flagged"].sum()),
            "broken_audits": len(broken),
            "seconds": time.perf_counter() - started,
            "python": platform.python_version(),
            "numpy": np.__version__,
        },
    )
    print(
        f"false alarms {int(correct['flagged'].sum())}/{len(correct)}; "
        f"detections {int(broken['flagged'].sum())}/{len(broken)}; wrote {out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
