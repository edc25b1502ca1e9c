"""The codegen templates of planted bugs: where each path prints its ops and how each kind rewrites them.

Shared by the codegen injections (`compiler.inject`) and the fusion-only ones
(`compiler.inject_fusion`), which print the same wrong code under a narrower condition.
"""
from __future__ import annotations

# Where each codegen path prints its ops.
PATH_CLASSES = {
    "cpp": ("torch._inductor.codegen.cpp", "CppOverrides"),
    "cppvec": ("torch._inductor.codegen.cpp", "CppVecOverrides"),
    "triton": ("torch._inductor.codegen.triton", "TritonOverrides"),
}
ALL_PATHS = ("cpp", "cppvec", "triton")

# Templates by kind (and, for accuracy, by form) and path.
TEMPLATES = {
    ("compile_error", None): {p: "compile error!" for p in ALL_PATHS},
    ("runtime_error", None): {  # C++: `throw 1` is no std::exception, so the process aborts
        "cpp": "{out}; throw 1",
        "cppvec": "{out}; throw 1",
        "triton": 'triton_helpers.device_assert_then(({out}) != ({out}), "injected assert fail", {out})',
    },
    ("runtime_error", "exception"): {  # C++: a std::exception, raised in Python as RuntimeError
        "cpp": '[&]{{ throw std::runtime_error("injected runtime error"); return {out}; }}()',
        "cppvec": '[&]{{ throw std::runtime_error("injected runtime error"); return {out}; }}()',
        "triton": 'triton_helpers.device_assert_then(({out}) != ({out}), "injected assert fail", {out})',
    },
    ("runtime_error", "hang"): {  # C++ only: a kernel that never returns (a Triton one could leave
        # the GPU needing a reset). `volatile`: a loop with no side effect may be compiled away
        "cpp": "[&]{{ volatile bool spin = true; while (spin) {{}} return {out}; }}()",
        "cppvec": "[&]{{ volatile bool spin = true; while (spin) {{}} return {out}; }}()",
    },
    ("accuracy", "add_one"): {
        "cpp": "{out} + decltype({out})(1)",
        "cppvec": "{out} + decltype({out})(1)",
        "triton": "{out} + 1",
    },
    ("accuracy", "negate"): {
        "cpp": "decltype({out})(0) - ({out})",
        "cppvec": "decltype({out})(0) - ({out})",
        "triton": "0 - ({out})",
    },
    ("accuracy", "double"): {
        "cpp": "decltype({out})(2) * ({out})",
        "cppvec": "decltype({out})(2) * ({out})",
        "triton": "2 * ({out})",
    },
    ("accuracy", "constant"): {
        "cpp": "decltype({out})(3)",
        "cppvec": "decltype({out})(3)",
        "triton": "({out}) * 0 + 3",
    },
    ("accuracy", "truncate"): {
        "cpp": "std::trunc({out})",
        "cppvec": "({out}).trunc()",
        "triton": "libdevice.trunc({out})",
    },
}
KINDS = ("compile_error", "runtime_error", "accuracy")
