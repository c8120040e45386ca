import sys, warnings, time, numpy as np
sys.path.insert(0, "benchmarks")
import diagnostic_calibration as dc
from bayesldp import models
case = sys.argv[1]; seed = int(sys.argv[2]); sampler = sys.argv[3] if len(sys.argv) > 3 else "auto"
rng = np.random.default_rng(seed)
m, options = dc.measurement_from_prior(case, 256, 1_000_000, rng)
fitter = models.bayes_hier if case == "hier" else models.bayes_dirichlet
t0 = time.time()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    est = fitter(m, rng=rng, sampler=sampler, **options)
for w in caught: print("WARN", str(w.message)[:400])
post = est.inference_data.posterior
ss = est.inference_data.sample_stats
print(list(post.data_vars))
for c in range(post.sizes["chain"]):
    la = post["log_a"][c].values
    print("chain", c, "div", int(ss["diverging"][c].sum()), "log_a mean", la.mean(0).round(2), "sd", la.std(0).round(2), "min", la.min(0).round(2), "max", la.max(0).round(2))
print("seconds", time.time() - t0)
np.savez(f"/tmp/dla/{case}-{seed}.npz", **{k: post[k].values for k in post.data_vars}, diverging=ss["diverging"].values)
