"""Plant a known bug in Inductor's code generation, visibly.

Every injection goes through this module so the tool can see it: the capture run reports the
active injections, workers re-apply them before compiling a candidate, and repro.py carries
them inline (see `injection_source`). A bug that only lives in a user's monkeypatch would be
invisible to fresh processes; one planted here is not.

An injection wraps the method that prints one op in an overrides class (C++ scalar, C++
vectorized, Triton) and rewrites the expression it returns with a template:
`{out}` is the correct expression, `{x}` (or `{0}`, `{1}`, ...) the op's arguments.

Other places a bug can live have their own spec classes, dispatched here by their `target`
(dict field and spec-string prefix): a wrong lowering (`inject_lowering`), a wrong
decomposition (`inject_decomposition`), a bug only when two ops share a kernel
(`inject_fusion`), a wrong reduction init (`inject_reduction`) and an off-by-one indirect
index (`inject_indexing`). All of them go through `apply`/`remove`/`injected`,
`Injection.from_dict`, `parse_spec` and `injection_source`.
"""
from __future__ import annotations

import contextlib
import importlib
from dataclasses import asdict, dataclass, field, replace
from typing import Iterator

from compiler.inject_templates import ALL_PATHS, KINDS, PATH_CLASSES, TEMPLATES


@dataclass(frozen=True)
class Injection:
    """One planted bug: `op` printed wrongly on `paths` according to `kind`/`form`/`template`."""

    op: str
    kind: str = "accuracy"
    form: str | None = None
    paths: tuple[str, ...] = ALL_PATHS
    template: str | None = None  # overrides kind/form: the exact code printed for the op

    def template_for(self, path: str) -> str | None:
        """What the op prints on `path`; None where this kind and form print nothing there (a
        hang prints C++ alone)."""
        if self.template is not None:
            return self.template
        form = self.form or ("add_one" if self.kind == "accuracy" else None)
        return TEMPLATES[(self.kind, form)].get(path)

    def printed_paths(self) -> tuple[str, ...]:
        return tuple(p for p in self.paths if p not in PATH_CLASSES or self.template_for(p) is not None)

    def describe(self) -> str:
        how = f"template {self.template!r}" if self.template else (self.form or self.kind)
        return f"{self.op} {self.kind} ({how}) on {'/'.join(self.printed_paths() or self.paths)}"

    def to_dict(self) -> dict:
        return {"target": "codegen", **asdict(self)}

    @staticmethod
    def from_dict(d: dict):
        """Any injection from its dict: codegen ones here, the others by their `target`."""
        target = d.get("target", "codegen")
        if target != "codegen":
            return spec_class(target).from_dict(d)
        fields = {k: v for k, v in d.items() if k != "target"}
        return Injection(**{**fields, "paths": tuple(d.get("paths", ALL_PATHS))})


def spec_types() -> dict:
    """Spec classes of the non-codegen injections, by target (imported when a spec is read)."""
    from compiler.inject_cudagraphs import CudagraphsBug
    from compiler.inject_decomposition import DecompositionBug
    from compiler.inject_dynamo import DynamoBug
    from compiler.inject_fusion import FusionBug
    from compiler.inject_indexing import IndexingBug
    from compiler.inject_lowering import LoweringBug
    from compiler.inject_postgrad import PostGradBug
    from compiler.inject_reduction import ReductionBug
    from compiler.inject_user_kernels import UserKernelBug

    return {c.target: c for c in (LoweringBug, DecompositionBug, FusionBug, ReductionBug, IndexingBug, DynamoBug,
                                  PostGradBug, CudagraphsBug, UserKernelBug)}


def spec_class(target: str):
    types = spec_types()
    if target not in types:
        raise ValueError(f"unknown injection target {target!r}; choose from codegen, {', '.join(types)}")
    return types[target]


@dataclass
class _Applied:
    injection: Injection
    undo: list = field(default_factory=list)


ACTIVE: list[_Applied] = []


def patch_op(cls, op: str, template: str):
    """Wrap `cls.op` so it prints `template` instead; returns the original attribute.

    Kept free of this project's imports and short: repro.py carries this function's source
    verbatim. A class that prints no such op is left alone (None). The wrapper must be *named*
    `op`: CppVecOverrides finds its scalar fallback by name.
    """
    original = cls.__dict__.get(op)
    inner = original.__func__ if isinstance(original, staticmethod) else original
    patched = lambda *args, **kwargs: template.format(*args, out=inner(*args, **kwargs), x=args[0] if args else "")
    patched.__name__ = op
    if original is not None:
        setattr(cls, op, staticmethod(patched))
    return original


def reroute_copies(cls, op: str) -> None:
    """Point subclasses that route `op` through a functools.partial keeping the implementation
    they found when first made (Triton's libdevice routing of sigmoid, tanh, ... for fp64) at the
    patched one: a process that compiled a Triton kernel before the bug was planted would go on
    printing the clean op. Free of this project's imports: repro.py carries it with patch_op."""
    import functools

    patched = getattr(cls.__dict__.get(op), "__func__", None)
    for sub in cls.__subclasses__() if patched else ():
        router = getattr(sub.__dict__.get(op), "__func__", None)
        if "_original_impl" in (getattr(router, "keywords", None) or {}):
            rerouted = functools.partial(router, _original_impl=patched)
            rerouted.__name__ = op
            setattr(sub, op, staticmethod(rerouted))


def disable_hiding_caches() -> None:
    """Whole-graph caches key on the graph and config, not on patched codegen: turn them off."""
    from compiler import settings

    settings.apply()


def _class_for(path: str):
    module, name = PATH_CLASSES[path]
    return getattr(importlib.import_module(module), name)


def check_printed(injection: Injection) -> None:
    """A form that prints on none of the paths asked for (a hang on Triton) plants nothing: refused."""
    if not injection.printed_paths():
        where = [p for p in ALL_PATHS if replace(injection, paths=(p,)).printed_paths()]
        raise ValueError(f"{injection.describe()}: the {injection.form} form is printed on {'/'.join(where)} only")


def apply(injection) -> _Applied:
    """Plant `injection` now (process-wide) and remember it in ACTIVE."""
    if not isinstance(injection, Injection):  # a spec of another target plants itself
        applied = _Applied(injection, [injection.apply()])
        disable_hiding_caches()
        ACTIVE.append(applied)
        return applied
    if injection.kind not in KINDS:
        raise ValueError(f"unknown injection kind {injection.kind!r}; choose from {', '.join(KINDS)}")
    applied = _Applied(injection)
    check_printed(injection)
    printed = injection.printed_paths()
    for path in printed:
        if path not in PATH_CLASSES:
            raise ValueError(f"unknown codegen path {path!r}; choose from {', '.join(ALL_PATHS)}")
        cls = _class_for(path)
        if injection.op not in cls.__dict__:
            if path == "cpp" or printed == (path,):
                raise ValueError(f"{cls.__name__} prints no op named {injection.op!r}")
            continue  # e.g. an op Triton prints through a generic path: nothing to patch there
        # subclasses' own copies, which reroute_copies may replace (undone last to first)
        applied.undo += [(sub, injection.op, sub.__dict__[injection.op]) for sub in cls.__subclasses__()
                         if injection.op in sub.__dict__]
        original = patch_op(cls, injection.op, injection.template_for(path))
        applied.undo.append((cls, injection.op, original))
        reroute_copies(cls, injection.op)
    disable_hiding_caches()
    ACTIVE.append(applied)
    return applied


def remove(applied: _Applied) -> None:
    for step in reversed(applied.undo):
        if callable(step):
            step()
        else:
            cls, op, original = step
            setattr(cls, op, original)
    if applied in ACTIVE:
        ACTIVE.remove(applied)


def inject_bug(op: str, kind: str = "accuracy", *, form: str | None = None,
               paths: tuple[str, ...] = ALL_PATHS, template: str | None = None) -> _Applied:
    """Plant a bug for the rest of the process (what corpus scripts call at their top)."""
    return apply(Injection(op, kind, form, tuple(paths), template))


def plant(spec: str) -> _Applied:
    """Plant a bug given as a spec string (the --inject syntax) for the rest of the process."""
    return apply(parse_spec(spec))


@contextlib.contextmanager
def injected(*injections) -> Iterator[None]:
    """Plant bugs for the duration of a `with` block."""
    applied = [apply(i) for i in injections]
    try:
        yield
    finally:
        for a in reversed(applied):
            remove(a)


def active() -> list:
    return [a.injection for a in ACTIVE]


def parse_spec(spec: str):
    """`op:kind[:form][@path,path]`, e.g. `neg:accuracy:double@cpp,cppvec` (the --inject option);
    or `TARGET:...` for the other targets, e.g. `lowering:sigmoid:accuracy:negate` (see their modules)."""
    head = spec.split("@", 1)[0].split(":", 1)[0]
    if head in spec_types():
        rest = spec[len(head):]
        return spec_class(head).parse(rest[1:] if rest.startswith(":") else rest)
    paths = ALL_PATHS
    if "@" in spec:
        spec, where = spec.split("@", 1)
        paths = tuple(p for p in where.split(",") if p)
    parts = spec.split(":")
    if not parts[0] or len(parts) > 3:
        raise ValueError(f"bad injection {spec!r}: expected op:kind[:form][@paths]")
    kind = parts[1] if len(parts) > 1 else "accuracy"
    form = parts[2] if len(parts) > 2 else None
    if kind not in KINDS:
        raise ValueError(f"bad injection kind {kind!r}; choose from {', '.join(KINDS)}")
    if form is not None and (kind, form) not in TEMPLATES:
        forms = [f for k, f in TEMPLATES if k == kind and f]
        raise ValueError(f"bad {kind} form {form!r}; choose from {', '.join(forms) or 'none'}")
    injection = Injection(parts[0], kind, form, paths)
    check_printed(injection)
    return injection


def bad_spec(specs: list[str]) -> str | None:
    """Plant and remove each spec once: why the first bad one is bad, or None."""
    for spec in specs:
        try:
            with injected(parse_spec(spec)):
                pass
        except (ValueError, AttributeError, KeyError) as exc:
            return f"bad --inject {spec!r}: {exc}"
    return None


def _without_docstring(source: str) -> str:
    import ast

    fn = ast.parse(source).body[0]
    if isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant):
        fn.body = fn.body[1:]
    return ast.unparse(fn)


def injection_source(injections: list) -> str:
    """Standalone code that plants `injections` (for repro.py): needs only torch."""
    import inspect

    from compiler.inject_spec import function_source

    if not injections:
        return ""
    lines = [f"# Planted on purpose through minify's injection API: {'; '.join(i.describe() for i in injections)}"]
    others = [i for i in injections if not isinstance(i, Injection)]
    for patcher in dict.fromkeys(type(i).patcher for i in others):
        lines.append(function_source(patcher))
    lines += [i.call_source() for i in others]
    injections = [i for i in injections if isinstance(i, Injection)]
    if injections:
        lines.append(_without_docstring(inspect.getsource(patch_op)))
    triton = any("triton" in i.printed_paths() for i in injections)
    if triton:
        lines.append(_without_docstring(inspect.getsource(reroute_copies)))
    modules = sorted({PATH_CLASSES[p][0] for i in injections for p in i.printed_paths()})
    lines += [f"import {m}" for m in modules]
    for i in injections:
        for path in i.printed_paths():
            module, name = PATH_CLASSES[path]
            lines.append(f"patch_op({module}.{name}, {i.op!r}, {i.template_for(path)!r})")
            if path == "triton":
                lines.append(f"reroute_copies({module}.{name}, {i.op!r})")
    lines.append("torch._inductor.config.fx_graph_cache = False  # caches would hide the patch")
    lines.append("torch._functorch.config.enable_autograd_cache = False")
    return "\n".join(lines) + "\n"
