"""The global modes a graph ran under, as repro.py's CONTEXT records them.

Grad mode is already part of CompileSpec; this adds what else changes what a compiled graph
computes: inference mode, autocast (and its dtype) and deterministic algorithms. Call it
where the graph is compiled or first run (the capture's backend) and pass the result as
ReproInfo.context; repro/runner.py re-enters the same modes around the check.
"""

import contextlib

import torch


def current_context(device_type: str = "cpu") -> dict:
    """Only the modes that are on (an empty dict means: plain eager defaults)."""
    context: dict = {}
    if torch.is_inference_mode_enabled():
        context["inference_mode"] = True
    if torch.is_autocast_enabled(device_type):
        context["autocast"] = {"dtype": str(torch.get_autocast_dtype(device_type)).replace("torch.", "")}
    if torch.are_deterministic_algorithms_enabled():
        context["deterministic"] = True
    flags = _tf32_flags() if device_type == "cuda" else None
    if flags and any(flags):  # judged runs turn it off (without_tf32); the numerics verdict says it was on
        context["tf32"] = {"cudnn": flags[0], "matmul": flags[1]}
    return context


@contextlib.contextmanager
def without_tf32():
    """cuDNN and cuBLAS in full fp32 while a run is judged. cuDNN may use TF32 by default
    (torch.backends.cudnn.allow_tf32), and whether it does depends on the algorithm it picks for
    a layout: Inductor hands a convolution channels-last inputs, cuDNN picks a TF32 kernel, eager's
    contiguous call does not, and compiled lands 1000x further from fp64 than eager on a correct
    graph (a ViT patch embedding on an H200). Judged with TF32 off on both sides, only a real
    difference remains. The user's own flags are back as they were afterwards; a build that
    refuses the legacy switches (mixed with the newer fp32_precision API) is left alone."""
    before = _tf32_flags()
    try:
        if before is not None:
            _set_tf32_flags((False, False))
        yield
    finally:
        if before is not None:
            _set_tf32_flags(before)


def _tf32_flags() -> tuple[bool, bool] | None:
    try:
        return torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    except (RuntimeError, AttributeError):
        return None


def _set_tf32_flags(flags: tuple[bool, bool]) -> None:
    """Set even after torch.backends.disable_global_flags() (which importing
    torch.testing._internal.common_utils calls): cuDNN's flags then refuse plain assignment."""
    unlocked = getattr(torch.backends, "__allow_nonbracketed_mutation", contextlib.nullcontext)
    try:
        with unlocked():
            torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = flags
    except (RuntimeError, AttributeError):
        pass


def input_device_type(inputs) -> str:
    """The device a graph runs on: its first tensor input's (cpu when it has none)."""
    return next((x.device.type for x in inputs if isinstance(x, torch.Tensor)), "cpu")


def graph_modes(context: dict, grad_enabled: bool, inputs: list, only_autocast: bool = False):
    """The modes the graph ran under in the script (inference mode, autocast, deterministic
    algorithms), re-entered around a check as repro.py does (run_context).
    `only_autocast`: just the mode that changes dtypes, for work on the graph in minify's
    own process."""
    if only_autocast:
        context = {"autocast": context["autocast"]} if context.get("autocast") else {}
    return run_context({**context, "grad_enabled": grad_enabled}, input_device_type(inputs))


@contextlib.contextmanager
def run_context(context, device):
    """Grad mode, inference mode, autocast and deterministic algorithms as when the graph ran."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(torch.set_grad_enabled(context.get("grad_enabled", True)))
        if context.get("inference_mode"):
            stack.enter_context(torch.inference_mode())
        autocast = context.get("autocast")
        if autocast:
            stack.enter_context(torch.autocast(torch.device(device).type, dtype=getattr(torch, autocast["dtype"])))
        if context.get("deterministic"):
            before = torch.are_deterministic_algorithms_enabled()
            torch.use_deterministic_algorithms(True)
            stack.callback(torch.use_deterministic_algorithms, before)
        yield
