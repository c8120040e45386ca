import sys, time, importlib.util, numpy as np
sys.path.insert(0, "benchmarks")
import bayes_speed as bs
variant = sys.argv[1]; tune = int(sys.argv[2]); d = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
if variant == "branch":
    import bayesldp.models.dirichlet as mod
else:
    path = {"main": "/tmp/dla/dirichlet_main.py", "nob": "/tmp/dla/dirichlet_nob.py", "patch": "/tmp/dla/dirichlet_patch.py"}[variant]
    spec = importlib.util.spec_from_file_location("dvar", path); mod = importlib.util.module_from_spec(spec); sys.modules["dvar"] = mod; spec.loader.exec_module(mod)
data, m = bs.measurement(d, 0)
from bayesldp.models import _jax, _jax_hmc as H
_jax.devices_for_chains(1)
model = mod.build_dirichlet_model(m)
import jax
from numpyro.infer import MCMC
from pymc.sampling.jax import get_jaxified_logp
pot = get_jaxified_logp(model, negative_logp=False)
G = jax.jit(jax.grad(lambda xs: pot(xs)))
r = np.random.default_rng(1)
starts = H.initial_points(model, 1, r, pot)
x = [s[0] for s in starts]
G(x); t0 = time.perf_counter()
for _ in range(50): jax.block_until_ready(G(x))
grad_ms = (time.perf_counter() - t0) / 50 * 1e3
mcmc = MCMC(H.jittered_hmc_kernel(pot), num_warmup=tune, num_samples=100, num_chains=1, progress_bar=False)
t0 = time.perf_counter()
mcmc.run(jax.random.PRNGKey(0), init_params=x, extra_fields=("num_steps", "adapt_state.step_size", "diverging"))
ex = mcmc.get_extra_fields()
la = np.asarray(mcmc.get_samples()[0])
print(variant, "grad ms %.2f" % grad_ms, "wall %.1f s" % (time.perf_counter() - t0), "steps/draw %.1f" % float(np.mean(ex["num_steps"])), "step %.4f" % float(ex["adapt_state.step_size"][-1]), "div", int(np.sum(ex["diverging"])), "log_a_offset mean %.2f" % la.mean())
