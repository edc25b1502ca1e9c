"""A wrong launch of a user's Triton kernel: Inductor's lowering of `triton_kernel_wrapper_mutation`
(the launch of a `@triton.jit` kernel called from compiled code) passes the kernel's float constant
arguments doubled. The kernel itself is right, and so is every stage before Inductor (eager and
aot_eager launch it with the arguments Dynamo recorded), so the bug is Inductor's handling of
the user's kernel, and a repro that shows it must launch that kernel (compiler/user_kernels.py).

Spec string: `user_kernels:double_float_args`.
"""
from __future__ import annotations

from dataclasses import dataclass

from compiler.inject_spec import BugSpec, check_choice

FORMS = ("double_float_args",)


def patch_user_kernel_launch(form="double_float_args"):
    """Plant a lowering of user Triton kernel launches that doubles their float constant arguments; returns undo."""
    from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table, triton_kernel_wrapper_mutation
    from torch._inductor.lowering import lowerings

    original = lowerings[triton_kernel_wrapper_mutation]

    def doubled(args):
        return {k: v * 2 if isinstance(v, float) else v for k, v in args.items()}

    def double_float_args(*args, constant_args_idx, **kwargs):
        wrong = doubled(kernel_side_table.get_constant_args(constant_args_idx))
        kwargs["kwargs"] = doubled(kwargs["kwargs"])  # a float traced as an argument rather than a constant
        return original(*args, constant_args_idx=kernel_side_table.add_constant_args(wrong), **kwargs)

    lowerings[triton_kernel_wrapper_mutation] = double_float_args

    def undo():
        lowerings[triton_kernel_wrapper_mutation] = original

    return undo


@dataclass(frozen=True)
class UserKernelBug(BugSpec):
    """Inductor launches a user's Triton kernel wrongly (`form`: what goes wrong)."""

    form: str = "double_float_args"

    target = "user_kernels"
    patcher = staticmethod(patch_user_kernel_launch)

    def __post_init__(self):
        check_choice("user_kernels form", self.form, FORMS)

    @staticmethod
    def parse(body: str) -> "UserKernelBug":
        if ":" in body:
            raise ValueError(f"bad user_kernels injection {body!r}: expected user_kernels[:FORM]")
        return UserKernelBug(body or "double_float_args")
