#!/usr/bin/env python3
"""Turn an oracle schema dump (SGLang's real argparse parser) into the launcher's flag data.

Facts only: option strings, dest, action kind, nargs, const, default, type, choices, required,
and the replacement named by deprecated actions. No help text is kept.

    scripts/gen-flags.py ../shared/sglang/schema-0.5.23.json > data/flags/0.5.23.json

A new SGLang release: run the oracle's `schema` for it (shared/oracle/README.md), then this.
"""
import json
import os
import sys

TYPES = {
    None: "none",
    "str": "str",
    "int": "int",
    "float": "float",
    "json.loads": "json",
    "json_list_type": "json_list",
    "human_readable_int": "human_int",
    "nullable_str": "nullable_str",
    "parse_cuda_graph_backend_arg": "cuda_graph_backend",
    "parse_cuda_graph_config_arg": "cuda_graph_config",
}


def kind_of(a):
    cls = a["action_class"].rsplit(".", 1)[-1]
    simple = {
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
    }
    if cls not in simple:
        sys.exit(f"unknown action class {a['action_class']} for {a['option_strings']}: teach gen-flags.py")
    return simple[cls]


def type_of(a):
    t = a["type"]
    short = None if t is None else ("json.loads" if t == "json.loads" else t.rsplit(".", 1)[-1])
    if short not in TYPES:
        sys.exit(f"unknown type {t} for {a['option_strings']}: teach gen-flags.py and the parser")
    return TYPES[short]


def nargs_of(a):
    n = a["nargs"]
    return "1" if n is None else str(n)


def choices_of(a):
    """argparse prints choices in container order. A `set` iterates in hash order, which SGLang
    leaves to PYTHONHASHSEED; the oracle pins it to 0, so record that order (main() re-executes
    under PYTHONHASHSEED=0). Any order is as right as any other at run time."""
    if a["choices"] is not None and a["choices_container"] in ("set", "frozenset"):
        return list(set(a["choices"]))
    return a["choices"]


def main():
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    schema = json.load(open(sys.argv[1]))
    if schema.get("tainted"):
        sys.exit("schema is tainted by stub values; fix the oracle first")
    out = {
        "version": schema["meta"]["sglang_version"],
        "prog": schema["parser"]["prog"],
        "allow_abbrev": schema["parser"]["allow_abbrev"],
        "actions": [],
    }
    for a in schema["actions"]:
        extra = a.get("extra_attrs") or {}
        act = {
            "option_strings": a["option_strings"],
            "dest": a["dest"],
            "kind": kind_of(a),
            "nargs": nargs_of(a),
            "const": extra.get("const_value", a["const"]),
            "default": a["default"],
            "default_is_suppress": a["default_is_suppress"],
            "value_type": type_of(a),
            "choices": choices_of(a),
            "required": a["required"],
            "deprecated_for": extra.get("new_flag"),
        }
        # 0.5.23's DeprecatedAction stops the launch when it carries an error_message (its text
        # is SGLang prose: keep only the fact); without one it warns and changes nothing.
        if extra.get("error_message") is not None:
            act["deprecated_error"] = True
        out["actions"].append(act)
    json.dump(out, sys.stdout, separators=(",", ":"), sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
