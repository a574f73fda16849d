//! The bad-input contract in one table: every kind of bad input the launcher can be given (a
//! flag, a variable, a file, a missing driver or interpreter), each once, run through `check`
//! and the drop-in `run` form where both apply. Every row must end with the documented exit
//! code, one message that names the input and says what to do, no panic, no secret value
//! printed ([`SECRET`]), and no SGLang started unless the command still works (a warning). The specialised suites (hostile_files, budgets,
//! implausible_configs, modes) go deeper; this one shows the whole contract, and README's
//! "Bad input → message → exit code" table is rendered from it
//! (`SGLANG_LAUNCH_UPDATE_DOCS=1` rewrites it: `scripts/gen-docs.sh`).

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use crate::common;
use common::{fake_venv, launcher as sl, recorded};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const TOPO: &str = "examples/topologies/8x-rtx-pro-6000-pcie.json";
const MODEL: &str = "examples/models/Qwen3-32B";
const V: &str = "0.5.23";
/// Stands for the byte 0xFF (never UTF-8) in an argument or a value.
const FF: &str = "<FF>";
/// In a row's secret values: no output of any row may contain it.
const SECRET: &str = "Sekret";

/// How a row is run: `check … -- SGLANG_ARGS`, the drop-in `sglang-launch ARGS` (launcher
/// options among SGLang's), or the launcher options alone (`explain`, `wait-ready`).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Form {
    Check,
    DropIn,
    Alone,
}

/// What the user is told.
#[derive(Clone, Copy, Debug)]
enum Says {
    /// One `sglang-launch: error:` line.
    Error,
    /// One `sglang-launch: warning:` line, and the command goes on.
    Warning,
    /// One finding of the report: severity and code.
    Finding(&'static str, &'static str),
}

/// Something the row needs on disk, under the row's own directory.
#[derive(Clone, Copy, Debug)]
enum Plant {
    Text(&'static str, &'static str),
    Fifo(&'static str),
    Dir(&'static str),
    /// A sparse file this many bytes long.
    Sparse(&'static str, u64),
    /// A model directory: `config.json` is the example model's, with one key set to a value.
    ModelWith(&'static str, &'static str, i64),
    /// A venv whose `python3` records that it ran, without SGLang installed.
    BareVenv(&'static str),
    /// A venv with SGLang 0.9.0 (not embedded: its parser is read by running the extractor),
    /// whose `python3 -c` (the extractor) runs this shell text; `-m` records as SGLang.
    Extractor(&'static str, &'static str),
    /// A file someone else could have written: owned by `nobody` when the tests run as root,
    /// else writable by others.
    NotOurs(&'static str, &'static str),
}

#[derive(Clone, Copy, Debug)]
struct Run {
    form: Form,
    code: i32,
    says: Says,
    /// In the message: the input it names first, then what to do.
    names: &'static [&'static str],
}

#[derive(Clone, Copy, Debug)]
struct Case {
    input: &'static str,
    /// Launcher options (before `--` for `check`); `{t}` is the row's directory.
    launcher: &'static [&'static str],
    sglang: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    files: &'static [Plant],
    runs: &'static [Run],
}

const fn both(code: i32, run_code: i32, says: Says, names: &'static [&'static str]) -> [Run; 2] {
    [
        Run {
            form: Form::Check,
            code,
            says,
            names,
        },
        Run {
            form: Form::DropIn,
            code: run_code,
            says,
            names,
        },
    ]
}

const fn one(form: Form, code: i32, says: Says, names: &'static [&'static str]) -> [Run; 1] {
    [Run {
        form,
        code,
        says,
        names,
    }]
}

/// Rows whose input could make the launcher wait (a pipe, a process, a server): each must
/// still end within 3 s.
const WAITS: &[&str] = &[
    "topology file: a FIFO",
    "SGLang's parser read by a program that leaves a child holding its output",
    "SGLang's parser read by a program that prints without end",
    "`--json-file` a named pipe no process reads",
];

/// Two H100s, the second one's name holding a colour code, a newline and a C1 control.
const TOPO_CONTROLS: &str = r#"{"schema": "sglang-launch/topology/v1", "source": "test",
  "driver_version": "580.95.05", "cuda_driver_version": "13.0", "gpus": [
  {"index": 0, "uuid": "GPU-0", "name": "NVIDIA H100 80GB HBM3", "pci_bus_id": "00000000:18:00.0",
   "compute_capability": "9.0", "memory_total_mib": 81559, "memory_used_mib": 0,
   "mig_enabled": false, "numa_node": 0, "pcie_gen": 5, "pcie_width": 16},
  {"index": 1, "uuid": "GPU-1", "name": "NVIDIA H100\u001b[31mRED\u001b[0m\nFAKE\u0085",
   "pci_bus_id": "00000000:28:00.0", "compute_capability": "9.0", "memory_total_mib": 81559,
   "memory_used_mib": 0, "mig_enabled": false, "numa_node": 0, "pcie_gen": 5, "pcie_width": 16}],
  "links": [{"gpus": [0, 1], "path": "NV18", "nvlink": true, "p2p": "ok"}]}"#;

const OFFLINE: &[&str] = &["--topology", TOPO, "--sglang-version", V];
const M: &[&str] = &["--model-path", MODEL];
const ARG001: Says = Says::Finding("error", "ARG001");

static MATRIX: &[Case] = &[
    Case {
        input: "mistyped launcher option",
        launcher: &["--topology", TOPO, "--sglang-verion", V],
        sglang: M,
        env: &[],
        files: &[],
        runs: &both(
            2,
            2,
            Says::Error,
            &["'--sglang-verion'", "'--sglang-version'"],
        ),
    },
    Case {
        input: "unknown option before `--`",
        launcher: &["--topology", TOPO, "--frobnicate"],
        sglang: M,
        env: &[],
        files: &[],
        runs: &one(
            Form::Check,
            2,
            Says::Error,
            &["'--frobnicate'", "SGLang's arguments go after it"],
        ),
    },
    Case {
        input: "launcher boolean variable not a boolean",
        launcher: OFFLINE,
        sglang: M,
        env: &[("SGLANG_LAUNCH_STRICT", "maybe")],
        files: &[],
        runs: &both(
            2,
            2,
            Says::Error,
            &["SGLANG_LAUNCH_STRICT=maybe", "use 1/0, true/false"],
        ),
    },
    Case {
        input: "launcher variable outside its choices",
        launcher: OFFLINE,
        sglang: M,
        env: &[("SGLANG_LAUNCH_MODE", "loud")],
        files: &[],
        runs: &both(
            2,
            2,
            Says::Error,
            &["SGLANG_LAUNCH_MODE=loud", "one of enforce, warn, off"],
        ),
    },
    Case {
        input: "launcher variable holding terminal controls",
        launcher: OFFLINE,
        sglang: M,
        env: &[("SGLANG_LAUNCH_MODE", "loud\x1b[8m\nFAKE")],
        files: &[],
        runs: &both(
            2,
            2,
            Says::Error,
            &[
                "SGLANG_LAUNCH_MODE=loud\\x1b[8m\\nfake",
                "one of enforce, warn, off",
            ],
        ),
    },
    Case {
        input: "GPU name holding terminal controls (topology file)",
        launcher: &["--topology", "{t}/t.json", "--sglang-version", V],
        sglang: &["--model-path", MODEL, "--tp", "2"],
        env: &[],
        files: &[Plant::Text("t.json", TOPO_CONTROLS)],
        runs: &both(
            0,
            0,
            Says::Finding("warning", "TOP003"),
            &["GPU 1: NVIDIA H100\\x1b[31mRED\\x1b[0m\\nFAKE\\u{85}"],
        ),
    },
    Case {
        input: "unknown `SGLANG_LAUNCH_*` variable",
        launcher: OFFLINE,
        sglang: M,
        env: &[("SGLANG_LAUNCH_TOPOLGY", "x.json")],
        files: &[],
        runs: &both(
            0,
            0,
            Says::Warning,
            &[
                "SGLANG_LAUNCH_TOPOLGY",
                "did you mean SGLANG_LAUNCH_TOPOLOGY",
            ],
        ),
    },
    Case {
        input: "launcher argument not UTF-8",
        launcher: &["--topology", TOPO, "--sglang-version=0.5.23<FF>"],
        sglang: M,
        env: &[],
        files: &[],
        runs: &both(
            2,
            2,
            Says::Error,
            &["'--sglang-version=0.5.23\u{FFFD}'", "not valid UTF-8"],
        ),
    },
    Case {
        input: "launcher variable not UTF-8",
        launcher: &["--sglang-version", V],
        sglang: M,
        env: &[("SGLANG_LAUNCH_TOPOLOGY", "examples/topologies/x<FF>.json")],
        files: &[],
        runs: &both(
            2,
            2,
            Says::Error,
            &["SGLANG_LAUNCH_TOPOLOGY", "not valid UTF-8"],
        ),
    },
    Case {
        input: "`--sglang-version` not a version",
        launcher: &["--topology", TOPO, "--sglang-version", "banana"],
        sglang: M,
        env: &[],
        files: &[],
        runs: &both(
            2,
            2,
            Says::Error,
            &["--sglang-version \"banana\"", "sglang-launch flags list"],
        ),
    },
    Case {
        input: "unknown rule code (`explain`)",
        launcher: &["explain", "XX999"],
        sglang: &[],
        env: &[],
        files: &[],
        runs: &one(
            Form::Alone,
            2,
            Says::Error,
            &[
                "unknown rule `XX999`",
                "`sglang-launch rules` lists them all",
            ],
        ),
    },
    Case {
        input: "unknown rule code (`--allow`, `SGLANG_LAUNCH_ALLOW`)",
        launcher: OFFLINE,
        sglang: M,
        env: &[("SGLANG_LAUNCH_ALLOW", "XX999")],
        files: &[],
        runs: &both(
            2,
            2,
            Says::Error,
            &[
                "--allow/--deny: unknown rule `XX999`",
                "sglang-launch rules",
            ],
        ),
    },
    Case {
        input: "SGLang rejects an argument",
        launcher: OFFLINE,
        sglang: &["--model-path", MODEL, "--bogus-flag"],
        env: &[],
        files: &[],
        runs: &both(1, 78, ARG001, &["unrecognized arguments: --bogus-flag"]),
    },
    Case {
        input: "secret option misspelled (`-api-key VALUE`)",
        launcher: OFFLINE,
        sglang: &["--model-path", MODEL, "-api-key", "Sekret-1"],
        env: &[],
        files: &[],
        runs: &both(
            1,
            78,
            ARG001,
            &[
                "unrecognized arguments: -api-key ***",
                "did you mean --api-key?",
            ],
        ),
    },
    Case {
        input: "`--model-path` a URL with a password",
        launcher: OFFLINE,
        sglang: &["--model-path", "s3://user:Sekret=1;@@host/bucket/m"],
        env: &[],
        files: &[],
        runs: &both(
            0,
            0,
            Says::Finding("info", "MEM001"),
            &[
                "s3://***@host/bucket/m: not a local directory",
                "point --model-path at a local copy",
            ],
        ),
    },
    Case {
        input: "`--config` YAML: syntax error",
        launcher: OFFLINE,
        sglang: &["--model-path", MODEL, "--config", "{t}/bad.yaml"],
        env: &[],
        files: &[Plant::Text("bad.yaml", "tp: [1\n")],
        runs: &both(1, 78, ARG001, &["bad.yaml\", line 2", "ParserError"]),
    },
    Case {
        input: "`--config` YAML: alias bomb",
        launcher: OFFLINE,
        sglang: &["--model-path", MODEL, "--config", "{t}/bomb.yaml"],
        env: &[],
        files: &[Plant::Text("bomb.yaml", BOMB)],
        runs: &both(1, 78, ARG001, &["bomb.yaml", "write the values out"]),
    },
    Case {
        input: "`--config` YAML: not a mapping",
        launcher: OFFLINE,
        sglang: &["--model-path", MODEL, "--config", "{t}/list.yaml"],
        env: &[],
        files: &[Plant::Text("list.yaml", "- 1\n- 2\n")],
        runs: &both(
            1,
            78,
            ARG001,
            &["--config {t}/list.yaml", "must contain a dictionary"],
        ),
    },
    Case {
        input: "topology file missing",
        launcher: &["--topology", "{t}/missing.json", "--sglang-version", V],
        sglang: M,
        env: &[],
        files: &[],
        runs: &both(
            2,
            2,
            Says::Error,
            &["{t}/missing.json", "check the path given to --topology"],
        ),
    },
    Case {
        input: "topology file: malformed JSON",
        launcher: &["--topology", "{t}/bad.json", "--sglang-version", V],
        sglang: M,
        env: &[],
        files: &[Plant::Text("bad.json", "{\"gpus\": [\n")],
        runs: &both(
            2,
            2,
            Says::Error,
            &["{t}/bad.json:2:1", "must be topology-v1 JSON"],
        ),
    },
    Case {
        input: "topology file: wrong schema",
        launcher: &["--topology", "{t}/old.json", "--sglang-version", V],
        sglang: M,
        env: &[],
        files: &[Plant::Text("old.json", "{\"schema\": \"topology/v0\"}\n")],
        runs: &both(
            2,
            2,
            Says::Error,
            &["{t}/old.json:1", "sglang-launch detect --json"],
        ),
    },
    Case {
        input: "topology file: a FIFO",
        launcher: &["--topology", "{t}/fifo.json", "--sglang-version", V],
        sglang: M,
        env: &[],
        files: &[Plant::Fifo("fifo.json")],
        runs: &both(
            2,
            2,
            Says::Error,
            &[
                "{t}/fifo.json: it is a named pipe",
                "check the path given to --topology",
            ],
        ),
    },
    Case {
        input: "topology file: a directory",
        launcher: &["--topology", "{t}/dir.json", "--sglang-version", V],
        sglang: M,
        env: &[],
        files: &[Plant::Dir("dir.json")],
        runs: &both(
            2,
            2,
            Says::Error,
            &[
                "{t}/dir.json: it is a directory",
                "check the path given to --topology",
            ],
        ),
    },
    Case {
        input: "topology file: oversized",
        launcher: &["--topology", "{t}/big.json", "--sglang-version", V],
        sglang: M,
        env: &[],
        files: &[Plant::Sparse("big.json", 17 << 20)],
        runs: &both(
            2,
            2,
            Says::Error,
            &[
                "{t}/big.json: larger than 16 MiB",
                "check the path given to --topology",
            ],
        ),
    },
    Case {
        input: "no NVIDIA driver, no `--topology`",
        launcher: &["--sglang-version", V],
        sglang: M,
        env: &[("SGLANG_LAUNCH_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")],
        files: &[],
        runs: &both(
            2,
            75,
            Says::Error,
            &[
                "/nonexistent/libnvidia-ml.so.1",
                "describe the GPUs with --topology FILE",
            ],
        ),
    },
    Case {
        input: "launcher config file: malformed TOML",
        launcher: OFFLINE,
        sglang: M,
        env: &[("SGLANG_LAUNCH_SYSTEM_CONFIG", "{t}/config.toml")],
        files: &[Plant::Text("config.toml", "strict = \n")],
        runs: &both(
            2,
            2,
            Says::Error,
            &[
                "{t}/config.toml: TOML parse error at line 1",
                "docs/config.md",
            ],
        ),
    },
    Case {
        input: "launcher config file: unknown key",
        launcher: OFFLINE,
        sglang: M,
        env: &[("SGLANG_LAUNCH_SYSTEM_CONFIG", "{t}/config.toml")],
        files: &[Plant::Text("config.toml", "stirct = true\n")],
        runs: &both(
            2,
            2,
            Says::Error,
            &["{t}/config.toml", "unknown field `stirct`, expected one of"],
        ),
    },
    Case {
        input: "launcher config file someone else could have written",
        launcher: OFFLINE,
        sglang: M,
        env: &[("SGLANG_LAUNCH_SYSTEM_CONFIG", "{t}/config.toml")],
        files: &[Plant::NotOurs(
            "config.toml",
            "python = \"/nonexistent/planted\"\n",
        )],
        runs: &both(
            2,
            2,
            Says::Error,
            &[
                "{t}/config.toml: refused",
                "move the file to a directory only root (or you) can write",
            ],
        ),
    },
    Case {
        input: "scheduler variable the multi-node derivation needs, unreadable",
        launcher: &["--topology", TOPO, "--sglang-version", V],
        sglang: &["--model-path", "m", "--tp", "16"],
        env: &[
            ("LWS_GROUP_SIZE", "2"),
            ("LWS_WORKER_INDEX", "abc"),
            ("LWS_LEADER_ADDRESS", "llm-0.llm"),
        ],
        files: &[],
        runs: &both(
            2,
            2,
            Says::Error,
            &["LWS_WORKER_INDEX=\"abc\"", "give --node-rank yourself"],
        ),
    },
    Case {
        input: "profile missing",
        launcher: &[
            "--topology",
            TOPO,
            "--sglang-version",
            V,
            "--profile",
            "nosuch",
        ],
        sglang: M,
        env: &[],
        files: &[],
        runs: &both(
            2,
            2,
            Says::Error,
            &["no profile named \"nosuch\"", "sglang-launch profiles list"],
        ),
    },
    Case {
        input: "profile malformed",
        launcher: &[
            "--topology",
            TOPO,
            "--sglang-version",
            V,
            "--profiles-dir",
            "{t}/profiles",
            "--profile",
            "broken",
        ],
        sglang: M,
        env: &[],
        files: &[Plant::Text("profiles/broken.toml", "[args\n")],
        runs: &both(
            2,
            2,
            Says::Error,
            &["{t}/profiles/broken.toml:1:6", "Profiles section"],
        ),
    },
    Case {
        input: "profile someone else could have written (another owner when root)",
        launcher: &[
            "--topology",
            TOPO,
            "--sglang-version",
            V,
            "--profiles-dir",
            "{t}/profiles",
            "--profile",
            "planted",
        ],
        sglang: M,
        env: &[],
        files: &[Plant::NotOurs(
            "profiles/planted.toml",
            "[env]\nLD_PRELOAD = \"/nonexistent/evil.so\"\n",
        )],
        runs: &both(
            2,
            2,
            Says::Error,
            &[
                "{t}/profiles/planted.toml: refused",
                "move the file to a directory only root (or you) can write",
            ],
        ),
    },
    Case {
        input: "profile for other hardware",
        launcher: &[
            "--topology",
            TOPO,
            "--sglang-version",
            V,
            "--profile",
            "l4-1x",
        ],
        sglang: M,
        env: &[],
        files: &[],
        runs: &both(
            1,
            78,
            Says::Error,
            &["profile l4-1x is not for this machine", "pick another"],
        ),
    },
    Case {
        input: "model directory without `config.json`",
        launcher: OFFLINE,
        sglang: &["--model-path", "{t}/model"],
        env: &[],
        files: &[Plant::Dir("model")],
        runs: &both(
            0,
            0,
            Says::Finding("info", "MEM001"),
            &[
                "{t}/model/config.json",
                "point --model-path at the directory",
            ],
        ),
    },
    Case {
        input: "model `config.json`: malformed JSON",
        launcher: OFFLINE,
        sglang: &["--model-path", "{t}/model"],
        env: &[],
        files: &[Plant::Text(
            "model/config.json",
            "{\"model_type\": \"qwen3\",\n",
        )],
        runs: &both(
            0,
            0,
            Says::Finding("warning", "MEM002"),
            &[
                "{t}/model/config.json: invalid JSON",
                "fix or download the file again",
            ],
        ),
    },
    Case {
        input: "model `config.json`: implausible value",
        launcher: OFFLINE,
        sglang: &["--model-path", "{t}/model"],
        env: &[],
        files: &[Plant::ModelWith("model", "num_hidden_layers", 100_000_000)],
        runs: &both(
            0,
            0,
            Says::Finding("warning", "MEM013"),
            &[
                "num_hidden_layers is 100000000",
                "fix config.json or override the key",
            ],
        ),
    },
    Case {
        input: "Python interpreter missing",
        launcher: &["--topology", TOPO, "--python", "/nonexistent/python3"],
        sglang: M,
        env: &[],
        files: &[],
        runs: &[
            Run {
                form: Form::Check,
                code: 0,
                says: Says::Finding("warning", "VER002"),
                names: &["/nonexistent/python3", "pass --sglang-version VER"],
            },
            Run {
                form: Form::DropIn,
                code: 127,
                says: Says::Error,
                names: &[
                    "Python interpreter /nonexistent/python3 not found",
                    "--python PATH",
                ],
            },
        ],
    },
    Case {
        input: "SGLang not installed for the interpreter",
        launcher: &["--topology", TOPO, "--python", "{t}/bare/bin/python3"],
        sglang: M,
        env: &[],
        files: &[Plant::BareVenv("bare")],
        runs: &[
            Run {
                form: Form::Check,
                code: 0,
                says: Says::Finding("warning", "VER002"),
                names: &["{t}/bare/bin/python3", "--python PATH to the interpreter"],
            },
            Run {
                form: Form::DropIn,
                code: 127,
                says: Says::Error,
                names: &[
                    "SGLang is not installed for {t}/bare/bin/python3",
                    "-m pip install sglang",
                ],
            },
        ],
    },
    Case {
        input: "SGLang's parser read by a program that leaves a child holding its output",
        launcher: &["--topology", TOPO, "--python", "{t}/x/venv/bin/python3"],
        sglang: M,
        env: &[],
        files: &[Plant::Extractor(
            "x",
            "(sleep 30) &\necho '{\"ok\": false, \"error\": \"parser import failed\"}'",
        )],
        runs: &both(
            0,
            0,
            Says::Finding("warning", "VER001"),
            &["parser import failed", "nearest older one"],
        ),
    },
    Case {
        input: "SGLang's parser read by a program that prints without end",
        launcher: &["--topology", TOPO, "--python", "{t}/x/venv/bin/python3"],
        sglang: M,
        env: &[],
        files: &[Plant::Extractor(
            "x",
            "head -c 1000000000 /dev/zero | tr '\\0' A",
        )],
        runs: &both(
            0,
            0,
            Says::Finding("warning", "VER001"),
            &["more than 8 MiB of output", "nearest older one"],
        ),
    },
    Case {
        input: "`--json-file` not writable",
        launcher: &[
            "--topology",
            TOPO,
            "--sglang-version",
            V,
            "--json-file",
            "/nonexistent/plan.json",
        ],
        sglang: M,
        env: &[],
        files: &[],
        runs: &one(
            Form::Check,
            2,
            Says::Error,
            &[
                "--json-file /nonexistent/plan.json",
                "No such file or directory",
            ],
        ),
    },
    Case {
        input: "`--json-file` a named pipe no process reads",
        launcher: &[
            "--topology",
            TOPO,
            "--sglang-version",
            V,
            "--json-file",
            "{t}/fifo",
        ],
        sglang: M,
        env: &[],
        files: &[Plant::Fifo("fifo")],
        runs: &one(
            Form::Check,
            2,
            Says::Error,
            &["--json-file {t}/fifo", "a named pipe no process is reading"],
        ),
    },
    Case {
        input: "`wait-ready`: not a URL",
        launcher: &["wait-ready", "--url", "localhost:30000"],
        sglang: &[],
        env: &[],
        files: &[],
        runs: &one(
            Form::Alone,
            2,
            Says::Error,
            &["\"localhost:30000\" is not an http://", "--host and --port"],
        ),
    },
    Case {
        input: "`wait-ready`: no answer in time",
        launcher: &[
            "wait-ready",
            "--url",
            "http://127.0.0.1:1/health",
            "--timeout",
            "1",
        ],
        sglang: &[],
        env: &[],
        files: &[],
        runs: &one(
            Form::Alone,
            3,
            Says::Error,
            &[
                "http://127.0.0.1:1/health did not answer 200",
                "Connection refused",
            ],
        ),
    },
    Case {
        input: "`wait-ready`: URL with a password, no answer",
        launcher: &[
            "wait-ready",
            "--url",
            "http://user:Sekret=1@127.0.0.1:1/health",
            "--timeout",
            "1",
        ],
        sglang: &[],
        env: &[],
        files: &[],
        runs: &one(
            Form::Alone,
            3,
            Says::Error,
            &[
                "http://***@127.0.0.1:1/health did not answer 200",
                "Connection refused",
            ],
        ),
    },
];

/// A billion-laughs document: nine levels of nine aliases each.
const BOMB: &str = "a: &a [x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
";

/// `{t}` → the row's directory, `<FF>` → the byte 0xFF.
fn fill(s: &str, t: &Path) -> OsString {
    let s = s.replace("{t}", &t.to_string_lossy());
    let parts: Vec<&[u8]> = s.split(FF).map(str::as_bytes).collect();
    OsString::from_vec(parts.join(&0xFF))
}

fn plant(p: &Plant, t: &Path) {
    let at = |name: &str| {
        let path = t.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        path
    };
    match *p {
        Plant::Text(name, text) => std::fs::write(at(name), text).unwrap(),
        Plant::Fifo(name) => {
            nix::unistd::mkfifo(&at(name), nix::sys::stat::Mode::from_bits(0o600).unwrap()).unwrap()
        }
        Plant::Dir(name) => std::fs::create_dir_all(at(name)).unwrap(),
        Plant::Extractor(dir, body) => {
            let root = t.join(dir);
            std::fs::create_dir_all(&root).unwrap();
            let py = fake_venv(&root);
            let site = root.join("venv/lib/python3.11/site-packages");
            std::fs::remove_dir_all(site.join("sglang-0.5.23.dist-info")).unwrap();
            common::sglang_dist_info(&site, "0.9.0", None);
            let own = root.join("record").to_string_lossy().into_owned();
            let shared = t.join("record").to_string_lossy().into_owned();
            let script = std::fs::read_to_string(&py).unwrap().replace(&own, &shared);
            let extractor = format!("#!/bin/sh\nif [ \"$1\" = -c ]; then\n{body}\nexit 0\nfi\n");
            std::fs::write(&py, script.replacen("#!/bin/sh\n", &extractor, 1)).unwrap();
        }
        Plant::NotOurs(name, text) => {
            let path = at(name);
            std::fs::write(&path, text).unwrap();
            if nix::unistd::geteuid().is_root() {
                let nobody = nix::unistd::Uid::from_raw(65534);
                nix::unistd::chown(&path, Some(nobody), None).unwrap();
            } else {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::Permissions::from_mode(0o666);
                std::fs::set_permissions(&path, mode).unwrap();
            }
        }
        Plant::Sparse(name, len) => std::fs::File::create(at(name))
            .unwrap()
            .set_len(len)
            .unwrap(),
        Plant::ModelWith(dir, key, value) => {
            let config = Path::new(ROOT).join(MODEL).join("config.json");
            let mut c: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(config).unwrap()).unwrap();
            c[key] = value.into();
            std::fs::write(at(&format!("{dir}/config.json")), c.to_string()).unwrap();
        }
        Plant::BareVenv(dir) => {
            // A venv with SGLang, then SGLang taken away: the same recording interpreter.
            let venv = t.join(dir);
            std::fs::create_dir_all(&venv).unwrap();
            fake_venv(&venv);
            std::fs::remove_dir_all(venv.join("venv/lib")).unwrap();
            std::fs::rename(venv.join("venv/bin"), venv.join("bin")).unwrap();
            std::fs::rename(venv.join("venv/pyvenv.cfg"), venv.join("pyvenv.cfg")).unwrap();
            // It records next to the row's other runs.
            let py = venv.join("bin/python3");
            let script = std::fs::read_to_string(&py).unwrap();
            let own = venv.join("record").to_string_lossy().into_owned();
            let shared = t.join("record").to_string_lossy().into_owned();
            std::fs::write(&py, script.replace(&own, &shared)).unwrap();
        }
    }
}

fn argv(case: &Case, form: Form, t: &Path) -> Vec<OsString> {
    let launcher = case.launcher.iter().map(|s| fill(s, t));
    let sglang = case.sglang.iter().map(|s| fill(s, t));
    match form {
        Form::Check => std::iter::once("check".into())
            .chain(launcher)
            .chain(std::iter::once("--".into()))
            .chain(sglang)
            .collect(),
        Form::DropIn => launcher.chain(sglang).collect(),
        Form::Alone => launcher.collect(),
    }
}

/// Runs one row in one form and checks it against the contract; the failures, if any, and the
/// run as a transcript.
fn check_run(case: &Case, run: &Run) -> (Vec<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path();
    let py = fake_venv(t);
    for p in case.files {
        plant(p, t);
    }
    let mut cmd = sl();
    cmd.env("SGLANG_LAUNCH_PYTHON", &py)
        .args(argv(case, run.form, t))
        .timeout(std::time::Duration::from_secs(60));
    for (k, v) in case.env {
        cmd.env(k, fill(v, t));
    }
    let start = std::time::Instant::now();
    let (out, shown) = common::transcript_of(&mut cmd, &[(t, "[T]")]);
    let took = start.elapsed();
    // `check` writes its report on stdout, `run` on stderr (stdout is SGLang's).
    let err =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    let at = |s: &str| fill(s, t).to_string_lossy().into_owned();
    let mut bad = Vec::new();
    let mut fail = |what: String| bad.push(format!("{} [{:?}]: {what}", case.input, run.form));
    if out.status.code() != Some(run.code) {
        fail(format!("exit {:?}, not {}", out.status.code(), run.code));
    }
    if WAITS.contains(&case.input) && took > std::time::Duration::from_secs(3) {
        fail(format!("took {took:?}, not under 3 s"));
    }
    if err.contains("panicked at") || err.contains("RUST_BACKTRACE") {
        fail("panicked".into());
    }
    if err.contains(SECRET) {
        fail("printed a secret value".into());
    }
    // Nothing from the input reaches the terminal as a control: only the launcher's own
    // line breaks (colour is off here).
    if let Some(c) = err
        .chars()
        .find(|&c| c != '\n' && (c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)))
    {
        fail(format!("printed the control {c:?}"));
    }
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("sglang-launch: error:"))
        .collect();
    let (lines, head): (Vec<&str>, String) = match run.says {
        Says::Error => (errors.clone(), "sglang-launch: error:".into()),
        Says::Warning => (
            err.lines()
                .filter(|l| l.starts_with("sglang-launch: warning:"))
                .collect(),
            "sglang-launch: warning:".into(),
        ),
        Says::Finding(sev, code) => {
            let head = format!("  {sev:<7} {code} ");
            (err.lines().filter(|l| l.starts_with(&head)).collect(), head)
        }
    };
    let expected_errors = usize::from(matches!(run.says, Says::Error));
    if lines.len() != 1 || (errors.len() != expected_errors) {
        fail(format!(
            "want one {head:?} line (and {expected_errors} error lines)"
        ));
    } else if let Says::Error | Says::Warning = run.says
        && !lines[0].contains(&at(run.names[0]))
    {
        fail(format!("the message does not name {:?}", at(run.names[0])));
    }
    // An error is the whole answer: no report about a launch that does not happen.
    if let Says::Error = run.says
        && err.lines().any(|l| l.starts_with("verdict:"))
    {
        fail("printed a report before the error".into());
    }
    for n in run.names {
        if !err.contains(&at(n)) {
            fail(format!("no {:?} in the message", at(n)));
        }
    }
    // Only a command that still works (exit 0 in the drop-in form) reaches SGLang.
    let launched = recorded(t).is_some();
    if launched != (run.form == Form::DropIn && run.code == 0) {
        fail(format!("SGLang launched: {launched}"));
    }
    if !bad.is_empty() {
        bad.push(format!("stderr:\n{err}"));
    }
    (bad, shown)
}

/// Whether a row's whole output is the same on every machine: not for a file owned by another
/// user (its owner and mode depend on whether the tests run as root), a parser read by running
/// a program, or a server's answer (timings and the system's error text).
fn stable(case: &Case) -> bool {
    let varies = case
        .files
        .iter()
        .any(|p| matches!(p, Plant::NotOurs(..) | Plant::Extractor(..)));
    !varies && case.launcher.first() != Some(&"wait-ready")
}

/// A snapshot name for a row's input.
fn slug(input: &str) -> String {
    let s: String = input
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    s.split('_')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

#[test]
fn every_bad_input_gets_its_message_and_exit_code() {
    let mut failures = Vec::new();
    let mut shown = Vec::new();
    for case in MATRIX {
        let mut text = String::new();
        for run in case.runs {
            let (bad, t) = check_run(case, run);
            failures.extend(bad);
            text += &t;
        }
        shown.push((case, text));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Each row's whole output, every form: the message line and everything around it.
    for (case, text) in shown.into_iter().filter(|(c, _)| stable(c)) {
        insta::assert_snapshot!(slug(case.input), text);
    }
}

#[test]
fn each_bad_input_is_in_the_matrix_once() {
    let mut inputs: Vec<&str> = MATRIX.iter().map(|c| c.input).collect();
    inputs.sort_unstable();
    let n = inputs.len();
    inputs.dedup();
    assert_eq!(inputs.len(), n, "a bad input listed twice");
    for w in WAITS {
        assert!(inputs.contains(w), "{w:?} in WAITS is no row");
    }
    // Every exit code of README's table but 0 appears.
    for code in [1, 2, 3, 78, 127] {
        assert!(
            MATRIX.iter().flat_map(|c| c.runs).any(|r| r.code == code),
            "exit {code} has no row"
        );
    }
}

const BEGIN: &str = "<!-- bad-inputs:begin (generated from tests/it/bad_inputs.rs) -->";
const END: &str = "<!-- bad-inputs:end -->";

fn cell(s: &str) -> String {
    s.replace("{t}/", "…/")
        .replace("{t}", "…")
        .replace(FF, "\\xff")
        .replace('|', "\\|")
}

fn message(r: &Run) -> String {
    let kind = match r.says {
        Says::Error => "error".to_owned(),
        Says::Warning => "warning".to_owned(),
        Says::Finding(sev, code) => format!("{sev} {code}"),
    };
    let names: Vec<String> = r.names.iter().map(|n| format!("“{}”", cell(n))).collect();
    format!("{kind}: {}", names.join(" … "))
}

/// README's table: one line per row, the drop-in form's message where it has one.
fn render() -> String {
    let mut s = String::from(
        "| bad input | message (names the input … says what to do) | `check` | `run` / drop-in / command |\n|---|---|---|---|\n",
    );
    for c in MATRIX {
        let code = |f: Form| {
            c.runs
                .iter()
                .find(|r| r.form == f)
                .map_or("—".to_owned(), |r| r.code.to_string())
        };
        let shown = c.runs.last().unwrap();
        let other = if c.runs.iter().any(|r| r.form == Form::Alone) {
            code(Form::Alone)
        } else {
            code(Form::DropIn)
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            c.input,
            message(shown),
            code(Form::Check),
            other
        ));
    }
    s
}

#[test]
fn readme_table_matches_the_matrix() {
    let path = Path::new(ROOT).join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (Some(a), Some(b)) = (readme.find(BEGIN), readme.find(END)) else {
        panic!("README.md lacks the {BEGIN} … {END} markers");
    };
    let want = format!("{BEGIN}\n{}{END}", render());
    let have = &readme[a..b + END.len()];
    if std::env::var_os("SGLANG_LAUNCH_UPDATE_DOCS").is_some_and(|v| v == "1") {
        std::fs::write(&path, readme.replace(have, &want)).unwrap();
    } else {
        assert_eq!(
            have, want,
            "README's bad-input table is stale: run scripts/gen-docs.sh"
        );
    }
}

/// Thousands of unknown `SGLANG_*` variables (a leaked CI environment): the check ends, the
/// first 32 get a finding each (with a "did you mean" where one is close), the rest one.
#[test]
fn ten_thousand_unknown_sglang_variables_are_summarised() {
    let mut cmd = sl();
    cmd.args(["check", "--topology", TOPO, "--sglang-version", V, "--"])
        .args(M)
        .env("SGLANG_ENABLE_TORCH_COMPIL", "1");
    for i in 0..10_000 {
        cmd.env(format!("SGLANG_ZZ_UNKNOWN_{i:05}"), "1");
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let env001: Vec<&str> = err.lines().filter(|l| l.contains(" ENV001 ")).collect();
    assert_eq!(env001.len(), 33, "{err}");
    assert!(
        env001[0].contains("did you mean SGLANG_ENABLE_TORCH_COMPILE?"),
        "{}",
        env001[0]
    );
    assert!(
        env001[32].contains("… and 9969 more variables"),
        "{}",
        env001[32]
    );
}
