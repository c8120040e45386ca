import sys, numpy as np, mpmath as mp
sys.path.insert(0, "benchmarks")
import diagnostic_calibration as dc
from bayesldp.models.dirichlet import build_dirichlet_model, parametrization_hints
from bayesldp.models._concentration import concentration_start
case, seed = "dirichlet", int(sys.argv[1]); chain = int(sys.argv[2]); draw = int(sys.argv[3]) if len(sys.argv) > 3 else 0
rng = np.random.default_rng(seed)
m, _ = dc.measurement_from_prior(case, 256, 1_000_000, rng)
model = build_dirichlet_model(m)
st = np.load(f"/tmp/dla/{case}-{seed}.npz")
t = st["f_t"][chain, draw]
start = concentration_start(m)
print("start", start, "stuck log_a", st["log_a"][chain, draw])
logp = model.compile_logp()
dlogp = model.compile_dlogp(vars=[model["log_a_offset"]])
from pymc.sampling.jax import get_jaxified_logp
import jax
jl = get_jaxified_logp(model, negative_logp=False)
jg = jax.jit(jax.grad(lambda off, tt: jl([off, tt]), argnums=0))
names = [v.name for v in model.value_vars]
print(names)
h = parametrization_hints(m)
mp.mp.dps = 60
def ref_prior(la):
    a = mp.e ** mp.mpf(la)
    d = 256
    prec = [1 / mp.mpf(w) ** 2 + a for w in h["width"]]
    y = []
    lj = 0
    for v in range(d):
        if h["reference"][v]:
            y.append(mp.mpf(0)); continue
        u = mp.mpf(t[v]) + mp.mpf(h["start"][v]); k = mp.mpf(h["sharpness"][v])
        z = k * (u - mp.mpf(h["kink"][v]))
        sp = mp.log1p(mp.e ** (-z)); sig = 1 / (1 + mp.e ** z)
        sc = 1 / mp.sqrt(prec[v]); c = (mp.mpf(h["centre"][v]) / mp.mpf(h["width"][v]) ** 2) / prec[v]
        y.append(c + sc * u - sp / (k * a)); lj += mp.log(sc + sig / a)
    lse = mp.log(mp.fsum(mp.e ** yy for yy in y))
    slf = mp.fsum(y) - d * lse
    return a * slf + mp.loggamma(d * a) - d * mp.loggamma(a) + lj
def prior_only(la):
    # model's prior part via pytensor: logp of the Potential
    pass
pt_prior = None
import pytensor
pot = [p for p in model.potentials][0]
fpot = model.compile_fn(model.replace_rvs_by_values([pot])[0], inputs=model.value_vars, on_unused_input="ignore")
for la in [0, 4, 8, 10, 20, 30, 33, 40, 60, 80, 95, 150, 300]:
    pt_ = {"log_a_offset": la - start, "f_t": t}
    off = np.array(la - start)
    lp = float(logp(pt_)); g = float(dlogp(pt_)[0]); gj = float(jg(off, t))
    pv = float(fpot(pt_)); r = float(ref_prior(la))
    # numerical derivative of reference
    e = 1e-6
    rg = float((ref_prior(mp.mpf(la) + e) - ref_prior(mp.mpf(la) - e)) / (2 * e)) if la < 200 else np.nan
    eps = 1e-4
    gnum_pt = (float(fpot({"log_a_offset": la + eps - start, "f_t": t})) - float(fpot({"log_a_offset": la - eps - start, "f_t": t}))) / (2 * eps)
    print(f"log a {la:5.1f} logp {lp: .6e} dlogp/dloga pt {g: .4e} jax {gj: .4e} | potential pt {pv: .10e} ref {r: .10e} err {pv - r: .3e} | dpot ref {rg: .4e} numdiff pt {gnum_pt: .4e}")
