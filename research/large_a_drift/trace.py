import sys, numpy as np
sys.path.insert(0, "benchmarks")
import diagnostic_calibration as dc
from bayesldp.models import _jax_hmc as H
from bayesldp.models.dirichlet import build_dirichlet_model
from bayesldp.models._concentration import concentration_start
seed = int(sys.argv[1])
rng = np.random.default_rng(seed)
m, _ = dc.measurement_from_prior("dirichlet", 256, 1_000_000, rng)
fseed = int(rng.integers(2**31 - 1))
from bayesldp.models import _jax
_jax.devices_for_chains(2)
model = build_dirichlet_model(m)
import jax
from numpyro.infer import MCMC
from pymc.sampling.jax import get_jaxified_logp
potential = get_jaxified_logp(model, negative_logp=False)
kernel = H.jittered_hmc_kernel(potential)
r = np.random.default_rng(fseed)
starts = H.initial_points(model, 2, r, potential)
mcmc = MCMC(kernel, num_warmup=1000, num_samples=1000, num_chains=2, chain_method="parallel", progress_bar=False)
key = jax.random.PRNGKey(int(r.integers(2**31 - 1)))
fields = ("diverging", "potential_energy", "adapt_state.step_size", "num_steps", "accept_prob", "adapt_state.inverse_mass_matrix")
mcmc.warmup(key, init_params=starts, extra_fields=fields, collect_warmup=True)
s = mcmc.get_samples(group_by_chain=True)
ex = mcmc.get_extra_fields(group_by_chain=True)
start = concentration_start(m)
for c in range(2):
    la = np.asarray(s[0][c]) + start
    print("chain", c, "final log a", la[-1])
    for i in list(range(0, 60, 3)) + list(range(60, 1000, 40)):
        imm = ex["adapt_state.inverse_mass_matrix"]
        imm = list(imm.values())[0] if isinstance(imm, dict) else imm
        print(f" it {i:4d} log a {la[i]:8.3f} step {float(ex['adapt_state.step_size'][c][i]):.3e} nsteps {int(ex['num_steps'][c][i]):4d} acc {float(ex['accept_prob'][c][i]):.3f} div {bool(ex['diverging'][c][i])} pot {float(ex['potential_energy'][c][i]):.6e} imm_loga {float(np.asarray(imm[c][i])[0]):.3e}")
np.savez(f"/tmp/dla/warm-{seed}.npz", la=np.asarray(s[0]) + start, t=np.asarray(s[1]))
c = 0
la = np.asarray(s[0][c]) + start
jump = int(np.argmax(la > 10))
imm = ex["adapt_state.inverse_mass_matrix"]; imm = list(imm.values())[0] if isinstance(imm, dict) else imm
for i in range(max(jump - 8, 0), jump + 4):
    print(f" it {i:4d} log a {la[i]:8.3f} step {float(ex['adapt_state.step_size'][c][i]):.3e} nsteps {int(ex['num_steps'][c][i]):4d} acc {float(ex['accept_prob'][c][i]):.3f} div {bool(ex['diverging'][c][i])} pot {float(ex['potential_energy'][c][i]):.6e} imm_loga {float(np.asarray(imm[c][i])[0]):.3e}")
t_before = np.asarray(s[1][c][jump - 1]); la_before = la[jump - 1]
np.savez("/tmp/dla/before-jump.npz", t=t_before, la=la_before, start=start, step=float(ex['adapt_state.step_size'][c][jump]), imm0=np.asarray(imm[c][jump])[0], immt=np.asarray(imm[c][jump])[1:] if np.asarray(imm[c][jump]).size > 1 else 0)
print("imm shape", np.asarray(imm[c][jump]).shape)
