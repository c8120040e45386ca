"""Leapfrog from the state before seed 13's jump: old (patch) vs new potential."""
import sys, importlib.util, numpy as np
sys.path.insert(0, "benchmarks")
import diagnostic_calibration as dc
from bayesldp.models._concentration import concentration_start
import bayesldp.models.dirichlet as new_mod
spec = importlib.util.spec_from_file_location("dirichlet_patch", "/tmp/dla/dirichlet_patch.py")
old_mod = importlib.util.module_from_spec(spec); sys.modules["dirichlet_patch"] = old_mod; spec.loader.exec_module(old_mod)
rng = np.random.default_rng(13)
m, _ = dc.measurement_from_prior("dirichlet", 256, 1_000_000, rng)
st = np.load("/tmp/dla/before-jump.npz")
t0, la0, step, imm0, immt = st["t"], float(st["la"]), float(st["step"]), float(st["imm0"]), st["immt"]
start = concentration_start(m)
import jax, jax.numpy as jnp
from pymc.sampling.jax import get_jaxified_logp
imm = np.concatenate([[imm0], immt])
def run(mod, t_init, label):
    model = mod.build_dirichlet_model(m)
    pot = get_jaxified_logp(model, negative_logp=False)  # negative log-density
    U = jax.jit(lambda x: pot([x[0], x[1:]]))
    G = jax.jit(jax.grad(lambda x: pot([x[0], x[1:]])))
    x0 = jnp.asarray(np.concatenate([[la0 - start], t_init]))
    r = np.random.default_rng(0)
    peaks, finals, dH = [], [], []
    for trial in range(200):
        p = r.normal(size=x0.size) / np.sqrt(imm)
        x = x0; H0 = float(U(x)) + 0.5 * np.sum(imm * p * p)
        g = np.asarray(G(x)); peak = float(x[0])
        for i in range(5):
            p = p - 0.5 * step * g
            x = x + step * imm * p
            g = np.asarray(G(x))
            p = p - 0.5 * step * g
            peak = max(peak, float(x[0]))
        H1 = float(U(x)) + 0.5 * np.sum(imm * p * p)
        peaks.append(peak + start); finals.append(float(x[0]) + start); dH.append(H1 - H0)
    peaks, finals, dH = map(np.array, (peaks, finals, dH))
    print(label, "start log a %.2f" % la0, "max log a over trajectories: median %.2f, 95%% %.2f, max %.2f" % (np.median(peaks), np.quantile(peaks, .95), peaks.max()),
          "| final > 10: %d/200" % (finals > 10).sum(), "| energy gain (dH < -1): %d, min dH %.3g" % ((dH < -1).sum(), dH.min()))
    ok = np.isfinite(dH) & (dH < 1.0)
    print("   trials with dH < 1 (likely accepted): %d; of them ending at log a > 10: %d; finite dH %d" % (ok.sum(), (ok & (finals > 10)).sum(), np.isfinite(dH).sum()))
    bad = ok & (finals > 10)
    if bad.any():
        print("   e.g. final log a", np.round(finals[bad][:5], 2), "dH", dH[bad][:5])
run(old_mod, t0, "patch (cancelling density)")
# same point in the new coordinates: t_new = t_old - (c/s) b (b . t_old)
import math
h = new_mod.parametrization_hints(m)
a = math.exp(la0)
scale = 1 / np.sqrt(1 / h["width"] ** 2 + a)
k = h["sharpness"]
slope = scale + 1 / (a * (1 + np.exp(k * (h["start"] - h["kink"]))))
b = scale[h["reference"] == 1][0] / slope; b[h["reference"] == 1] = 0
s = math.sqrt(1 + b @ b); c = 1 / (1 + s)
t_new = t0 - (c / s) * b * (b @ t0)
run(new_mod, t_new, "new (stable density, shared mode out)")
