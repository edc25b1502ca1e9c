"""The console summary shows what the user wrote and what torch said as text, never as rich
markup (`torch.cat([a, b], dim=-1)` had its list eaten), and long values fold or are cut at a
word with the count of what was left out, never mid-word without saying so."""
import io
import re

from rich.console import Console

from minifier.report.console import ConsoleUI, print_summary
from minifier.report.cut import cut

# report.json of `minify corpus/neg_float_model.py` (torch 2.13), trimmed to what the summary shows
REPORT = {'status': 'reproduced',
 'script': 'corpus/neg_float_model.py',
 'graphs': [{'index': 0,
             'part': 'forward',
             'dynamo_graph': 0,
             'nodes': 60,
             'failing': True,
             'kind': 'accuracy',
             'message': 'out[0] (float32): differs from eager: max_abs_err=0.2, mismatch_fraction=0.996, '
                        'rmse_ratio=5.08e+05 (first at (0, 0, 0): eager 1.5105071067810059, compiled '
                        '1.4948359727859497)',
             'verdict': 'fail',
             'note': None,
             'stages': {'eager': 'pass',
                        'aot_eager': 'pass',
                        'aot_eager_decomp_partition': 'pass (numerics)',
                        'inductor': 'fail (accuracy)'}}],
 'graph_count': 1,
 'failing_graphs': [0],
 'compiles': 12,
 'cache_hits': 7,
 'worker_restarts': 0,
 'capture_seconds': 24.08,
 'wall_seconds': 46.9,
 'phases': {'capture': 24.08,
            'confirmation': 7.86,
            'stage checks': 1.41,
            'reduction': 8.05,
            'localization': 0.02,
            'verification': 1.14,
            'blame': 5.35},
 'html': 'minify-out/neg_float_model/report.html',
 'issue': 'minify-out/neg_float_model/issue.md',
 'bugs': [{'failing_graph': 0,
           'stage': 'inductor',
           'failure': {'kind': 'accuracy',
                       'rung': 'values',
                       'signature': 'accuracy@inductor',
                       'message': 'out[0] (float32): differs from eager: max_abs_err=0.2, '
                                  'mismatch_fraction=0.996, rmse_ratio=5.08e+05 (first at (0, 0, 0): eager '
                                  '1.5105071067810059, compiled 1.4948359727859497)'},
           'reproduced': '3/3',
           'ops_before': 35,
           'ops_after': 1,
           'ops': ['neg'],
           'repro': 'minify-out/neg_float_model/repro.py',
           'inputs': None,
           'graph_code': 'class Repro(torch.nn.Module):\n'
                         '    def forward(self, arg0):  # arg0: float32[]\n'
                         '        neg = torch.neg(arg0)  # float32[]\n'
                         '        return (neg,)\n',
           'verified': True,
           'verify_line': 'REPRODUCED: out[0] (torch.float32): beyond tolerance, and further from fp64 than '
                          'eager: compiled 2.0, eager -1.0',
           'blame': [{'what': 'lowering',
                      'finding': 'falling back neg (aten.neg.default) to ATen makes it pass: its lowering or '
                                 'the code generated for it (on every code path tried) is wrong',
                      'run': {'disable': {'lowerings': ['neg']}, 'verdict': 'pass'}}],
           'part': 'forward',
           'kernels': [{'name': 'cpp_fused_neg_0'}],
           'first_divergent_nodes': [{'name': 'neg',
                                      'op': 'neg',
                                      'metrics': {'max_abs_err': 5.421495079994202, 'mismatch_fraction': 1.0},
                                      'origin': {'file': 'corpus/neg_float_model.py',
                                                 'line': 20,
                                                 'function': 'rotate_half',
                                                 'code': 'return torch.cat([torch.neg(x2), x1], dim=-1)'},
                                      'kernels': [{'name': 'cpp_fused_add_cat_clone_mul_neg_slice_split_transpose_view_1'}]}]}]}


def summary(report: dict, width: int) -> str:
    out = io.StringIO()
    print_summary(report, Console(file=out, width=width))
    return out.getvalue()


def test_user_code_and_messages_keep_their_brackets():
    text = summary(REPORT, 200)
    assert "neg_float_model.py:20 return torch.cat([torch.neg(x2), x1], dim=-1)" in text
    assert "out[0] (float32): differs from eager" in text  # torch's message, as the report holds it
    assert "REPRODUCED: out[0] (torch.float32)" in text


def test_markup_in_a_message_is_shown_not_obeyed():
    bug = {**REPORT["bugs"][0], "failure": {**REPORT["bugs"][0]["failure"],
                                            "message": "expected [bold]x[/bold] of shape [2, 3] [red]"}}
    text = summary({**REPORT, "bugs": [bug]}, 200)
    assert "expected [bold]x[/bold] of shape [2, 3] [red]" in text


def test_a_progress_line_keeps_its_brackets():
    out = io.StringIO()
    ConsoleUI(Console(file=out, width=200)).step("reducing graph [fw] with x[0] and [/dim] left")
    assert "reducing graph [fw] with x[0] and [/dim] left" in out.getvalue()


def test_a_long_kernel_name_folds_instead_of_being_cut():
    text = summary(REPORT, 80)
    assert "…" not in text
    joined = re.sub(r"\s*│\s*", "", text)  # the folded name's pieces, put back together
    assert "cpp_fused_add_cat_clone_mul_neg_slice_split_transpose_view_1" in joined


def test_a_long_note_is_cut_at_a_word_and_says_how_much_is_left_out():
    note = ("compiled and eager differ by 1 ulp (max abs 1.2e-7, relative 3e-8) on 12 of 1000 elements; "
            "fp64 says compiled is closer to the truth than eager (2 ulps against 3)")
    short = cut(note, 100)
    kept = short.split(" … (")[0]
    assert note.startswith(kept) and note[len(kept)] == " "  # ends at a word
    assert short.endswith(f" … ({len(note) - len(kept)} more characters)")
    assert cut("short", 100) == "short"
