#!/usr/bin/env bash
# Run the cuda-marked tests as parallel slices (device run only; not part of the project).
export TORCHINDUCTOR_FX_GRAPH_CACHE=0 PYTHONUNBUFFERED=1 PYTHONPATH=.
python -c "import torch; print(torch.__version__, torch.cuda.get_device_name())"
slices=("tests/test_cuda.py -k 'accuracy or compile_error'" "tests/test_cuda.py -k 'multigraph or runtime_error'"
 "tests/test_corpus_end_to_end.py -k 'triton_sigmoid_compile_error or triton_tanh_runtime_error'"
 "tests/test_corpus_end_to_end.py -k 'triton_rsqrt_accuracy_fp16 or triton_indexing_embedding'"
 "tests/test_corpus_end_to_end.py -k 'triton_abs_channels_last_multigraph or triton_relu_compile_error or triton_relu_multigraph'"
 "tests/test_corpus_end_to_end.py -k 'triton_relu_runtime_error or triton_relu_accuracy'")
i=0
for s in "${slices[@]}"; do
  eval "timeout 540 python -m pytest -m cuda -q -p no:cacheprovider $s" > "$OUT/slice$i.log" 2>&1 &
  i=$((i+1))
done
wait
for f in "$OUT"/slice*.log; do echo "== $f"; tail -n 4 "$f"; done
grep -h "FAILED\|^E " "$OUT"/slice*.log | head -40
