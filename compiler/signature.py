"""Failure signatures: what makes two failures the same bug.

A candidate reproduces only if its signature equals the original's, so the normalization
here decides what may change during reduction (temp paths, addresses, kernel and variable
numbering, sizes) and what may not (stage, failure kind, exception type, the error itself,
and for a wrong answer the rung of the oracle's ladder that fired: a NaN where eager has a
number is another bug than a value off by 2%).
"""
import re
import signal

# Exceptions that only wrap the real one.
WRAPPER_TYPES = ("BackendCompilerFailed", "InductorError")
COMPILE_ERROR_TYPES = ("BackendCompilerFailed", "InductorError", "CppCompileError",
                       "LoweringException", "CompilationError")


def unwrap(exc: BaseException) -> BaseException:
    """The innermost exception that is not just a wrapper."""
    seen = 0
    while type(exc).__name__ in WRAPPER_TYPES and seen < 10:
        inner = getattr(exc, "inner_exception", None) or exc.__cause__
        if inner is None:
            break
        exc, seen = inner, seen + 1
    return exc


def is_compile_error(exc: BaseException) -> bool:
    """Raised while compiling (wrapped by Dynamo/Inductor), not by the compiled code."""
    names = {type(exc).__name__, type(unwrap(exc)).__name__}
    return bool(names & set(COMPILE_ERROR_TYPES))


def key_line(message: str) -> str:
    """The line that identifies an error: a compiler's first `error:` line, else the first line."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    for line in lines:
        if re.search(r"\berror\b:", line):
            return line[re.search(r"\berror\b:", line).start():]
    return lines[0] if lines else ""


def normalize(text: str) -> str:
    """Strip what varies between runs of the same bug: paths, addresses, numbering, sizes."""
    text = text.replace("\u2018", "'").replace("\u2019", "'")
    text = re.sub(r"0x[0-9a-fA-F]+", "0x?", text)
    text = re.sub(r"(/[\w.\-+]+)+/?", "<path>", text)
    text = re.sub(r"\b(tmp|buf|arg|in_ptr|out_ptr|x|xindex|r|kernel)\d+", r"\1N", text)
    text = re.sub(r"\d+", "N", text)
    return re.sub(r"\s+", " ", text).strip()[:300]


def exception_signature(exc: BaseException, stage: str) -> tuple:
    """(kind, signature, one-line message) for an exception raised by compiled code or its compile."""
    kind = "compile_error" if is_compile_error(exc) else "runtime_error"
    inner = unwrap(exc)
    line = key_line(str(inner))
    sig = f"{kind}@{stage}|{type(inner).__name__}|{normalize(line)}"
    return kind, sig, f"{type(inner).__name__}: {line}"[:500]


def crash_signature(returncode: int, stage: str) -> tuple:
    """(kind, signature, message) for a process killed by a signal or exiting abnormally."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
    else:
        name = f"exit {returncode}"
    return "crash", f"crash@{stage}|{name}", f"process died: {name}"


def hang_signature(seconds: float, stage: str) -> tuple:
    return "hang", f"hang@{stage}", f"no answer within {seconds:.0f} s"


def ladder_signature(kind: str, stage: str, rung: str) -> str:
    """`accuracy@inductor|nan_inf`, `layout@inductor|layout`; the values rung (the oldest, and
    the most common) is plain `accuracy@inductor`."""
    return f"{kind}@{stage}" if rung == "values" else f"{kind}@{stage}|{rung}"


def accuracy_signature(stage: str, rung: str = "values") -> str:
    return ladder_signature("accuracy", stage, rung)


def rung_of(signature: str) -> str:
    """The oracle's rung a signature names: `exception` for compile errors, runtime errors,
    crashes and hangs; `values` for a plain `accuracy@stage`."""
    head, _, rest = signature.partition("|")
    kind = head.split("@", 1)[0]
    if kind not in ("accuracy", "layout"):
        return "exception"
    return rest or "values"


# Lines Dynamo adds to every error it raises or wraps: advice and context, never the error itself.
ADVICE = (r"Set TORCHDYNAMO_VERBOSE=1", r"For even more developer context", r"You can suppress this exception",
          r"from user code:", r"Explanation:", r"Hint:", r"Developer debug context:", r"For more details about",
          r"File \"", r"torch\._dynamo\.config\.suppress_errors", r"import torch\._dynamo", r"\^+$",
          r"While executing ", r"Original traceback:", r"Use tlparse", r"To log all")
# Dynamo's own exceptions that carry a user's error (raised while tracing on fake tensors).
DYNAMO_WRAPPERS = ("TorchRuntimeError", "BackendCompilerFailed", "InternalTorchDynamoError", "Unsupported",
                   "UserError", "InductorError")


def meaningful_line(message: str) -> str:
    """The message's first line that says what went wrong (not one of Dynamo's advice lines)."""
    for line in message.splitlines():
        line = line.strip()
        if line and not any(re.match(advice, line) for advice in ADVICE):
            return line
    return ""


def core_error(type_name: str, message: str) -> tuple[str, str]:
    """(type, line) of the error under Dynamo's wrappers, read from the text: a fake-tensor error
    `... got RuntimeError('a and b must ...')` is that RuntimeError; a wrapper whose text starts
    `RuntimeError: ...` is that RuntimeError."""
    name = type_name.rsplit(".", 1)[-1]
    seen = 0
    while name in DYNAMO_WRAPPERS and seen < 5:
        seen += 1
        got = re.search(r"got (\w+(?:Error|Exception))\((['\"])(.*?)\2\)", message, re.S)
        head = re.match(r"\s*(?:[\w.]+\.)?(\w+(?:Error|Exception)): (.*)", message, re.S)
        if got:
            name, message = got.group(1), got.group(3)
        elif head and head.group(1) not in ("UserError",):
            name, message = head.group(1), head.group(2)
        else:
            break
    return name, meaningful_line(message)


def program_signature(type_name: str, message: str) -> str:
    """A program failure's signature: the core exception type and its first meaningful line,
    normalized (numbers, addresses, paths); never an advice line."""
    name, line = core_error(type_name, message)
    line = re.sub(r"\b[su]\d+\b", "N", line)  # a dynamic size's symbol (s0, u1) where eager has its value
    return f"{name}: {normalize(line)}" if line else name


EXCEPTION_LINE = re.compile(r"^((?:[A-Za-z_][\w]*\.)*\w*(?:Error|Exception|Exit|Interrupt|Warning|"
                            r"Unsupported|Iteration|Failure|Failed))(?:: (.*))?$")


def last_exception(stderr: str) -> tuple[str, str] | None:
    """(type, message) of the exception that ended a Python process, from its stderr (the
    last traceback's exception line and the message lines after it); None if it shows none."""
    lines = stderr.splitlines()
    start = max((i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")),
                default=None)
    if start is None:
        return None
    for i in range(start + 1, len(lines)):
        found = EXCEPTION_LINE.match(lines[i]) if not lines[i].startswith(" ") else None
        if found:
            return found.group(1), "\n".join([found.group(2) or "", *lines[i + 1:]])
    return None
