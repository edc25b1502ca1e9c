"""The nodes a device-side assert came from: the kernel named by its wait, looked up in the
kernel map of the same compile (either form: Kernel objects in the worker, dicts on the wire)."""
from compiler.device_asserts import kernel_name
from compiler.kernels import Kernel, nodes_of

KERNELS = [{"name": "triton_poi_fused_add_0", "kind": "triton", "nodes": ["add"]},
           {"name": "triton_poi_fused_mul_relu_1", "kind": "triton", "nodes": ["mul", "relu"]},
           {"name": "extern_kernels.mm", "kind": "extern", "nodes": ["mm"]}]


def test_the_named_kernels_nodes_in_either_form():
    assert nodes_of(["triton_poi_fused_mul_relu_1"], KERNELS) == ["mul", "relu"]
    assert nodes_of(["triton_poi_fused_mul_relu_1"], [Kernel(**k) for k in KERNELS]) == ["mul", "relu"]
    assert nodes_of(["triton_poi_fused_add_0", "triton_poi_fused_mul_relu_1"], KERNELS) == ["add", "mul", "relu"]


def test_a_kernel_not_in_the_map_names_no_node():
    assert nodes_of([""], KERNELS) == [] and nodes_of(["triton_poi_fused_relu_2"], KERNELS) == []


def test_the_name_is_inductors_where_it_says_one_else_the_functions():
    class Fn:
        __name__ = "triton_poi_fused_relu_0"

    class Launcher:
        fn = Fn()
        inductor_meta: dict = {}

    assert kernel_name(Launcher()) == "triton_poi_fused_relu_0"
    Launcher.inductor_meta = {"kernel_name": "triton_poi_fused_relu_7"}
    assert kernel_name(Launcher()) == "triton_poi_fused_relu_7"
