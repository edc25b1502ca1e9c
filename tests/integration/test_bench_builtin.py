"""The built-in minifier the bench times runs as torch's fixed launcher would: torch 2.11 copies the
dump run's TORCHDYNAMO_REPRO_AFTER/LEVEL into minifier_launcher.py, which broke its `minify
--no-isolate` ("Input graph did not fail the tester"); and the README table comes from one
command, under a line naming its run."""
import re

from minifier.bench.builtin import REPRO_ENV, fair_launcher, failure_line, minify_step
from minifier.bench.cases import project_env
from minifier.bench.markdown import markdown, run_facts
from minifier.bench.score import Row

# The environment prelude torch 2.11 writes at the top of a launcher dumped under
# TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=4 (torch/_dynamo/debug_utils.py there).
PRELUDE_2_11 = ("import os\nos.environ['TORCHINDUCTOR_AUTOGRAD_CACHE'] = '0'\n"
                "os.environ['TORCHDYNAMO_REPRO_AFTER'] = 'aot'\nos.environ['TORCHDYNAMO_REPRO_LEVEL'] = '4'\n")


def test_the_launcher_the_bench_runs_does_not_reset_the_repro_variables_under_no_isolate(tmp_path):
    launcher = tmp_path / "case" / "torch_compile_debug" / "run_1" / "minifier" / "minifier_launcher.py"
    launcher.parent.mkdir(parents=True)
    # after the prelude: what the launcher's minify process sees (the real one would minify here)
    launcher.write_text(PRELUDE_2_11 + "import sys\nprint('seen', os.environ.get('TORCHDYNAMO_REPRO_AFTER'), "
                                       "os.environ.get('TORCHDYNAMO_REPRO_LEVEL'), sys.argv[1:])\n"
                                       "print('Made 1 queries')\n")
    env = {**project_env(), "TORCHDYNAMO_REPRO_AFTER": "aot", "TORCHDYNAMO_REPRO_LEVEL": "4"}  # the dump run's
    result = minify_step(launcher, env, no_isolate=True, timeout=120)
    log = (tmp_path / "case" / "minify.log").read_text()
    assert "seen None None ['minify', '--no-isolate']" in log
    assert result["outcome"] == "ok" and result["queries"] == 1 and "failure" not in result
    assert sorted(result["launcher_fixed"]) == sorted(REPRO_ENV)
    assert "TORCHINDUCTOR_AUTOGRAD_CACHE" in launcher.read_text()  # the rest of the prelude stays


def test_a_launcher_torch_already_wrote_right_is_left_as_it_is():
    from torch._dynamo.debug_utils import generate_env_vars_string

    text = generate_env_vars_string() + "\nprint('body')\n"
    fixed, dropped = fair_launcher(text)
    if not re.search(r"os\.environ\['TORCHDYNAMO_REPRO_(AFTER|LEVEL)'\] =", text):  # torch 2.13: pops them
        assert fixed == text and dropped == []


def test_a_failing_builtin_step_says_why_in_the_json_and_the_markdown(tmp_path):
    launcher = tmp_path / "case" / "torch_compile_debug" / "run_1" / "minifier" / "minifier_launcher.py"
    launcher.parent.mkdir(parents=True)
    launcher.write_text("raise RuntimeError('Input graph did not fail the tester')\n")
    result = minify_step(launcher, project_env(), no_isolate=True, timeout=120)
    assert result["outcome"] == "RuntimeError: Input graph did not fail the tester"
    assert result["failure"] == "minify step rc 1: RuntimeError: Input graph did not fail the tester"
    assert failure_line("W1127 noise\nTraceback (most recent call last):\nValueError: bad\nexiting\n") == \
        "ValueError: bad"
    row = Row("relu_case", "accuracy", exit_code=0, graph_ok=True, stage_ok=True, kind_ok=True, culprit_ok=True,
              verified=True, ops_after=1, min_ops=1, compiles=11, wall=15.5,
              builtin={**result, "seconds": 48.1})
    facts = run_facts(["cpu"])
    text = markdown([row], facts, True, "minify bench --vs-builtin --no-isolate --fresh-cache")
    head = text.splitlines()[0]
    for value in facts.values():
        assert value in head
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", facts["date"]) and facts["commit"] != "unknown"
    assert ('| relu_case | 15.5 s | 11 | 48.1 s | fails: "minify step rc 1: RuntimeError: Input graph did not '
            'fail the tester" | 0.32x |') in text
