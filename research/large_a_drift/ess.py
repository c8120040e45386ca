import sys, numpy as np, arviz as az
st = np.load(sys.argv[1])
t = st["f_t"]  # chain, draw, d
f = st["f"]
ref = np.argmax(np.abs(t).std((0,1)) == 0) if False else None
def ess(x): return float(az.ess(az.convert_to_dataset(x[None] if x.ndim == 1 else x)).to_array().values.ravel()[0])
E = az.ess(az.convert_to_dataset({"t": t})).t.values
print("f_t ess median", np.median(E), "min", E.min())
Ef = az.ess(az.convert_to_dataset({"f": f})).f.values
print("f ess median", np.median(Ef))
cm = t.mean(-1)
print("common-mode ess", float(az.ess(cm).x if hasattr(az.ess(cm), 'x') else az.ess(cm)))
r = t - cm[..., None]
Er = az.ess(az.convert_to_dataset({"r": r})).r.values
print("f_t minus common mode ess median", np.median(Er))
print("common mode sd", cm.std(), "per-element sd median", np.median(t.std((0,1))))
