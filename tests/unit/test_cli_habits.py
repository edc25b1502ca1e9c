"""Command-line habits (issue 51, item 5): what follows the script or `-m MODULE` is the
program's, as with `python`; errors on standard error; a mistyped subcommand gets a suggestion;
tables in a pipe are wide enough to read; `fuzz` draws a random seed and prints it."""
import io

from minifier.cli import main, parser
from minifier.cli_args import split_program_args


def split(line: str) -> tuple[list[str], list[str]]:
    return split_program_args(line.split(), parser())


def test_what_follows_the_script_or_module_is_the_programs():
    assert split("train.py --steps 2") == (["train.py"], ["--steps", "2"])
    assert split("-m pkg.train --steps 2") == (["-m", "pkg.train"], ["--steps", "2"])
    assert split("-q -o out train.py data.txt -o x") == (["train.py", "-q", "-o", "out"], ["data.txt", "-o", "x"])
    assert split("--ignore layout signed-zero train.py --lr 1") == (  # the script first: not an --ignore value
        ["train.py", "--ignore", "layout", "signed-zero"], ["--lr", "1"])
    # `--` as before: minify's options right after the script, the program's after `--`
    assert split("train.py -o out --max-time 600 -- --epochs 1") == (
        ["train.py", "-o", "out", "--max-time", "600"], ["--epochs", "1"])
    assert split("-m pkg.train -q -- --steps 2") == (["-m", "pkg.train", "-q"], ["--steps", "2"])
    assert split("train.py --steps 2 -q") == (["train.py"], ["--steps", "2", "-q"])  # after the first, all


def test_a_mistyped_subcommand_gets_a_suggestion_on_stderr(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["replya", "some-dir"]) == 2
    said = capsys.readouterr()
    assert not said.out and said.err.strip() == ("minify: unknown command 'replya': did you mean replay? "
                                                 "(minify --help lists the commands)")
    assert main(["bisetc"]) == 2 and "did you mean bisect?" in capsys.readouterr().err


def test_bad_arguments_are_told_on_stderr(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["--frobnicate", "x.py"]) == 2
    said = capsys.readouterr()
    assert not said.out and said.err.startswith("minify: unrecognized arguments: --frobnicate")
    assert main(["fuzz", "--max-examples", "0", "-o", str(tmp_path / "f")]) == 2
    said = capsys.readouterr()
    assert not said.out and said.err.startswith("minify fuzz: --max-examples 0")


def test_a_table_in_a_pipe_is_wide_enough_to_read(monkeypatch):
    from minifier.report.blame import print_blame
    from minifier.report.terminal import PIPE_WIDTH, wide_console

    monkeypatch.delenv("COLUMNS", raising=False)
    out = io.StringIO()
    console = wide_console(out)
    assert console.width == PIPE_WIDTH >= 100
    finding = ("falling back neg (aten.neg.default) to ATen makes it pass: its lowering or the code "
               "generated for it (on every code path tried) is wrong")
    report = {"signature": "accuracy@inductor", "compiles": 6, "seconds": 5.3, "repro": "out",
              "blame": [{"what": "lowering", "finding": finding,
                         "run": {"disable": {"lowerings": ["neg"]}, "verdict": "pass"}}],
              "ruled_out": [{"what": "scalar C++ (no vectorization)", "config": {"cpp.simdlen": 1},
                             "verdict": "reproduces"}]}
    print_blame(report, console)
    text = out.getvalue()
    assert "falling back neg" in text and "lowerings off: neg" in text
    assert "config cpp.simdlen = 1" in text and '{"' not in text  # the runs in words, not JSON
    rows = [line.strip("│ ") for line in text.splitlines() if line.startswith("│")]
    assert all(len(row.split()) > 1 for row in rows if row), text  # not a word a line


def test_fuzz_draws_a_random_seed_unless_given_and_prints_it():
    from rich.console import Console

    from minifier.fuzz.command import options, parser as fuzz_parser, print_summary

    seeds = {options(fuzz_parser().parse_args([])).seed for _ in range(3)}
    assert len(seeds) > 1  # drawn, not a fixed 0
    assert options(fuzz_parser().parse_args(["--seed", "7"])).seed == 7
    out = io.StringIO()
    result = {"failures": [], "outcomes": {"pass": 3}, "examples": 3, "compiles": 3, "masked": 0,
              "stopped": "max_examples", "campaign_seconds": 1.0, "seconds": 1.0, "out": "o", "seed": 1234567}
    print_summary(result, Console(file=out, width=200))
    assert "seed 1234567" in out.getvalue()
