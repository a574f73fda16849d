#!/usr/bin/env python3
"""Print the flag set of the SGLang importable by this interpreter, as sglang-launch's flag data.

    python3 sglang_flags.py            # one JSON object on stdout
    PYTHONPATH=/unpacked/wheel python3 sglang_flags.py

Builds SGLang's own server-argument parser the way SGLang does (`prepare_server_args` builds an
`ArgumentParser` and calls `parse_args`; the call is intercepted and the parser kept, nothing is
parsed or constructed) without importing torch: torch and triton are always served as inert
stubs, and any other top-level module SGLang's own code fails to import is stubbed and the import
retried (optional imports SGLang guards stay missing, as on an install without that extra).

Output (stdout, one line): {"ok": true, "sglang_version", "location", "python", "stubbed",
"flags": {"version", "prog", "allow_abbrev", "actions": [...]}, "envs"}, each action holding facts
only (option strings, dest, kind, nargs, const, default, type, choices in argparse's order,
required, deprecation), and "envs" the install's environment registry read statically from its
environ.py ({"typed_registry", "sgl_prefix_rewrite", "registry", "deprecated"}, or null); or
{"ok": false, "error": "..."} with exit status 1. Stdlib only: sglang-launch embeds this file and
runs it with the user's interpreter (a release it has no data for, or an install that is not the
release its version names).
"""
import abc
import argparse
import ast
import enum
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import re
import sys

ALWAYS_STUBBED = {"torch", "triton"}

KINDS = {
    "_StoreAction": "store",
    "_StoreTrueAction": "store_true",
    "_StoreFalseAction": "store_false",
    "_StoreConstAction": "store_const",
    "BooleanOptionalAction": "boolean_optional",
    "_HelpAction": "help",
    "LoRAPathAction": "lora_paths",
    "DeprecatedStoreTrueAction": "store_true",
    "DeprecatedStoreConstAction": "deprecated_store_const",
    "DeprecatedAction": "deprecated",
    # 0.5.14+: an old spelling that stores its value as the new option does (and warns)
    "DeprecatedAliasStoreAction": "store",
}

TYPES = {
    None: "none",
    "str": "str",
    "bool": "bool",
    "int": "int",
    "float": "float",
    "loads": "json",
    "json_list_type": "json_list",
    "human_readable_int": "human_int",
    "nullable_str": "nullable_str",
    "parse_cuda_graph_backend_arg": "cuda_graph_backend",
    "parse_cuda_graph_config_arg": "cuda_graph_config",
}


class _Stub(abc.ABCMeta):
    """A stub value: a class (so SGLang can subclass it, next to ABC too) whose attributes, calls
    and items are more stubs; called with one callable it returns it (decorators); falsy, empty."""

    def __new__(mcls, name, bases=(), ns=None, **kw):
        return super().__new__(mcls, name, bases, dict(ns or {}))

    def __init__(cls, name, bases=(), ns=None, **kw):
        super().__init__(name, bases, dict(ns or {}))

    def __getattr__(cls, name):
        return _attr(cls.__name__, name)

    def __call__(cls, *a, **k):
        if len(a) == 1 and not k and callable(a[0]) and not isinstance(a[0], _Stub):
            return a[0]
        return _Stub(cls.__name__ + "()")

    def _stub(cls, *a, **k):
        return _Stub(cls.__name__ + "<op>")

    def _false(cls, *a):
        return False

    def _zero(cls):
        return 0

    __getitem__ = __or__ = __ror__ = __neg__ = __pos__ = __abs__ = __invert__ = _stub
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __matmul__ = _stub
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __pow__ = _stub
    __and__ = __rand__ = __xor__ = __lshift__ = __rshift__ = _stub
    __lt__ = __gt__ = __le__ = __ge__ = __contains__ = __bool__ = _false
    __len__ = __int__ = __index__ = _zero

    def __setitem__(cls, k, v):
        pass

    def __iter__(cls):
        return iter(())

    def __float__(cls):
        return 0.0

    def __hash__(cls):
        return id(cls)

    def register(cls, *a, **k):
        return a[0] if a else None


class _StubModule(type(sys)):
    def __getattr__(self, name):
        return _attr(self.__name__, name)


_ABSENT = object()

# What a CPU-only torch and a GPU-less triton answer (platform probes at import time).
OVERRIDES = {
    "torch": {"__version__": "2.14.1", "npu": _ABSENT, "hpu": _ABSENT, "mps": _ABSENT, "musa": _ABSENT},
    "torch.version": {"cuda": None, "hip": None, "musa": _ABSENT, "xpu": None, "git_version": "stub"},
    "triton": {"__version__": "3.8.0"},
    "triton.runtime.driver": {"active": RuntimeError("0 active drivers ([]). There should only be one.")},
    "transformers": {"__version__": "5.19.0"},
    "torch.library.Library().m": {"name": "sglang"},
}


def _attr(owner, name):
    """A stub's attribute: an override, else a further stub (dunders stay missing, as Python's
    protocol probes expect, except a method's `__func__`, which SGLang's patches read)."""
    overrides = OVERRIDES.get(owner, {})
    if name in overrides:
        v = overrides[name]
        if v is _ABSENT:
            raise AttributeError(name)
        if isinstance(v, Exception):
            raise v
        return v
    if name.startswith("__") and name.endswith("__") and name != "__func__":
        raise AttributeError(name)
    return _Stub(owner + "." + name)


# transformers' torch modeling code cannot run on a stub torch: blocked (SGLang's import-time
# compat patches import it inside try/except ImportError), while its config classes load.
BLOCKED = {"transformers.modeling_utils"}


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves stub modules for `roots`: always for ALWAYS_STUBBED (never import torch), else
    only when the module is not installed."""

    def __init__(self):
        self.roots = set(ALWAYS_STUBBED)
        self.served = set()

    def find_spec(self, fullname, path, target=None):
        if fullname in BLOCKED:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        root = fullname.split(".")[0]
        if root not in self.roots:
            return None
        if root not in ALWAYS_STUBBED and importlib.machinery.PathFinder.find_spec(root):
            return None
        self.served.add(root)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        m = _StubModule(spec.name)
        m.__path__ = []
        return m

    def exec_module(self, module):
        pass


def hide_stubs_from_third_party(finder):
    """`importlib.util.find_spec` answers None for a stub unless SGLang's own code asks: other
    packages (transformers' backend probes) then see torch as absent and leave their torch code
    alone, whether or not a real torch is installed, while SGLang sees the stubs."""
    orig = importlib.util.find_spec

    def find_spec(name, package=None):
        spec = orig(name, package)
        if spec is not None and spec.loader is finder:
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller != "sglang" and not caller.startswith("sglang."):
                return None
        return spec

    importlib.util.find_spec = find_spec


def llama_placeholder():
    """SGLang's transformers compat patches import `transformers.models.llama.modeling_llama` to
    alias one class for remote code; with torch stubbed that module cannot load. A placeholder
    with that class stands in (the alias has no bearing on the parser)."""
    name = "transformers.models.llama.modeling_llama"
    try:
        pkg = importlib.import_module("transformers.models.llama")
    except Exception:
        return
    m = type(sys)(name)
    m.__spec__ = importlib.machinery.ModuleSpec(name, None)
    m.LlamaAttention = type("LlamaAttention", (), {"__module__": name})
    sys.modules[name] = m
    try:
        setattr(pkg, "modeling_llama", m)
    except Exception:
        pass


def _importer_of(exc):
    """The module whose code raised exc (innermost frame outside importlib)."""
    tb, name = exc.__traceback__, None
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith("<frozen importlib"):
            name = tb.tb_frame.f_globals.get("__name__")
        tb = tb.tb_next
    return name or "?"


def import_server_args(finder):
    for _ in range(100):
        try:
            return importlib.import_module("sglang.srt.server_args")
        except ModuleNotFoundError as e:
            root = (e.name or "").split(".")[0]
            importer = _importer_of(e)
            if not root or root == "sglang" or root in finder.roots or not importer.startswith("sglang"):
                raise
            finder.roots.add(root)
            for m in [m for m in sys.modules if m == "sglang" or m.startswith("sglang.")]:
                del sys.modules[m]
    raise RuntimeError("too many missing modules")


class _Grabbed(BaseException):
    pass


def grab_parser(sa):
    real = argparse.ArgumentParser.parse_args

    def grab(self, args=None, namespace=None):
        raise _Grabbed(self)

    argparse.ArgumentParser.parse_args = grab
    try:
        sa.prepare_server_args(["--model-path", "sglang-launch-extractor"])
    except _Grabbed as g:
        return g.args[0]
    finally:
        argparse.ArgumentParser.parse_args = real
    raise RuntimeError("prepare_server_args never called parse_args")


def plain(v):
    """A default/const/choice as JSON; values JSON lacks are tagged as the oracle tags them."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else {"__float__": repr(v)}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted((plain(x) for x in v), key=lambda x: json.dumps(x, sort_keys=True))
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, enum.Enum):
        return {"__enum__": f"{type(v).__name__}.{v.name}", "value": plain(v.value)}
    if isinstance(v, _Stub):
        raise RuntimeError(f"a stub value reached the parser: {v.__name__}")
    if callable(v):
        return {"__callable__": getattr(v, "__qualname__", repr(v))}
    return {"__repr__": repr(v), "__type__": type(v).__name__}


def kind_of(a):
    cls = type(a)
    if cls.__name__ in KINDS:
        return KINDS[cls.__name__]
    raise RuntimeError(f"unknown action class {cls.__module__}.{cls.__name__} for {a.option_strings}")


def type_of(a):
    name = None if a.type is None else getattr(a.type, "__name__", repr(a.type))
    if name not in TYPES:
        raise RuntimeError(f"unknown type {name} for {a.option_strings}")
    return TYPES[name]


def action(parser, a):
    extra = vars(a)
    act = {
        "option_strings": list(a.option_strings),
        "dest": a.dest,
        "kind": kind_of(a),
        "nargs": "1" if a.nargs is None else str(a.nargs),
        "const": plain(extra["const_value"] if "const_value" in extra else a.const),
        "default": plain(a.default),
        "default_is_suppress": a.default == argparse.SUPPRESS,
        "value_type": type_of(a),
        # argparse lists choices in container order (a set's order is PYTHONHASHSEED's)
        "choices": None if a.choices is None else [plain(c) for c in a.choices],
        "required": a.required,
        "deprecated_for": plain(extra.get("new_flag")),
    }
    if act["kind"] == "deprecated":
        act.update(deprecated_outcome(parser, a))
    return act


def deprecated_outcome(parser, a):
    """What using a deprecated option does, found by calling the action: nothing (a warning),
    argparse's error (0.5.18+ with an error message), or an exception (0.4.0-0.5.7 raise
    ValueError). The message is SGLang's prose and is not kept."""
    ns, err = argparse.Namespace(), sys.stderr
    sys.stderr = open(os.devnull, "w")
    try:
        a(parser, ns, [] if a.nargs == 0 else None, a.option_strings[0])
        return {}
    except SystemExit:
        return {"deprecated_error": True}
    except Exception as e:
        return {"deprecated_error": True, "deprecated_exception": type(e).__name__}
    finally:
        sys.stderr.close()
        sys.stderr = err


def sglang_version():
    try:
        from importlib.metadata import version

        return version("sglang")
    except Exception:
        return getattr(sys.modules.get("sglang.version"), "__version__", None)


# The environment registry, read statically from sglang/srt/environ.py (nothing of it imported):
# the typed `class Envs` (`NAME = EnvBool(default)`, ...) and its deprecation tables. Shared with
# scripts/gen-envs.py, which reads every release the same way.
ENV_KINDS = {"EnvBool": "bool", "EnvBoolWithAlias": "bool", "EnvInt": "int", "EnvIntWithAlias": "int",
             "EnvStr": "str", "EnvStrWithAlias": "str", "EnvFloat": "float", "EnvJSON": "json",
             "EnvTuple": "tuple"}


def _literal(node):
    try:
        v = ast.literal_eval(node)
    except Exception:
        return None
    return v if isinstance(v, (bool, int, float, str, type(None))) else str(v)


def _call_name(node):
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def env_registry(tree):
    """The typed variables of `class Envs`, by name: name, type, default, deprecated alias."""
    out = []
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and node.name == "Envs"):
            continue
        for st in node.body:
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                    and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name)
                    and st.value.func.id.startswith("Env")):
                continue
            call = st.value
            alias = next((_literal(k.value) for k in call.keywords if k.arg == "deprecated_name"), None)
            out.append({"name": st.targets[0].id, "type": ENV_KINDS.get(call.func.id, "str"),
                        "default": _literal(call.args[0]) if call.args else None, "alias": alias})
    return sorted(out, key=lambda r: r["name"])


def _deprecation_order(tree):
    """True when `_print_deprecated_env` takes (old, new): its first parameter names the old one.

    The helper took (new, old) until 0.5.10; 0.5.11 swapped the parameters while most calls kept
    their (new, old) arguments, so what the release does is read off the signature, not the calls.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "_print_deprecated_env" and node.args.args:
            return node.args.args[0].arg.startswith("old")
    return False


def _transform_name(node):
    """`_invert_bool` -> "invert_bool": the conversion SGLang applies to the old variable's value."""
    return node.id.lstrip("_") if isinstance(node, ast.Name) else None


def env_deprecated(tree):
    """(old name, replacement or None, value transform) from environ.py's deprecation helpers and tables."""
    out = {}
    old_first = _deprecation_order(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node) == "_print_deprecated_env" and node.args:
            args = [_literal(a) for a in node.args[:2]] + [None]
            old, new = (args[0], args[1]) if old_first or len(node.args) == 1 else (args[1], args[0])
            if isinstance(old, str):
                out[old] = (new, None)
        elif isinstance(node, ast.Call) and _call_name(node) == "_warn_deprecated_env_to_cli_flag" and node.args:
            old = _literal(node.args[0])
            if isinstance(old, str):
                out.setdefault(old, (None, None))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if not (isinstance(target, ast.Name) and target.id in ("_DEPRECATED_ENVS", "_deprecated_ms_to_s")):
                continue
            for k, v in zip(node.value.keys, node.value.values):
                old = _literal(k) if k is not None else None
                if not isinstance(old, str):
                    continue
                if isinstance(v, ast.Call):
                    kw = {a.arg: a.value for a in v.keywords}
                    repl = _literal(kw["replacement"]) if "replacement" in kw else (
                        _literal(v.args[0]) if v.args else None)
                    out[old] = (repl, _transform_name(kw.get("transform")))
                else:
                    ms = target.id == "_deprecated_ms_to_s"
                    out[old] = (_literal(v), "ms_to_s" if ms else None)
    rows = []
    for name, (replacement, transform) in sorted(out.items()):
        row = {"name": name, "replacement": replacement}
        if transform:
            row["transform"] = transform
        rows.append(row)
    return rows


def rewrites_sgl_prefix(text):
    """environ.py rewrites SGL_* to SGLANG_* at import."""
    return bool(re.search(r"startswith\(\s*[\"']SGL_[\"']\s*\)", text))


def environ_of(package_dir):
    """The install's environment registry (None when it has no environ.py)."""
    path = os.path.join(package_dir, "srt", "environ.py")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return None
    reg = env_registry(tree)
    return {"typed_registry": bool(reg), "sgl_prefix_rewrite": rewrites_sgl_prefix(text), "registry": reg,
            "deprecated": env_deprecated(tree)}



def extract():
    for k in [k for k in os.environ if k.startswith(("SGLANG_", "SGL_"))]:
        del os.environ[k]  # some choices and defaults read them
    sys.argv[0] = "launch_server.py"  # old releases' prog is argv[0]'s basename
    finder = _Finder()
    sys.meta_path.insert(0, finder)
    hide_stubs_from_third_party(finder)
    llama_placeholder()
    stdout, sys.stdout = sys.stdout, sys.stderr  # SGLang's prints must not reach the JSON
    try:
        sa = import_server_args(finder)
        parser = grab_parser(sa)
        actions = [action(parser, a) for a in parser._actions]
    finally:
        sys.stdout = stdout
    version = sglang_version()
    package = getattr(sys.modules["sglang"], "__file__", None)
    location = os.path.dirname(os.path.abspath(package)) if package else None
    return {
        "ok": True,
        "sglang_version": version,
        "location": location,
        "python": sys.version.split()[0],
        "stubbed": sorted(finder.served),
        "flags": {"version": version, "prog": parser.prog, "allow_abbrev": parser.allow_abbrev, "actions": actions},
        "envs": environ_of(location) if location else None,
    }


def main():
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    try:
        out = extract()
    except BaseException as e:  # SystemExit too: nothing SGLang raises may escape as non-JSON
        print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"}))
        sys.exit(1)
    print(json.dumps(out, ensure_ascii=False, separators=(",", ":")))


if __name__ == "__main__":
    main()
