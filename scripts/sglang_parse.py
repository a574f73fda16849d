#!/usr/bin/env python3
"""Parse command lines with the real parser of the SGLang importable by this interpreter.

    PYTHONPATH=/unpacked/wheel python sglang_parse.py < cases.jsonl

One JSON argv array per input line, one JSON result per output line, in the oracle's format
(shared/oracle/README.md, `--reuse-parser batch`): {"argv", "ok", "exit_code", "namespace"} for an
accepted line, {"argv", "ok": false, "exit_code", "error"} for argparse's error (the message after
"<prog>: error: "), exit_code 0 for --help. The parser is built once by sglang_flags.py (torch and
other missing modules stubbed); argparse's own parse_args then runs on each argv.
"""
import contextlib
import enum
import io
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sglang_flags  # noqa: E402


def jsonable(v, taint):
    """A namespace value as JSON, tagged as the oracle tags what JSON lacks."""
    if isinstance(v, sglang_flags._Stub):
        taint.append(v.__name__)
        return {"__stub__": v.__name__}
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else {"__float__": repr(v)}
    if isinstance(v, enum.Enum):
        return {"__enum__": f"{type(v).__name__}.{v.name}", "value": jsonable(v.value, taint)}
    if isinstance(v, (list, tuple)):
        return [jsonable(x, taint) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted((jsonable(x, taint) for x in v), key=lambda x: json.dumps(x, sort_keys=True))
    if isinstance(v, dict):
        return {str(k): jsonable(x, taint) for k, x in v.items()}
    if callable(v):
        mod, qn = getattr(v, "__module__", "") or "", getattr(v, "__qualname__", repr(v))
        return {"__callable__": qn if mod in ("builtins", "") else f"{mod}.{qn}"}
    return {"__repr__": repr(v), "__type__": type(v).__name__}


def parse_one(parser, argv):
    out, err = io.StringIO(), io.StringIO()
    res = {"argv": argv}
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            ns = parser.parse_args(list(argv))
        taint = []
        res.update(ok=True, exit_code=None, namespace={k: jsonable(v, taint) for k, v in sorted(vars(ns).items())})
        if taint:
            res["tainted"] = taint
    except SystemExit as e:
        res.update(ok=False, exit_code=e.code if isinstance(e.code, int) else (0 if e.code is None else 1))
        last = [ln for ln in err.getvalue().splitlines() if ": error: " in ln]
        res["error"] = last[-1].split(": error: ", 1)[1] if last else None
    except Exception as e:
        res.update(ok=False, exit_code=None, exception=f"{type(e).__name__}: {e}")
    return res


def main():
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    for k in [k for k in os.environ if k.startswith(("SGLANG_", "SGL_"))]:
        del os.environ[k]
    sys.argv[0] = "launch_server.py"
    finder = sglang_flags._Finder()
    sys.meta_path.insert(0, finder)
    with contextlib.redirect_stdout(sys.stderr):
        parser = sglang_flags.grab_parser(sglang_flags.import_server_args(finder))
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(parse_one(parser, json.loads(line)), ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
