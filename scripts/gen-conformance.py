#!/usr/bin/env python3
"""Build the argparse conformance goldens: tests/conformance/<version>.jsonl for the boundary
releases (full corpora), tests/conformance/sample/<version>.jsonl for every other embedded one.

    scripts/gen-conformance.py                 # the boundary releases' full corpora
    scripts/gen-conformance.py 0.5.23 0.5.2    # some of them
    scripts/gen-conformance.py --sample [VERSION ...]   # the sampled goldens (default: all others)
    scripts/gen-conformance.py --setup ...     # create missing oracle venvs first (needs PyPI)
    scripts/gen-conformance.py --seed X --out /tmp/conf   # an extra fuzz round, not committed;
        # replay it with CONFORMANCE_DIR=/tmp/conf cargo test --test it conformance::

For each version, a deterministic corpus (seeded random choices over the release's flag data in
data/flags/history.jsonl plus hand-written edge cases) is run through SGLang's real parser with
the oracle (`oracle.py --reuse-parser batch`, see shared/oracle/README.md), and the answers are
written as goldens that tests/it/conformance.rs replays against the Rust parser.

The sampled corpus (40-80 cases) leans on what changed near the release: the actions that differ
from the previous or the next release (valid uses, every new choice, an invalid choice), the
options a neighbour has and this release lacks, abbreviations and invalid choices.

Golden format, one JSON object per line:
  line 1: {"version", "python", "baseline_argv", "baseline"}: the full namespace for baseline_argv;
  then per case: {"argv", "ok", "exit_code", "error" | "exception" | "set" (+ "missing")}, where
  "set" holds only the dests whose value differs from the baseline namespace and "missing" the
  dests absent from the case's namespace; the test rebuilds and compares the full namespace.

Environment: ORACLE_DIR (default: ../shared/oracle next to the repository, else
/work/shared/oracle), ORACLE_VENV (a format string, default /tmp/venv-oracle-{version}).
The venvs get real `orjson` (SGLang's json_list_type calls it; the oracle would stub it). A
release without such a venv runs from its unpacked wheel with the deps venv of
scripts/sglang_releases.py (the same few real packages).

`--config FILE` has its own corpus: SGLang 0.5.5+ merges the YAML file into argv *before*
argparse runs, which the oracle's --reuse-parser path skips, so those cases run through SGLang's
full `prepare_server_args` (about 20 ms each) with the repository root as working directory.
The YAML files are written to tests/conformance/configs/ (hand-written edge cases plus seeded
random ones per version) and the goldens to tests/conformance/config-<version>.jsonl, in the same
format plus "effective_argv" (argv after SGLang's merge) on accepted cases.

    scripts/gen-conformance.py --config-only [VERSION ...]   # only the --config corpus
    scripts/gen-conformance.py --yaml-scalars                # PyYAML's reading of single values
    scripts/gen-conformance.py --yaml-spaces                 # PyYAML on where YAML 1.2 wants spaces

Left out of the main corpus on purpose:
  * `--config FILE` (above).
  * non-UTF-8 tokens and lone surrogates: the oracle prints JSON as UTF-8 and cannot write them;
    the Rust unit tests cover them.
`--help` is kept: argparse exits 0 there; the golden says exit_code 0 and the test expects
`SglangArgs::help`.
"""
import json
import os
import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sglang_releases as rel  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = rel.BOUNDARY
EXCLUDED_OPTIONS = {"--config"}


def oracle_dir():
    env = os.environ.get("ORACLE_DIR")
    if env:
        return Path(env)
    for cand in (ROOT.parent / "shared" / "oracle", ROOT.parent.parent / "shared" / "oracle", Path("/work/shared/oracle")):
        if (cand / "oracle.py").exists():
            return cand
    sys.exit("oracle.py not found: set ORACLE_DIR")


def venv_python(version):
    return Path(os.environ.get("ORACLE_VENV", "/tmp/venv-oracle-{version}").format(version=version)) / "bin" / "python"


def setup(version):
    py = venv_python(version)
    if not py.exists():
        subprocess.run([str(oracle_dir() / "setup.sh"), version, str(py.parent.parent)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "orjson"], check=True)


# ---------------------------------------------------------------------------------------------
# corpus

WORDS = ["m", "Qwen/Qwen3-8B", "/models/llama", "auto", "x", "a b", "it's", 'say "hi"', "é", "0", "None", ""]


class Gen:
    def __init__(self, flags, seed):
        self.flags = flags
        self.rng = random.Random(seed)
        self.actions = [a for a in flags["actions"]
                        if a["kind"] != "help" and not EXCLUDED_OPTIONS & set(a["option_strings"])]
        self.options = [o for a in flags["actions"] for o in a["option_strings"]]

    def pick(self, seq):
        return self.rng.choice(seq)

    def int_str(self):
        return self.pick(["1", "2", "8", "0", "-1", "64", "4096", str(self.rng.randint(-50, 100000))])

    def float_str(self):
        return self.pick(["0.5", "0.85", "1", "1e-3", "2.5", "0", ".9", "3.", str(round(self.rng.random(), 3))])

    def value(self, a):
        """One valid argument string for the action's type."""
        if a["choices"]:
            c = self.pick(a["choices"])
            return str(c)
        t = a["value_type"]
        if t == "int":
            return self.int_str()
        if t == "float":
            return self.float_str()
        if t == "json":
            return self.pick(['{"a": 1}', '{}', '{"rope_type": "yarn", "factor": 4.0}', '[1, 2]', '"s"', '3', 'null'])
        if t == "json_list":
            return self.pick(['[1, 2, 3]', '[]', '["a"]', '[{"k": 1}]'])
        if t == "human_int":
            return self.pick(["4096", "4k", "32k", "1M", "25.6k", "8Ki", "1Mi", "1_000", " 512 "])
        if t == "nullable_str":
            return self.pick(["None", "", "x", "auto"])
        if t == "cuda_graph_config":
            return self.pick(['{"decode": {"backend": "full", "max_bs": 64}}', '{"prefill": {"backend": "disabled"}}',
                              '{}', '{"decode": {"bs": [1, 2, 4]}, "prefill": {"max_seq_len": 4096}}'])
        if t == "cuda_graph_backend":
            return self.pick(["full", "breakable", "disabled"])
        if a["kind"] == "lora_paths":
            return self.pick(["adapter", "name=/path/a", '{"lora_name": "n", "lora_path": "/p"}', "x=y=z"])
        return self.pick(["m", "auto", "/tmp/x", "value-1", "a b", "it's"])

    def bad_value(self, a):
        t = a["value_type"]
        if a["choices"]:
            return self.pick(["nope", "it's", "AUTO", "", "x y", "99"])
        if t == "int":
            return self.pick(["x", "1.5", "1e3", " 7 ", "1_000", "\u0663", "+5", "0x10", "", "1__0", "_1", "9" * 30])
        if t == "float":
            return self.pick(["inf", "nan", "-inf", "1e3", "1_0.5", ".5", "5.", "abc", "1,5", "", "1e", "Infinity", "1_.5"])
        if t == "json":
            return self.pick(["{", "nope", "[1,]", "{'a': 1}", "NaN", "1e400", "", "[1 2]"])
        if t == "json_list":
            return self.pick(["[1,", "nope", "[NaN]", "", "{\"a\": 1}", "[1e400]", "18446744073709551616"])
        if t == "human_int":
            return self.pick(["1.5Ki", "4K", "1kb", "-1k", "x", "1e3", "1.2.3k", "", "1_0k", "0.0001k", "\u0664k"])
        if t == "cuda_graph_config":
            return self.pick(["[1,]", "[]", '{"x": 1}', '{"decode": 1}', '{"decode": {"foo": 1}}',
                              '{"decode": {"backend": "tc_piecewise"}}', '"s"', "{", '{"prefill": []}', "3.5", "null"])
        if t == "cuda_graph_backend":
            return self.pick(["tc_piecewise", "fast", "FULL"])
        if a["kind"] == "lora_paths":
            return self.pick(["{x}", '{"lora_name": "n"}', " {} ", '{"a": 1}'])
        return None

    def args_for(self, a, option=None, explicit=False):
        """Tokens for one valid use of the action."""
        opt = option or self.pick(a["option_strings"])
        kind, nargs = a["kind"], a["nargs"]
        if nargs == "0":
            return [opt]
        if nargs == "1":
            v = self.value(a)
            return [f"{opt}={v}"] if explicit else [opt, v]
        if nargs == "?":
            if self.rng.random() < 0.4:
                return [opt]
            v = self.value(a)
            return [f"{opt}={v}"] if explicit else [opt, v]
        n = self.rng.randint(1 if nargs == "+" else 0, 3)
        vals = [self.value(a) for _ in range(n)]
        if explicit and n >= 1:
            return [f"{opt}={vals[0]}"]
        return [opt] + vals

    def with_model(self, tokens):
        m = ["--model-path", self.pick(["m", "Qwen/Qwen3-8B"])]
        if self.rng.random() < 0.2:
            m = [self.pick(["--model", "--model-path"]) + "=m"]
        return m + tokens if self.rng.random() < 0.6 else tokens + m

    def cases(self):
        out = []
        add = out.append
        rng = self.rng
        # every option string of every action, used validly
        for a in self.actions:
            for opt in a["option_strings"]:
                add(self.with_model(self.args_for(a, opt)))
        # `--opt=value` forms
        valued = [a for a in self.actions if a["nargs"] not in ("0",)]
        for a in rng.sample(valued, min(80, len(valued))):
            add(self.with_model(self.args_for(a, explicit=True)))
        # abbreviations (unique or ambiguous: the oracle decides), plain and with =value
        longs = [o for o in self.options if o.startswith("--") and o not in EXCLUDED_OPTIONS]
        for o in rng.sample(longs, min(220, len(longs))):
            cut = rng.randint(3, max(3, len(o) - 1))
            a = next(x for x in self.flags["actions"] if o in x["option_strings"])
            if a["kind"] == "help":
                continue
            toks = self.args_for(a, o[:cut], explicit=rng.random() < 0.25)
            add(self.with_model(toks))
        for p in ["--mod", "--tp", "--dp", "--pp", "--ep", "--mem", "--en", "--dis", "--lo", "--c", "--t", "--tp=2", "--mem=0.5"]:
            add(["--model-path", "m", p, "2"] if "=" not in p else ["--model-path", "m", p])
        # unknown options, misspellings, underscore spellings, missing dashes
        for _ in range(40):
            o = rng.choice(longs)
            variants = [o.replace("-", "_").replace("__", "--", 1), o[:-1] + "x", o + "-extra", o[1:], o[2:],
                        "--" + o[2:].replace("-", "_")]
            add(["--model-path", "m", rng.choice(variants), "1"])
        for junk in [["--foo-bar"], ["--foo=1"], ["--foo=a b"], ["-x"], ["-m", "x"], ["stray"], ["a", "b"],
                     ["-"], ["--unknown", "--tp-size", "2"], ["-x=1"], ["--=x"], ["---tp-size", "2"]]:
            add(["--model-path", "m"] + junk)
        # bad values for typed options
        typed = [a for a in self.actions if a["nargs"] in ("1", "?", "+", "*") and self.bad_value(a) is not None]
        for _ in range(160):
            a = rng.choice(typed)
            opt = rng.choice(a["option_strings"])
            bad = self.bad_value(a)
            toks = [f"{opt}={bad}"] if rng.random() < 0.3 else [opt, bad]
            add(self.with_model(toks))
        # nargs edge cases: missing values, lists ending at the next option or at the end
        for a in rng.sample(self.actions, min(80, len(self.actions))):
            opt = a["option_strings"][0]
            nxt = rng.choice([[], ["--trust-remote-code"] if "--trust-remote-code" in self.options else [], ["--", "x"]])
            add(["--model-path", "m", opt] + nxt)
            if a["nargs"] == "0":
                add(["--model-path", "m", f"{opt}=1"])
                add(["--model-path", "m", f"{opt}="])
        # repeated options (last wins), alias then canonical
        for _ in range(50):
            a = rng.choice(valued)
            add(self.with_model(self.args_for(a) + self.args_for(a)))
        for _ in range(10):
            add(["--model-path", "a", "--model", "b", "--model-path=c"][: rng.randint(3, 5)])
        # BooleanOptional and deprecated actions
        for a in self.actions:
            if a["kind"] in ("boolean_optional", "deprecated", "deprecated_store_const") or a.get("deprecated_for"):
                for opt in a["option_strings"]:
                    add(["--model-path", "m", opt])
                    add(["--model-path", "m", opt, opt])
                    add(["--model-path", "m", opt + "=x"])
                    if a["nargs"] == "1":
                        add(["--model-path", "m", opt, self.value(a)])
        # missing --model-path
        for _ in range(15):
            a = rng.choice(self.actions)
            add(self.args_for(a))
        add([])
        add(["m"])
        add(["--model-path"])
        add(["--tp-size", "2", "stray"])
        # `--`
        add(["--model-path", "m", "--"])
        add(["--", "--model-path", "m"])
        add(["--model-path", "m", "--", "x", "--tp-size", "2"])
        add(["--model-path=--"])
        add(["--model-path", "--"])
        add(["--model-path", "m", "--tp-size=--"])
        # negative numbers and single-dash tokens
        ints = [a for a in self.actions if a["value_type"] == "int" and a["nargs"] == "1" and not a["choices"]]
        floats = [a for a in self.actions if a["value_type"] == "float" and a["nargs"] == "1"]
        for v in ["-5", "-0", "-.5", "-1e3", "-1.5", "-٣", "- 5", "-5\n"]:
            if ints:
                add(["--model-path", "m", rng.choice(ints)["option_strings"][0], v])
            if floats:
                add(["--model-path", "m", rng.choice(floats)["option_strings"][0], v])
        add(["--model-path", "m", "-5"])
        add(["--model-path", "-m"])
        add(["--model-path", "-5"])
        # JSON-typed values
        for a in self.actions:
            if a["value_type"] in ("json", "json_list", "cuda_graph_config"):
                for _ in range(6):
                    add(["--model-path", "m", a["option_strings"][0], self.value(a)])
                    add(["--model-path", "m", a["option_strings"][0], self.bad_value(a)])
        # human-readable ints
        for a in self.actions:
            if a["value_type"] == "human_int":
                for v in ["4k", "1M", "2G", "1T", "25.6k", "0.5k", "1Ki", "8Mi", "1Gi", "1Ti", "1.5Ki", "4K",
                          "007", "1_024", " 2k ", "k", "1.k", "٣k", "-4k", "99999999999999999999999", "1.23456789k"]:
                    add(["--model-path", "m", a["option_strings"][0], v])
        # help
        for h in (["-h"], ["--help"], ["--he"], ["--help=x"], ["-hx"], ["-h=1"], ["--h"]):
            add(h)
            add(["--model-path", "m"] + h)
            add(["--tp-size", "x"] + h)
            add(h + ["--tp-size", "x"])
        # hand-picked oddities: repr quoting and escapes in messages, `=` inside values, spaces,
        # Unicode digits and whitespace, empty explicit values
        str_choice = [a for a in self.actions if a["choices"] and a["value_type"] in ("str", "none") and a["nargs"] == "1"]
        for v in ["it's", 'say "hi"', "both ' and \"", "back\\slash", "tab\there", "new\nline", "é", "\x7f",
                  "\u200b", "日本", "\U0001F600", " ", ""]:
            if str_choice:
                add(["--model-path", "m", rng.choice(str_choice)["option_strings"][0], v])
            if ints:
                add(["--model-path", "m", rng.choice(ints)["option_strings"][0], v])
        for v in ["\t3\n", "\u00a03\u2003", "\x1c4\x1f", "1_000_000", "0_7", "+0", "-0", "٣٤", "𝟗", "9" * 25]:
            if ints:
                add(["--model-path", "m", rng.choice(ints)["option_strings"][0], v])
        for v in ["1e-400", "-0.0", "1E5", "  .5  ", "infinity", "+nan", "-NaN", "1_000.000_1", "٣.٥", "1e+5",
                  "1e1_0", "0x1p3", "1.5e", "in f"]:
            if floats:
                add(["--model-path", "m", rng.choice(floats)["option_strings"][0], v])
        add(["--model-path=a=b"])
        add(["--model-path", "m", "--tp-size 2"])
        add(["--model-path", "m", "--tp-size="])
        add(["--model-path=", "--tp-size", "2"])
        add(["--model-path", "m", "---"])
        add(["--model-path", "m", "--=", "x"])
        add(["--model-path", "m", "-=x"])
        add(["--model-path", "m", "--tp=", "2"])
        # JSON parse errors and their positions: mutate valid documents
        json_opts = [a for a in self.actions if a["value_type"] in ("cuda_graph_config", "json")]
        lora = [a for a in self.actions if a["kind"] == "lora_paths"]
        docs = ['{"decode": {"backend": "full", "max_bs": 64, "bs": [1, 2, 4]}}',
                '{"prefill": {"max_seq_len": 4096, "backend": "breakable"}}',
                '{"lora_name": "n", "lora_path": "/p/\\u00e9"}',
                '{\n  "decode": {\n    "bs": [1, 2.5e3, -0, true, null, "x\\n"]\n  }\n}']
        alphabet = '{}[]",: 0123aeE.-+\\u\n\tnultrfNI\x01'
        for _ in range(120):
            d = list(rng.choice(docs))
            for _ in range(rng.randint(1, 3)):
                op = rng.random()
                i = rng.randrange(len(d) + 1)
                if op < 0.4 and d:
                    del d[min(i, len(d) - 1)]
                elif op < 0.8:
                    d.insert(i, rng.choice(alphabet))
                else:
                    d = d[:i]
            doc = "".join(d)
            if json_opts:
                add(["--model-path", "m", rng.choice(json_opts)["option_strings"][0], doc])
            if lora:
                add(["--model-path", "m", lora[0]["option_strings"][0], doc])
        # random combinations of valid uses, sometimes with junk
        for _ in range(300):
            toks = []
            for a in rng.sample(self.actions, rng.randint(1, 5)):
                toks += self.args_for(a, explicit=rng.random() < 0.2)
            if rng.random() < 0.1:
                toks.insert(rng.randint(0, len(toks)), rng.choice(["stray", "--nope", "-q"]))
            add(self.with_model(toks))
        # dedupe, keep order; drop anything mentioning an excluded option
        seen, uniq = set(), []
        for c in out:
            key = json.dumps(c)
            if key in seen or any(t.split("=", 1)[0] in EXCLUDED_OPTIONS for t in c):
                continue
            seen.add(key)
            uniq.append(c)
        return uniq


# ---------------------------------------------------------------------------------------------
# --config corpus

CONFIG_DIR = Path("tests") / "conformance" / "configs"

# Hand-written YAML files: SGLang's merge rules and PyYAML's (YAML 1.1) reading of scalars.
CONFIG_FILES = {
    "basic.yaml": "model-path: m\ntp-size: 2\nenable-metrics: true\ndisable-radix-cache: false\n"
                  "mem-fraction-static: 0.8\nport: 30001\n",
    "underscores.yaml": "model_path: m\ntp_size: 2\n",
    "store-true-spellings.yaml": "model-path: m\nenable_metrics: true\ntrust_remote_code: false\n"
                                 "skip-server-warmup: yes\n",
    "bool-on-valued.yaml": "model-path: m\nrevision: true\nserved-model-name: false\n",
    "yaml11.yaml": "model-path: m\nserved-model-name: 1e3\nrevision: 0x1F\ntokenizer-path: 012\nseed: 1_000\n"
                   "port: 1:30\nchat-template: 2024-01-02\nload-format: auto\nmem-fraction-static: .5\n"
                   "schedule-conservativeness: 1.0e+3\ncontext-length: ~\n",
    "yaml11-more.yaml": "model-path: m\nserved-model-name: 2001-12-14t21:59:43.10-05:00\nrevision: -0b101\n"
                        "tokenizer-path: .inf\nchat-template: -.inf\nseed: +12\ndownload-dir: 190:20:30.15\n"
                        "mem-fraction-static: 1.\nenable-metrics: on\nskip-server-warmup: off\n",
    "tags.yaml": "model-path: !!str 12\ntp-size: !!int \"4\"\nmem-fraction-static: !!float 1\nrevision: ! 12\n"
                 "served-model-name: \"true\"\nenable-metrics: !!bool yes\nchat-template: !!null ''\n",
    "unknown-tag.yaml": "model-path: !foo m\n",
    "empty.yaml": "",
    "comments.yaml": "# nothing here\n",
    "null-doc.yaml": "~\n",
    "list-root.yaml": "- --model-path\n- m\n",
    "scalar-root.yaml": "model-path\n",
    "bad-flow.yaml": "model-path: m\ncuda-graph-bs: [1, 2\n",
    "bad-indent.yaml": "model-path: m\n  tp-size: 2\n",
    "bad-tab.yaml": "model-path: m\n\ttp-size: 2\n",
    "bad-quote.yaml": "model-path: \"m\n",
    "multi-doc.yaml": "model-path: m\n---\ntp-size: 2\n",
    "dup-keys.yaml": "model-path: a\ntp-size: 2\nmodel-path: b\n",
    "anchors.yaml": "base: &b {tp-size: 2, port: 1234}\nmodel-path: m\n<<: *b\nport: 5678\n",
    "merge-list.yaml": "a: &a {tp-size: 2}\nb: &b {tp-size: 4, port: 1}\n<<: [*a, *b]\nmodel-path: m\n",
    "lists.yaml": "model-path: m\ncuda-graph-bs: [1, 2, 4]\nlora-target-modules: []\n"
                  "served-model-name: [a, b]\n",
    "list-mixed.yaml": "model-path: m\ncuda-graph-bs: [1, \"2\", true, null, 1.5, {a: 1}, [1, 2]]\n",
    "dicts.yaml": "model-path: m\njson-model-override-args: {a: 1, b: [1, 2.5, 1e-7], c: null, d: 'it''s', e: true}\n",
    "dict-nested.yaml": "model-path: m\njson-model-override-args:\n  rope_scaling:\n    rope_type: yarn\n"
                        "    factor: 4.0\n    original_max_position_embeddings: 32768\n  name: \"é 日本\"\n",
    "dict-odd-keys.yaml": "model-path: m\njson-model-override-args: {1: a, 2.5: b, true: c, null: d}\n",
    "dict-date.yaml": "model-path: m\njson-model-override-args: {when: 2024-01-02}\n",
    "nonstring-key-int.yaml": "1: x\nmodel-path: m\n",
    "nonstring-key-bool.yaml": "true: x\nmodel-path: m\n",
    "nonstring-key-null.yaml": "~: x\nmodel-path: m\n",
    "python-keys.yaml": "1: a\n1.0: b\ntrue: c\nmodel-path: m\n",
    "unicode.yaml": "model-path: m\nserved-model-name: \"é 日本 \\U0001F600\"\nrevision: \"tab\\there\"\n",
    "block.yaml": "model-path: m\nchat-template: |\n  line one\n  line two\nrevision: >\n  folded\n  text\n",
    "negative.yaml": "model-path: m\nport: -5\nserved-model-name: \"-x\"\n",
    "abbrev.yaml": "model-path: m\ntp: 2\n",
    "ambiguous.yaml": "model-path: m\nmem: 0.5\n",
    "help.yaml": "model-path: m\nhelp: true\n",
    "config-key.yaml": "model-path: m\nconfig: other.yaml\n",
    "floats.yaml": "model-path: m\nmem-fraction-static: 100000000000000000.0\nschedule-conservativeness: 1.0e+20\n"
                   "served-model-name: [0.1, 1.5e-7, -0.0, .nan]\n",
    "bigint.yaml": "model-path: m\nserved-model-name: 123456789012345678901234567890\nrandom-seed: 0x7fffffff\n",
    "binary.yaml": "model-path: m\nserved-model-name: !!binary aGVsbG8=\n",
    "bad-date.yaml": "model-path: m\nrevision: 2024-02-30\n",
    "unsupported-deprecated.yaml": "model-path: m\ndisable-cuda-graph: true\n",
    "unsupported-dp.yaml": "model-path: m\nenable_dp_attention: true\n",
    "unsupported-boolopt.yaml": "model-path: m\nenable-tf32-matmul: true\n",
    "unsupported-no-spelling.yaml": "model-path: m\nno_enable_tf32_matmul: true\n",
    "unsupported-lora.yaml": "model-path: m\nlora-paths: [a=b]\n",
    "stream-output.yaml": "model-path: m\nstream-output: true\n",
    "incremental.yaml": "model-path: m\nincremental_streaming_output: true\n",
    "monokernel.yaml": "model-path: m\nmonokernel-backend: amd\n",
    "weird.YML": "model-path: m\ntp-size: 2\n",
    "not-yaml.txt": "model-path: m\n",
    "secrets.yaml": "model-path: m\napi-key: sekrit\n",
}

# Plain scalars PyYAML (YAML 1.1) reads in different ways: bool/null words, ints in several
# bases, floats with and without exponent sign, sexagesimal numbers, timestamps, and look-alikes
# that stay strings.
YAML_SCALARS = ["m", "auto", "it's", "x y", "é", "yes", "on", "null", "1e3", "0x10", "012", "1_0", "2024-01-01", "",
                "Yes", "NO", "Off", "TRUE", "y", "n", "~", "Null", "nULL", "1e-3", "1.5e-3", "1.5E+3", "-.5", "+.inf",
                ".NaN", ".nan", "-.INF", "0o17", "0b11", "-0b11", "0x_1F", "0_", "1__0", "-0", "+0", "00", "09", "0.",
                "1:60", "1:30", "-1:30:00", "12:30:45.5", "1.2.3", "2001-1-1 1:02:03", "2001-12-14T21:59:43Z",
                "2001-12-14 21:59:43.5 +2", "2001-13-01", "20011-01-01", "1_000.5", "._5", "<<x", "=x", "127.0.0.1"]


def yaml_value(v):
    """A Python value written as YAML (strings double-quoted, JSON-style, so they stay strings)."""
    return json.dumps(v, ensure_ascii=False)


class ConfigGen(Gen):
    def key_for(self, a):
        longs = [o for o in a["option_strings"] if o.startswith("--")]
        opt = self.pick(longs) if longs else a["option_strings"][0]
        # mostly the dashed spelling (what works); underscores and the dest test key matching
        return self.pick([opt[2:]] * 6 + [opt[2:].replace("-", "_"), a["dest"]])

    def typed(self, a, text):
        """The string argparse would get, as a YAML value of a fitting Python type."""
        t = a["value_type"]
        try:
            if t == "int":
                return int(text)
            if t == "float":
                return float(text)
        except ValueError:
            pass
        if t in ("json", "cuda_graph_config") and self.rng.random() < 0.5:
            try:
                v = json.loads(text)
                if isinstance(v, dict):
                    return v
            except ValueError:
                pass
        return text

    def entry(self, a):
        key = self.key_for(a)
        kind, nargs = a["kind"], a["nargs"]
        r = self.rng.random()
        if nargs == "0":
            return key, self.pick([True, False, True, "yes", "off"])
        if nargs in ("+", "*"):
            n = self.rng.randint(0, 3)
            return key, [self.typed(a, self.value(a)) for _ in range(n)]
        if r < 0.1:
            return key, self.pick([True, False, None])
        if r < 0.3:
            return key, self.pick(YAML_SCALARS)
        return key, self.typed(a, self.value(a))

    def document(self):
        lines = []
        if self.rng.random() < 0.8:
            lines.append("model-path: " + yaml_value(self.pick(["m", "/models/x", "Qwen/Qwen3-8B"])))
        for a in self.rng.sample(self.actions, self.rng.randint(1, 5)):
            key, v = self.entry(a)
            if isinstance(v, str) and v in ("yes", "off") and self.rng.random() < 0.5:
                text = v  # plain: YAML 1.1 reads it as a boolean
            elif isinstance(v, str) and v in YAML_SCALARS and self.rng.random() < 0.8:
                text = v if v else "''"
            else:
                text = yaml_value(v)
            lines.append(f"{key}: {text}")
        return "\n".join(lines) + "\n"


def config_cases(flags, seed, fuzz=False):
    """argv lists using --config (and the YAML files they name, written under CONFIG_DIR)."""
    rng = random.Random(seed)
    cdir = ROOT / CONFIG_DIR
    cdir.mkdir(parents=True, exist_ok=True)
    (cdir / "dir.yaml").mkdir(exist_ok=True)
    (cdir / "dir.yaml" / ".keep").write_text("a directory named like a YAML file\n")
    for name, text in CONFIG_FILES.items():
        (cdir / name).write_text(text, encoding="utf-8")
    rel = lambda name: str(CONFIG_DIR / name)
    out = []
    for name in list(CONFIG_FILES) + ["dir.yaml", "missing.yaml"]:
        out.append(["--config", rel(name)])
        out.append(["--model-path", "x", "--config", rel(name), "--tp-size", "4"])
    b = rel("basic.yaml")
    out += [
        ["--config"],
        ["--model-path", "m", "--config"],
        ["--config", b, "--config", b],
        ["--config", ""],
        ["--model-path", "m", "--config", ""],
        [f"--config={b}"],
        ["--model-path", "m", f"--config={b}"],
        ["--conf", b, "--model-path", "m"],
        ["--config", b, "--tp-size", "8", "--port", "1"],
        ["--tp-size", "8", "--config", b, "--enable-metrics"],
        ["--config", b, "--mem-fraction-static", "x"],
        ["--config", b, "--", "x"],
        ["--config", "--model-path", "m"],
        ["--config", rel("secrets.yaml"), "--api-key", "mine"],
    ]
    # seeded random documents over this version's options (where SGLang merges at all)
    if not any("--config" in a["option_strings"] for a in flags["actions"]):
        return out
    gen = ConfigGen(flags, seed)
    gen.rng = rng
    vtag = flags["version"]
    # An extra fuzz round (--seed) writes its files under target/, never over the committed ones.
    gdir = Path("target") / "conformance-configs" if fuzz else CONFIG_DIR
    (ROOT / gdir).mkdir(parents=True, exist_ok=True)
    for i in range(100):
        name = f"gen-{vtag}-{i:02d}.yaml"
        (ROOT / gdir / name).write_text(gen.document(), encoding="utf-8")
        argv = ["--config", str(gdir / name)]
        r = rng.random()
        if r < 0.3:
            argv = ["--model-path", "y"] + argv
        elif r < 0.5:
            a = rng.choice(gen.actions)
            argv += gen.args_for(a)
        out.append(argv)
    return out


YAML_PROBE = r"""
import json, sys, yaml
for line in sys.stdin:
    doc = json.loads(line)
    try:
        v = yaml.safe_load(doc)
        k = v["k"] if isinstance(v, dict) and "k" in v else v
        out = {"doc": doc, "type": type(k).__name__, "str": str(k)}
    except Exception as e:
        out = {"doc": doc, "error": type(e).__name__}
    print(json.dumps(out, ensure_ascii=False))
"""


def build_yaml_scalars(version="0.5.23"):
    """tests/conformance/yaml-scalars.jsonl: how PyYAML's safe_load reads single values (type
    and str()), for the scalar resolution in src/sglang/pyyaml/."""
    rng = random.Random("sglang-launch-yaml-scalars")
    docs = [f"k: {v}\n" for v in YAML_SCALARS]
    alphabet = "0123456789._:+-eExXbBoOinfaNlTZ "
    for _ in range(1500):
        n = rng.randint(1, 9)
        v = "".join(rng.choice(alphabet) for _ in range(n)).strip()
        docs.append(f"k: {v}\n")
    for tag in ["!!str", "!!int", "!!float", "!!bool", "!!null", "!", "!!timestamp", "!!binary"]:
        for v in ["1", "0x1F", "yes", "1.5", "~", "abc", "2001-01-01", "aGk=", "''", '"2"']:
            docs.append(f"k: {tag} {v}\n")
    docs += ["k: [1, 0x2, yes, ~, 1.0, {a: b}]\n", "k: {1: a, 1.0: b, true: c}\n", "k: 'single'' quote'\n",
             "k: \"esc \\t \\u00e9 \\x41\"\n", "k: |\n  a\n  b\n", "k: >-\n  a\n  b\n", "k: &a 1\nj: *a\n",
             "- 1\n", "k\n", "", "k: [\n", "k: 1\n---\nk: 2\n", "k: !!python/name:os.system x\n"]
    # document structure: directives, comments, line endings, indicators, multi-line scalars
    docs += ["%YAML 1.1\n---\nk: 1\n", "%YAML 1.2\n---\nk: yes\n", "%TAG !e! tag:e.com,2000:\n---\nk: !e!x 1\n",
             "---\nk: 1\n...\n", "k: 1 # c\n", "# c\nk: 1\n", "k: 1\r\nj: 2\r\n", "\ufeffk: 1\n",
             "k: @x\n", "k: `x`\n", "k: a: b\n", "k: - a\n", "k:\n- a\n- b\n", "k:\n  - a\n  - b\n",
             "? k\n: 1\n", "k: a\n  b\n", "k: 'a\n  b'\n", "k: \"a\\\n  b\"\n", "k: 1\t\n", "k:\t1\n",
             "k: {a: 1, b}\n", "k: [a, [b, c]]\n", "{k: 1}\n", "[k]\n", "k: &x\n", "k: *nope\n",
             "k: &x 1\nk: *x\n", "k: a #b\n", "k: a#b\n", "k: %x\n", "k: |+\n  a\n\n", "k: >\n  a\n\n  b\n",
             "k: !!str\n", "k: ''\n", "k: \"\"\n", "k:\n", "k: -1\n", "k: - \n", "k: ,x\n", "k: x,\n",
             "k: [a,b]\n", "k: {a:1}\n", "k: {a: 1,}\n", "k: [1,]\n", "k: 0x\n", "k: 1:2:3\n", "k: \"\\u00e9\"\n",
             "k: \"\\N\"\n", "k: \"\\x\"\n", "k: 'it''s'\n", "k:  spaced  \n", "k: a\u00a0b\n",
             "k: \u2028\n", "k: \"\\t\"\n", "k: !!set {a, b}\n", "k: !!omap [a: 1]\n", "k: !!pairs [a: 1]\n"]
    # JSON pasted into YAML
    docs += ['k: {"a":[1,2],"b":{"c":1}}\n', 'k: {"a": 1, "b": "x"}\n', 'k: ["a","b"]\n',
             '{"k": 1, "model-path": "m"}\n', "k: {a: 1, b: {c: [1,2]}}\n", "k: {a:1}\n", "k: [1,2,]\n",
             'k: {"a":1,}\n', 'k: {"a": 1e3, "b": -0.5, "c": true, "d": null}\n',
             # where YAML 1.2 readers want a space that PyYAML does not
             'k: "q"# c\n', "k: 'q'# c\n", "k: {a:[1, 2]}\n", "k: {a:{b: 1}, c:[x]}\n", 'k: ["a"# c\n  ]\n']
    docs = list(dict.fromkeys(docs))
    py = venv_python(version)
    res = subprocess.run([str(py), "-c", YAML_PROBE], input="".join(json.dumps(d) + "\n" for d in docs),
                         capture_output=True, text=True, check=True)
    out = ROOT / "tests" / "conformance" / "yaml-scalars.jsonl"
    out.write_text(res.stdout)
    print(f"yaml scalars: {len(docs)} documents -> {out}")


def yaml_spaces_docs():
    """Documents with many spots where YAML 1.2 readers want a space PyYAML does not (`{a:[1]}`,
    `"q"# c`), and look-alikes where a space would change the document."""
    docs = []
    for n in (1, 63, 64, 65, 66, 200, 1000):
        docs.append("".join(f"k{i}: {{a:[{i}]}}\n" for i in range(n)))
    docs.append("".join(f"k{i}: {{a:{{b:[{i}, c:[x]]}}, d:{{}}}}\n" for i in range(300)))
    docs.append("".join(f'k{i}: "q{i}"# c\n' for i in range(300)))
    docs.append("".join(f"k{i}: 'q{i}'# c {{a:[1]}}\n" for i in range(100)))
    docs.append("".join(f"- [a:[{i}], b:{{c: {i}}}]\n" for i in range(150)))
    # look-alikes: inside quoted, block and plain scalars, and comments
    mixed = []
    for i in range(120):
        mixed += [f"f{i}: {{a:[{i}]}}\n", f"q{i}: \"x:[y]\"\n", f"s{i}: 'x:{{y}}'\n", f"p{i}: x:[y]\n",
                  f"c{i}: 1 # a:[b] \"q\"# c\n", f"b{i}: |\n  a:[b]\n  \"q\"#c\n", f"h{i}: a\"#b\n"]
    docs.append("".join(mixed))
    docs.append("".join(f"p{i}: x:[y]\nf{i}: {{a:[{i}]}}\n" for i in range(100)))
    docs.append("k: {a:[1]}\n" + "".join(f"p{i}: x:{{y}}\n" for i in range(200)))
    docs.append('k: ["a:[b]", {"c":[1]}, {d:[2]}, \'e:{f}\']\n')
    # errors after many spots: PyYAML's exception class
    docs.append("".join(f"k{i}: {{a:[{i}]}}\n" for i in range(100)) + "j: [1\n")
    docs.append("".join(f"k{i}: {{a:[{i}]}}\n" for i in range(100)) + "j: {a:[1}\n")
    docs.append("".join(f"k{i}: {{a:[{i}]}}\n" for i in range(100)) + "j: 1\n---\nk: 2\n")
    docs.append("".join(f"k{i}: {{a:[{i}]}}\n" for i in range(100)) + "j:\t1\n")
    docs.append("k: {a:[1]}\nk:[2]\n")
    # a tab right after a closing quote is PyYAML's ScannerError; inside the quotes it is text
    docs += ['k: "a"\t# c\n', 'k: "a"\t\nj: 1\n', 'k: ["a"\t, 1]\n', "k: 'a''\t'\n", 'k: "a\\"\t"\n']
    return docs


def build_yaml_spaces(version="0.5.23"):
    """tests/conformance/yaml-spaces.jsonl: PyYAML's safe_load on yaml_spaces_docs(). The
    interpreter is the oracle venv's, or PYYAML_PYTHON (any Python with PyYAML installed)."""
    py = os.environ.get("PYYAML_PYTHON") or str(venv_python(version))
    docs = yaml_spaces_docs()
    res = subprocess.run([py, "-c", YAML_PROBE], input="".join(json.dumps(d) + "\n" for d in docs),
                         capture_output=True, text=True, check=True)
    out = ROOT / "tests" / "conformance" / "yaml-spaces.jsonl"
    out.write_text(res.stdout)
    print(f"yaml spaces: {len(docs)} documents -> {out}")


# ---------------------------------------------------------------------------------------------

def run_oracle(version, argvs, reuse_parser=True):
    """SGLang's answers: parse_args on the parser SGLang builds (scripts/sglang_parse.py on the
    unpacked release), or, for --config cases, SGLang's whole prepare_server_args (the oracle)."""
    inp = "".join(json.dumps(a, ensure_ascii=False) + "\n" for a in argvs)
    if reuse_parser:
        cmd, env = [str(rel.deps_python()), str(ROOT / "scripts" / "sglang_parse.py")], rel.env_for(version)
    else:
        py = venv_python(version)
        if not py.exists():
            sys.exit(f"{py} missing: run with --setup (or oracle setup.sh {version} ...)")
        cmd, env = [str(py), str(oracle_dir() / "oracle.py"), "batch"], None
    res = subprocess.run(cmd, input=inp, capture_output=True, text=True, check=True, cwd=ROOT, env=env)
    outs = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    if len(outs) != len(argvs):
        sys.exit(f"oracle answered {len(outs)} of {len(argvs)} cases:\n{res.stderr[-2000:]}")
    return outs


def flag_set(version):
    """The release's flag data, decoded from data/flags/history.jsonl."""
    lines = (ROOT / "data" / "flags" / "history.jsonl").read_text().splitlines()
    head = json.loads(lines[0])
    n = len(head["releases"])
    r = json.loads(lines[1 + head["releases"].index(version)])
    idx = [s + k for s, c in zip(r["actions"][::2], r["actions"][1::2]) for k in range(c)]
    return {"version": version, "prog": r["prog"], "allow_abbrev": r["allow_abbrev"],
            "actions": [json.loads(lines[1 + n + i])["action"] for i in idx]}


class SampleGen(Gen):
    """40-80 cases for a release between the boundary ones, leaning on what changed near it."""

    def __init__(self, flags, seed, neighbours):
        super().__init__(flags, seed)
        theirs = [{json.dumps(a, sort_keys=True) for a in f["actions"]} for f in neighbours]
        # not the same in the previous or the next release
        self.changed = [a for a in self.actions if any(json.dumps(a, sort_keys=True) not in t for t in theirs)]
        own = set(self.options)
        self.absent = sorted({o for f in neighbours for a in f["actions"] for o in a["option_strings"]} - own)
        self.neighbour_choices = {}
        for f in neighbours:
            for a in f["actions"]:
                for o in a["option_strings"]:
                    self.neighbour_choices.setdefault(o, set()).update(map(str, a["choices"] or []))

    def cases(self):
        out = []
        add = out.append
        rng = self.rng
        changed = rng.sample(self.changed, min(18, len(self.changed)))
        for a in changed:
            add(self.with_model(self.args_for(a, rng.choice(a["option_strings"]))))
            if a["choices"] and a["nargs"] == "1":
                opt = a["option_strings"][0]
                for c in a["choices"][:4]:
                    add(["--model-path", "m", opt, str(c)])
                # a choice a neighbour has and this release lacks, else a plain invalid one
                other = sorted(self.neighbour_choices.get(opt, set()) - set(map(str, a["choices"])))
                add(["--model-path", "m", opt, other[0] if other else "nope"])
        for o in self.absent[:8]:
            add(["--model-path", "m", o] + ([] if rng.random() < 0.5 else ["1"]))
        longs = [o for o in self.options if o.startswith("--") and o not in EXCLUDED_OPTIONS and o != "--help"]
        for o in rng.sample(longs, min(10, len(longs))):
            a = next(x for x in self.actions if o in x["option_strings"])
            add(self.with_model(self.args_for(a, o[:rng.randint(3, max(3, len(o) - 1))])))
        for p in ["--tp", "--mem", "--dis", "--model", "--port=1", "--trust"]:
            add(["--model-path", "m", p] if "=" in p or p == "--trust" else ["--model-path", "m", p, "2"])
        choice = [a for a in self.actions if a["choices"] and a["nargs"] == "1"]
        for a in rng.sample(choice, min(6, len(choice))):
            add(["--model-path", "m", a["option_strings"][0], self.bad_value(a)])
        typed = [a for a in self.actions if a["nargs"] == "1" and not a["choices"] and self.bad_value(a) is not None]
        for a in rng.sample(typed, min(5, len(typed))):
            add(["--model-path", "m", a["option_strings"][0], self.bad_value(a)])
        add([])
        add(["--model-path", "m", "--unknown-option"])
        add(["--help"])
        while len(out) < 40:
            a = rng.choice(self.actions)
            add(self.with_model(self.args_for(a)))
        return out[:80]


def canon(v):
    return json.dumps(v, sort_keys=True)


def build(version, seed=None, out_dir=None, config=False, sample=False):
    flags = flag_set(version)
    if sample:
        i = rel.RELEASES.index(version)
        neighbours = [flag_set(v) for v in rel.RELEASES[max(0, i - 1):i] + rel.RELEASES[i + 1:i + 2]]
        argvs = SampleGen(flags, f"sglang-launch-sample-{version}", neighbours).cases()
    elif config:
        argvs = config_cases(flags, f"sglang-launch-config-{version}" + (f"-{seed}" if seed else ""), bool(seed))
    else:
        argvs = Gen(flags, f"sglang-launch-conformance-{version}" + (f"-{seed}" if seed else "")).cases()
    baseline_argv = ["--model-path", "m"]
    results = run_oracle(version, [baseline_argv] + argvs, reuse_parser=not config)
    base = results[0]
    assert base["ok"], base
    baseline = base["namespace"]
    py = subprocess.run([str(rel.deps_python() if not config else venv_python(version)), "-c",
                         "import sys; print(sys.version.split()[0])"],
                        capture_output=True, text=True, check=True).stdout.strip()
    lines = [json.dumps({"version": version, "python": py, "baseline_argv": baseline_argv, "baseline": baseline},
                        ensure_ascii=False, sort_keys=True)]
    counts = {"ok": 0, "error": 0, "exception": 0, "help": 0}
    for argv, r in zip(argvs, results[1:]):
        if r.get("tainted"):
            sys.exit(f"stub value in the oracle's answer for {argv}: {r['tainted']}")
        case = {"argv": argv, "ok": r["ok"], "exit_code": r["exit_code"]}
        if config and r.get("effective_argv") is not None:
            case["effective_argv"] = r["effective_argv"]
        if r["ok"]:
            ns = r["namespace"]
            case["set"] = {k: v for k, v in ns.items() if k not in baseline or canon(baseline[k]) != canon(v)}
            missing = sorted(k for k in baseline if k not in ns)
            if missing:
                case["missing"] = missing
            counts["ok"] += 1
        elif r.get("exception"):
            case["exception"] = r["exception"]
            counts["exception"] += 1
        elif r["exit_code"] == 0:
            counts["help"] += 1
        else:
            case["error"] = r["error"]
            counts["error"] += 1
        lines.append(json.dumps(case, ensure_ascii=False, sort_keys=True))
    name = f"sample/{version}.jsonl" if sample else f"config-{version}.jsonl" if config else f"{version}.jsonl"
    out = Path(out_dir or ROOT / "tests" / "conformance") / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"{version}: {len(argvs)} cases -> {out} {counts}")


def main():
    args = sys.argv[1:]
    opts = {}
    for flag in ("--seed", "--out"):
        if flag in args:
            i = args.index(flag)
            opts[flag] = args[i + 1]
            del args[i:i + 2]
    if "--yaml-scalars" in args:
        build_yaml_scalars()
        return
    if "--yaml-spaces" in args:
        build_yaml_spaces()
        return
    do_setup = "--setup" in args
    config_only = "--config-only" in args
    if "--sample" in args:
        chosen = [a for a in args if a != "--sample"]
        for v in chosen or [v for v in rel.RELEASES if v not in VERSIONS]:
            build(v, opts.get("--seed"), opts.get("--out"), sample=True)
        return
    versions = [a for a in args if a not in ("--setup", "--config-only")] or VERSIONS
    for v in versions:
        if v not in VERSIONS:
            sys.exit(f"unknown version {v}; known: {' '.join(VERSIONS)}")
        if do_setup:
            setup(v)
        if not config_only:
            build(v, opts.get("--seed"), opts.get("--out"))
        build(v, opts.get("--seed"), opts.get("--out"), config=True)


if __name__ == "__main__":
    main()
