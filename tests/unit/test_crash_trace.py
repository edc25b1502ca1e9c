"""The kernel a crashed process ran, read from its fault handler's stacks: the first frame whose
line (in the file it names) calls one of Inductor's kernels; a frame elsewhere names none. And
from its marks file, where each C++ kernel of a compiled wrapper writes its name while it runs."""
import mmap
import os
import time
import types

import pytest

from compiler.crash_trace import MARK_WIDTH, crashed_kernel, kernel_mark, mark_kernels, marks_path, running_kernel

WRAPPER = """def call(args):
    buf0 = empty_strided_cpu((4, 4), (4, 1), torch.float32)
    extern_kernels.mm(arg0_1, arg1_1, out=buf0)
    cpp_fused_add_relu_tanh_1(buf0)
    triton_poi_fused_sin_0.run(arg0_1, buf1, 16, stream=stream0)
    return (buf0, )
"""


def _dump(path, line: int) -> str:
    return ("Fatal Python error: Aborted\n\nCurrent thread 0x00007f7cf1bc1b80 (most recent call first):\n"
            f'  File "{path}", line {line} in call\n  File "/tmp/x/script.py", line 5 in f\n')


def test_the_frame_in_the_wrapper_names_the_kernel_it_calls(tmp_path):
    wrapper = tmp_path / "cabc.py"
    wrapper.write_text(WRAPPER)
    assert crashed_kernel(_dump(wrapper, 4)) == "cpp_fused_add_relu_tanh_1"
    assert crashed_kernel(_dump(wrapper, 5)) == "triton_poi_fused_sin_0"


def test_a_frame_on_another_line_or_in_no_file_names_none(tmp_path):
    wrapper = tmp_path / "cabc.py"
    wrapper.write_text(WRAPPER)
    assert crashed_kernel(_dump(wrapper, 3)) is None  # an extern kernel: no kernel of Inductor's own
    assert crashed_kernel(_dump(tmp_path / "gone.py", 4)) is None
    assert crashed_kernel("Segmentation fault (core dumped)") is None


def test_a_marked_kernel_names_itself_while_it_runs_and_only_then(tmp_path):
    """A wrapper module's `cpp_*` globals are wrapped; others (an extern call, a Triton kernel,
    a class) are not. Inside the kernel the file names it and when it started; after it
    returns or raises, nothing."""
    path = marks_path(tmp_path, os.getpid())
    path.write_bytes(bytes(MARK_WIDTH))
    seen = []

    def kernel(fail):
        seen.append(running_kernel(path))
        name, since = kernel_mark(path)
        assert name == "cpp_fused_relu_0" and abs(time.time() - since) < 60
        if fail:
            raise RuntimeError("kernel failed")
        return 7

    triton = object()
    module = types.SimpleNamespace(cpp_fused_relu_0=kernel, triton_poi_fused_0=triton, cpp_kernel_class=dict,
                                   extern=kernel)
    with open(path, "r+b") as f, mmap.mmap(f.fileno(), MARK_WIDTH) as marks:
        mark_kernels(module, marks)
        assert module.extern is kernel and module.triton_poi_fused_0 is triton and module.cpp_kernel_class is dict
        assert module.cpp_fused_relu_0(False) == 7 and running_kernel(path) is None
        with pytest.raises(RuntimeError):
            module.cpp_fused_relu_0(True)
        assert running_kernel(path) is None and kernel_mark(path) is None
    assert seen == ["cpp_fused_relu_0", "cpp_fused_relu_0"]
    assert running_kernel(tmp_path / "absent") is None
