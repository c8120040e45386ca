"""``bayesldp audit``: an empirical epsilon-LDP audit of an oracle's reports.

Exit code 0: the claimed epsilon is not contradicted; 1: the lower bound exceeds it;
2: bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bayesldp.cli._common import ArgumentParser, integer, number


def add_parser(commands: Any) -> ArgumentParser:
    """Add the ``audit`` command to the subcommands of the ``bayesldp`` parser.

    Parameters
    ----------
    commands : argparse subparsers
        The ``bayesldp`` parser's subcommands.

    Returns
    -------
    ArgumentParser
        The command's parser.
    """
    audit = commands.add_parser(
        "audit",
        help="empirical epsilon-LDP audit of an oracle's reports (exit 1 if eps is violated)",
        description="Privatize many users holding each of a few values and bound the "
        "oracle's epsilon from below (Clopper-Pearson, sample splitting). Exit code 0: "
        "the claimed epsilon is not contradicted; 1: the lower bound exceeds it; 2: bad "
        "arguments.",
    )
    audit.add_argument("--oracle", required=True, help="GRR, OUE, SUE, OLH, SS or HR")
    audit.add_argument("--epsilon", type=number, required=True, help="the claimed epsilon (> 0)")
    audit.add_argument("--d", type=integer, required=True, help="domain size (>= 2; small)")
    audit.add_argument(
        "--samples", type=integer, default=200_000, help="users per input (default 200000)"
    )
    audit.add_argument(
        "--confidence", type=number, default=0.99, help="of the lower bound (default 0.99)"
    )
    audit.add_argument("--seed", type=integer, default=0, help="base seed (default 0)")
    return audit


def run(args: argparse.Namespace) -> int:
    """Audit the oracle as ``args`` asks; print the verdict.

    Parameters
    ----------
    args : argparse.Namespace
        The options of :func:`add_parser`.

    Returns
    -------
    int
        0 if the claimed epsilon is not contradicted, 1 if it is.
    """
    from tqdm import tqdm

    from bayesldp._validation import check_float, check_int
    from bayesldp.audit import audit_oracle
    from bayesldp.audit._oracle import default_inputs
    from bayesldp.oracles import make_oracle

    oracle = make_oracle(args.oracle, args.epsilon, args.d)
    inputs = default_inputs(oracle.domain_size)
    samples = check_int(args.samples, "samples", minimum=2)
    confidence = check_float(
        args.confidence,
        "confidence",
        minimum=0,
        maximum=1,
        strict_minimum=True,
        strict_maximum=True,
    )
    seed = check_int(args.seed, "seed", minimum=0)
    desc = f"audit {oracle.name} eps={oracle.epsilon:g} d={oracle.domain_size}"
    with tqdm(total=inputs.size, desc=desc, unit="input", file=sys.stderr) as bar:
        result = audit_oracle(
            oracle,
            inputs=inputs,
            samples=samples,
            confidence=confidence,
            rng=seed,
            progress=bar.update,
        )
    print(f"{oracle.name} (eps {oracle.epsilon:g}, d {oracle.domain_size}): {result.summary()}")
    return 1 if result.contradicted else 0
