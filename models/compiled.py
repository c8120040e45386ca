"""nutpie's compilation of a model, cached on disk across processes.

nutpie wraps PyTensor's compiled log-density (and expansion) in C callbacks with
``numba.cfunc``. Those callbacks are closures over numba dispatchers (random ids) and the
model's data, so numba cannot find them in its cache (``cache=True`` writes a new entry in
every process and never reads one back) and retypes, relinks and reoptimises the whole
graph in every process: 11-15 s of nutpie's 15-20 s at d = 1024, even when PyTensor's
compiled graph itself is loaded from its cache. :func:`compile_nutpie` builds the same
callbacks from generated source keyed by PyTensor's cache key of the graph, so a later
process loads them from PyTensor's numba cache. Graphs need every op cacheable (see
:mod:`bayesldp.models.special` for the Dirichlet normaliser's ``gammaln``).
"""

from __future__ import annotations

from hashlib import sha256

import numpy as np

__all__ = ["compile_nutpie"]

#: Bump when the generated callbacks change.
CALLBACK_VERSION = 1
#: nutpie versions whose private compile helpers :func:`compile_nutpie` was checked with.
NUTPIE_VERSIONS = ("0.16.8",)


def _pointer_intrinsic():
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    @intrinsic
    def address_as_void_pointer(typingctx, src):
        def codegen(context, builder, sig, args):
            return builder.inttoptr(args[0], cgutils.voidptr_t)

        return types.voidptr(src), codegen

    return address_as_void_pointer


_as_pointer = None

_SHARED_SRC = """
def {name}_call(x, words):
{unpack}
    return fn(x{args})
"""

_LOGP_SRC = """
def {name}(dim, x_, out_, logp_, user_data_):
    if dim != {n_dim}:
        return -1
    try:
        x = carray(x_, ({n_dim},))
        out = carray(out_, ({n_dim},))
        logp = carray(logp_, ())
        logp_val, grad = call(x, carray(user_data_, ({n_words},), uint64))
        logp[()] = logp_val
        out[...] = grad
        if not np.all(np.isfinite(out)):
            return 3
        if not np.isfinite(logp_val):
            return 4
    except Exception:  # noqa: BLE001
        return 1
    return 0
"""

_EXPAND_SRC = """
def {name}(dim, expanded, x_, out_, user_data_):
    if dim != {n_dim}:
        return -1
    if expanded != {n_expanded}:
        return -1
    try:
        x = carray(x_, ({n_dim},))
        out = carray(out_, ({n_expanded},))
        (values,) = call(x, carray(user_data_, ({n_words},), uint64))
        out[...] = values
    except Exception:  # noqa: BLE001
        return -2
    return 0
"""


def _unpack(user_data, shared_data, names):
    """Source lines reading shared arrays from nutpie's user-data record, and the layout."""
    dt = user_data.dtype
    if dt.itemsize % 8 or list(dt.names) != ["shared"]:
        raise NotImplementedError("unknown nutpie user-data layout")
    shared, base = dt.fields["shared"]
    if list(shared.names) != ["data", "size", "shape"]:
        raise NotImplementedError("unknown nutpie user-data layout")
    lines, layout, env = [], [], {}
    for i, name in enumerate(names):
        offsets = []
        for part in ("data", "size", "shape"):
            sub, off = shared.fields[part]
            ftype, foff = sub.fields[name][:2]
            if ftype.base.itemsize != 8 or ftype.base.kind != "u":
                raise NotImplementedError("unknown nutpie user-data layout")
            offsets.append((base + off + foff) // 8)
        data_w, size_w, shape_w = offsets
        arr = shared_data[name]
        env[f"dtype_{i}"] = arr.dtype.type
        pointer = f"as_pointer(words[{data_w}])"
        if arr.ndim == 0:
            lines.append(f"s{i} = carray({pointer}, (1,), dtype_{i}).reshape(())")
        else:
            shape = ", ".join(f"int(words[{shape_w + j}])" for j in range(arr.ndim))
            lines.append(f"s{i} = carray({pointer}, ({shape},), dtype_{i})")
        layout.append((name, arr.dtype.str, arr.ndim, data_w, size_w, shape_w))
    unpack = "\n".join(" " * 4 + line for line in lines)
    args = "".join(f", s{i}" for i in range(len(names)))
    return unpack, args, layout, env


def _callback(kind, fn_pt, c_sig, user_data, shared_data, n_dim, n_expanded):
    """Build a ``numba.cfunc`` for nutpie, cached under PyTensor's key of ``fn_pt``'s graph."""
    import numba
    import pytensor
    from pytensor.link.numba.cache import CACHED_SRC_FUNCTIONS, compile_numba_function_src

    global _as_pointer
    if _as_pointer is None:
        _as_pointer = _pointer_intrinsic()
    jit_fn = fn_pt.vm.jit_fn
    graph_key = CACHED_SRC_FUNCTIONS.get(jit_fn.py_func)
    names = [var.name for var in fn_pt.get_shared()]
    unpack, args, layout, env = _unpack(user_data, shared_data, names)
    name = f"bayesldp_nutpie_{kind}"
    template = _LOGP_SRC if kind == "logp" else _EXPAND_SRC
    # unpacking the data outside the try block keeps the callback small for numba's SSA passes
    shared_src = _SHARED_SRC.format(name=name, unpack=unpack, args=args)
    src = shared_src + template.format(
        name=name, n_dim=n_dim, n_expanded=n_expanded, n_words=user_data.dtype.itemsize // 8
    )
    key = None
    if graph_key is not None:
        import nutpie

        key = sha256(
            repr(
                (CALLBACK_VERSION, nutpie.__version__, pytensor.__version__, graph_key, src, layout)
            ).encode()
        ).hexdigest()
    env.update(
        __name__=__name__, np=np, carray=numba.carray, uint64=np.uint64,
        as_pointer=_as_pointer, fn=jit_fn,
    )  # fmt: skip
    env["call"] = numba.njit(compile_numba_function_src(shared_src, f"{name}_call", env))
    py_fn = compile_numba_function_src(src, name, global_env=env, cache_key=key)
    return numba.cfunc(c_sig, cache=key is not None)(py_fn)


def compile_nutpie(model):
    """``nutpie.compile_pymc_model(model, backend="numba")``, cached on disk across processes.

    The same compiled model (same log-density, gradient, expansion, initial points and
    ``with_data``); only nutpie's two C callbacks are built here, from source keyed by
    PyTensor's cache key of the compiled graphs, so that a later process loads them from
    PyTensor's numba cache (``~/.pytensor/numba``) instead of recompiling. Graphs
    PyTensor cannot cache (an op without a cache key) are compiled as nutpie does.
    Falls back to nutpie's own compilation for untested nutpie versions.

    Parameters
    ----------
    model : pymc.Model
        The model to compile (its ``pm.Data`` are copied, as nutpie does: push later
        values with the result's ``with_data``).

    Returns
    -------
    nutpie.compile_pymc.CompiledPyMCModel
        What ``nutpie.sample`` takes.

    Raises
    ------
    ValueError
        ``model`` is not a ``pymc.Model`` or has no free variable to sample.
    """
    import nutpie
    import pymc as pm

    if not isinstance(model, pm.Model):
        raise ValueError(f"model must be a pymc.Model, got {type(model).__name__}")
    if not model.free_RVs:
        raise ValueError("model has no free random variable to sample")

    if nutpie.__version__ not in NUTPIE_VERSIONS:
        return nutpie.compile_pymc_model(model, backend="numba")
    import numba
    from nutpie import compile_pymc as ncp
    from pymc.initial_point import make_initial_point_fn

    # compile_pymc_model's defaults for backend="numba"
    point_fn = ncp._wrap_with_lock(
        make_initial_point_fn(
            model=model, overrides=None, default_strategy="support_point",
            jitter_rvs=set(model.free_RVs), return_transformed=True,
        )
    )  # fmt: skip
    n_dim, n_expanded, logp_pt, expand_pt, initial_point_fn, shape_info = ncp._make_functions(
        model, mode="NUMBA", compute_grad=True, join_expanded=True,
        pymc_initial_point_fn=point_fn, var_names=None,
    )  # fmt: skip
    shared_data: dict[str, np.ndarray] = {}
    shared_vars: dict[str, object] = {}
    for val in [*logp_pt.get_shared(), *expand_pt.get_shared()]:
        if val.name in shared_vars and shared_vars[val.name] is not val:
            raise ValueError(f"Shared variables must have unique names: {val.name}")
        shared_data[val.name] = np.array(val.get_value(), order="C", copy=True)
        shared_vars[val.name] = val
    for val in shared_data.values():
        val.flags.writeable = False
    user_data = ncp.make_user_data(shared_vars, shared_data)

    try:
        from pytensor.link.numba.cache import CACHED_SRC_FUNCTIONS  # noqa: F401
    except ImportError:  # PyTensor's numba cache moved: compile as nutpie does
        return nutpie.compile_pymc_model(model, backend="numba")
    double = numba.types.CPointer(numba.types.double)
    logp_sig = numba.types.int64(numba.types.uint64, double, double, double, numba.types.voidptr)
    expand_sig = numba.types.int64(
        numba.types.uint64, numba.types.uint64, double, double, numba.types.voidptr
    )
    logp_c = _callback("logp", logp_pt, logp_sig, user_data, shared_data, n_dim, n_expanded)
    expand_c = _callback("expand", expand_pt, expand_sig, user_data, shared_data, n_dim, n_expanded)
    dims, coords = ncp._prepare_dims_and_coords(model, shape_info)
    return ncp.CompiledPyMCModel(
        _n_dim=n_dim, dims=dims, _coords=coords,
        _shapes={name: tuple(shape) for name, _, shape in zip(*shape_info, strict=True)},
        compiled_logp_func=logp_c, compiled_expand_func=expand_c,
        initial_point_func=initial_point_fn, shared_data=shared_data, user_data=user_data,
        n_expanded=n_expanded, shape_info=shape_info, logp_func=logp_pt, expand_func=expand_pt,
    )  # fmt: skip
