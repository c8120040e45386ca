import sys, time, importlib.util, numpy as np
sys.path.insert(0, "benchmarks")
import bayes_speed as bs
variant = sys.argv[1]
if variant == "branch":
    import bayesldp.models.dirichlet as mod
else:
    spec = importlib.util.spec_from_file_location("dvar", {"main": "/tmp/dla/dirichlet_main.py", "patch": "/tmp/dla/dirichlet_patch.py", "olddens": "/tmp/dla/dirichlet_olddens.py"}[variant]); mod = importlib.util.module_from_spec(spec); sys.modules["dvar"] = mod; spec.loader.exec_module(mod)
data, m = bs.measurement(1024, 0)
model = mod.build_dirichlet_model(m)
import jax
from pymc.sampling.jax import get_jaxified_logp
from bayesldp.models import _jax_hmc as H
t0 = time.perf_counter()
pot = get_jaxified_logp(model, negative_logp=False)
t1 = time.perf_counter()
vg = jax.jit(jax.value_and_grad(lambda xs: pot(xs)))
starts = H.initial_points(model, 1, np.random.default_rng(1), pot)
x = [s[0] for s in starts]
t2 = time.perf_counter(); jax.block_until_ready(vg(x)); t3 = time.perf_counter()
for _ in range(200): jax.block_until_ready(vg(x))
t4 = time.perf_counter()
print(variant, "jaxify %.2f s, first value_and_grad (compile) %.2f s, per call %.3f ms" % (t1 - t0, t3 - t2, (t4 - t3) / 200 * 1e3))
