//! The topology-v1 file format: every fixture round-trips, every mistake is one clear line.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sglang_launch::facts::Topology;
use sglang_launch::facts::topology::{SCHEMA, TopologyError};

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/topologies");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 9, "fixtures missing in {}", dir.display());
    files
}

#[test]
fn every_fixture_loads_and_round_trips() {
    for path in fixtures() {
        let text = std::fs::read_to_string(&path).unwrap();
        let topo = Topology::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(topo.schema, SCHEMA);
        assert!(!topo.gpus.is_empty(), "{}", path.display());
        let again: Value = serde_json::from_str(&topo.to_json_pretty()).unwrap();
        let original: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(again, original, "{} does not round-trip", path.display());
        // And the re-serialised text loads to the same value.
        let reloaded = Topology::from_json_str(&topo.to_json_pretty(), "again").unwrap();
        assert_eq!(reloaded, topo);
        for g in &topo.gpus {
            assert!(g.cc().is_some(), "{}: GPU {} cc", path.display(), g.index);
        }
    }
}

#[test]
fn examples_match_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for path in fixtures() {
        let name = path.file_name().unwrap();
        let example = root.join("examples/topologies").join(name);
        assert_eq!(
            std::fs::read_to_string(&example).unwrap(),
            std::fs::read_to_string(&path).unwrap(),
            "{}",
            example.display()
        );
    }
}

const SMALL: &str = r#"{
  "schema": "sglang-launch/topology/v1",
  "source": "hand",
  "gpus": [
    {
      "index": 0,
      "uuid": "GPU-aaaa",
      "name": "NVIDIA L4",
      "pci_bus_id": "00000000:01:00.0",
      "compute_capability": "8.9",
      "memory_total_mib": 23034
    },
    {
      "index": 1,
      "uuid": "GPU-bbbb",
      "name": "NVIDIA L4",
      "pci_bus_id": "00000000:02:00.0",
      "compute_capability": "8.9",
      "memory_total_mib": 23034
    }
  ],
  "links": [
    { "gpus": [0, 1], "path": "PHB", "nvlink": false, "p2p": "not_supported" }
  ]
}"#;

fn edit(from: &str, to: &str) -> String {
    assert!(SMALL.contains(from), "{from}");
    SMALL.replacen(from, to, 1)
}

fn err(text: &str) -> String {
    match Topology::from_json_str(text, "box.json") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => {
            let s = e.to_string();
            assert!(!s.contains('\n'), "multi-line error: {s}");
            s
        }
    }
}

#[test]
fn minimal_file_loads_with_defaults() {
    let t = Topology::from_json_str(SMALL, "box.json").unwrap();
    assert_eq!(t.gpus.len(), 2);
    assert!(!t.gpus[0].mig_enabled);
    assert_eq!(t.gpus[0].memory_used_mib, None);
    assert_eq!(t.gpus[1].memory_free_mib(), 23034);
    assert_eq!(t.link(1, 0).unwrap().p2p, "not_supported");
    // links is optional
    let no_links = Topology::from_json_str(
        &SMALL.replacen(
            r#",
  "links": [
    { "gpus": [0, 1], "path": "PHB", "nvlink": false, "p2p": "not_supported" }
  ]"#,
            "",
            1,
        ),
        "x",
    )
    .unwrap();
    assert!(no_links.links.is_empty());
    assert!(no_links.link(0, 1).is_none());
}

#[test]
fn mistakes_are_one_clear_line() {
    // (edit from, edit to, substrings the message must contain)
    let cases: &[(&str, &str, &[&str])] = &[
        (
            r#""memory_total_mib": 23034
    },"#,
            r#""memory_total_mb": 23034
    },"#,
            &[
                "box.json:11:7:",
                "unknown GPU key `memory_total_mb`",
                "did you mean `memory_total_mib`?",
            ],
        ),
        (
            r#""source": "hand","#,
            r#""source": "hand", "hostnme": "x","#,
            &[
                "box.json:3:21:",
                "unknown top-level key `hostnme`",
                "did you mean `hostname`?",
            ],
        ),
        (
            r#""nvlink": false,"#,
            r#""nvlink": false, "bandwidth": 5,"#,
            &[
                "box.json:23:",
                "unknown link key `bandwidth`",
                "known keys: gpus, path, nvlink, p2p",
            ],
        ),
        (
            r#""schema": "sglang-launch/topology/v1","#,
            r#""schema": "sglang-launch/topology/v2","#,
            &[
                "box.json:2:3:",
                "\"sglang-launch/topology/v2\"",
                "reads only `sglang-launch/topology/v1`",
                "detect --json",
            ],
        ),
        (
            r#""schema": "sglang-launch/topology/v1","#,
            "",
            &["schema is missing"],
        ),
        (
            r#""index": 1,"#,
            r#""index": 0,"#,
            &[
                "box.json:14:7:",
                "gpus[1].index",
                "GPU index 0 is also used by gpus[0]",
            ],
        ),
        (
            r#""uuid": "GPU-bbbb","#,
            r#""uuid": "GPU-aaaa","#,
            &["gpus[1].uuid", "UUID GPU-aaaa is also used by gpus[0]"],
        ),
        (
            r#""compute_capability": "8.9",
      "memory_total_mib": 23034
    },"#,
            r#""compute_capability": "8,9",
      "memory_total_mib": 23034
    },"#,
            &[
                "box.json:10:7:",
                "gpus[0].compute_capability",
                "\"8,9\" is not \"major.minor\"",
            ],
        ),
        (
            r#""memory_total_mib": 23034
    },"#,
            r#""memory_total_mib": 0
    },"#,
            &["gpus[0].memory_total_mib", "is 0"],
        ),
        (
            r#""memory_total_mib": 23034
    },"#,
            r#""memory_total_mib": 23034, "memory_used_mib": 30000
    },"#,
            &[
                "gpus[0].memory_used_mib",
                "30000 exceeds memory_total_mib 23034",
            ],
        ),
        (
            r#""gpus": [0, 1]"#,
            r#""gpus": [1, 1]"#,
            &["box.json:23:7:", "links[0].gpus", "GPU 1 to itself"],
        ),
        (
            r#""gpus": [0, 1]"#,
            r#""gpus": [0, 7]"#,
            &["links[0].gpus", "GPU 7 is not in `gpus` (indices: 0, 1)"],
        ),
        (
            r#""path": "PHB""#,
            r#""path": "PBH""#,
            &[
                "links[0].path",
                "\"PBH\" is not one of NV<n>, PIX",
                "did you mean \"PHB\"?",
            ],
        ),
        (
            r#""path": "PHB""#,
            r#""path": "NV0""#,
            &["links[0].path", "\"NV0\""],
        ),
        (
            r#""p2p": "not_supported""#,
            r#""p2p": "OK""#,
            &[
                "links[0].p2p",
                "\"OK\" is not an NVML P2P status",
                "did you mean \"ok\"?",
            ],
        ),
        (
            r#""index": 1,"#,
            r#""index": "1","#,
            &[
                "box.json:14:7: gpus[1].index: expected a whole number from 0 to 4294967295, found \"1\"; fix the value",
            ],
        ),
        (
            r#""uuid": "GPU-bbbb","#,
            "",
            &[
                "box.json:13:5: gpus[1]: missing required key `uuid`; add it (the GPU UUID as `nvidia-smi -L` shows it)",
            ],
        ),
        (
            r#""gpus": ["#,
            r#""gpus": [[,"#,
            &["box.json:4:", "the file must be topology-v1 JSON"],
        ),
        (
            r#""gpus": ["#,
            r#""gpus": 5, "x": ["#,
            &["box.json:4:14:", "unknown top-level key `x`"],
        ),
        (
            r#""gpus": ["#,
            r#""gpus": [7, "#,
            &["box.json:4:12: gpus[0]: expected an object, found 7"],
        ),
        (
            r#""gpus": [0, 1]"#,
            r#""gpus": [0]"#,
            &["box.json:23:7: links[0].gpus: expected two GPU indices, e.g. [0, 1], found [0]"],
        ),
        (
            r#""nvlink": false"#,
            r#""nvlink": "no""#,
            &["links[0].nvlink: expected true or false, found \"no\""],
        ),
        (
            r#""source": "hand","#,
            r#""source": null,"#,
            &["box.json:3:3: source: expected a string, found null"],
        ),
        (
            r#""source": "hand","#,
            r#""source": "hand", "links": {},"#,
            &["box.json:22:3: key `links` appears twice in the top level; keep one"],
        ),
        (
            r#""p2p": "not_supported""#,
            r#""p2p": "not_supported", "path": "SYS""#,
            &["box.json:23:79: key `path` appears twice in links[0]"],
        ),
    ];
    for (from, to, wants) in cases {
        let msg = err(&edit(from, to));
        for want in *wants {
            assert!(msg.contains(want), "{msg:?} lacks {want:?}");
        }
    }
}

#[test]
fn duplicate_link_pairs_are_rejected_in_either_order() {
    let text = edit(
        r#"{ "gpus": [0, 1], "path": "PHB", "nvlink": false, "p2p": "not_supported" }"#,
        r#"{ "gpus": [0, 1], "path": "PHB", "nvlink": false, "p2p": "not_supported" },
    { "gpus": [1, 0], "path": "PHB", "nvlink": false, "p2p": "ok" }"#,
    );
    let msg = err(&text);
    assert!(
        msg.contains(
            "box.json:24:7: links[1].gpus: the pair (1, 0) is already described by links[0]"
        ),
        "{msg}"
    );
}

#[test]
fn null_optional_values_read_as_absent() {
    let text = edit(
        r#""memory_total_mib": 23034
    },"#,
        r#""memory_total_mib": 23034, "memory_used_mib": null, "numa_node": null
    },"#,
    );
    let t = Topology::from_json_str(&text, "x").unwrap();
    assert_eq!(
        (t.gpus[0].memory_used_mib, t.gpus[0].numa_node),
        (None, None)
    );
    let links_null = edit(r#""links": ["#, r#""links": null, "old_links": ["#);
    let msg = err(&links_null);
    assert!(msg.contains("unknown top-level key `old_links`"), "{msg}");
    let no_list = SMALL.replacen(r#""gpus": ["#, r#""gpus": null, "x": ["#, 1);
    let msg = err(&no_list);
    assert!(msg.contains("unknown top-level key `x`"), "{msg}");
    let text = SMALL.split("],\n  \"links\"").next().unwrap().to_owned() + "],\n  \"links\": {}\n}";
    let msg = err(&text);
    assert!(
        msg.contains("links: expected a list, found {}"),
        "{msg}\n{text}"
    );
}

#[test]
fn unknown_compute_capability_is_kept_without_a_cc() {
    let text = edit(
        r#""compute_capability": "8.9","#,
        r#""compute_capability": "unknown","#,
    );
    let t = Topology::from_json_str(&text, "x").unwrap();
    assert_eq!(t.gpus[0].cc(), None);
    assert_eq!(t.gpus[1].cc(), Some((8, 9)));
}

#[test]
fn nv_paths_are_accepted() {
    for path in ["NV", "NV1", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS"] {
        let text = edit(r#""path": "PHB""#, &format!(r#""path": "{path}""#));
        Topology::from_json_str(&text, "x").unwrap_or_else(|e| panic!("{path}: {e}"));
    }
}

#[test]
fn unreadable_file_names_the_path() {
    let e = Topology::load(Path::new("/nonexistent/box.json")).unwrap_err();
    assert!(matches!(e, TopologyError::Read { .. }));
    let s = e.to_string();
    assert!(
        s.contains("/nonexistent/box.json") && s.contains("--topology"),
        "{s}"
    );
}

#[test]
fn not_an_object_is_rejected() {
    assert!(err("[1, 2]").contains("not a JSON object"));
    assert!(err("").contains("box.json:1:"));
}

#[test]
fn the_host_record_is_read_strictly() {
    let with = |host: &str| {
        edit(
            r#""source": "hand","#,
            &format!(r#""source": "hand", "host": {host},"#),
        )
    };
    let t = Topology::from_json_str(
        &with(r#"{"shm_bytes": 67108864, "rdma_devices": ["mlx5_0"], "packages": {"torch": "2.8.0+cu128"}, "torch_build": "cuda 12.8"}"#),
        "box.json",
    )
    .unwrap();
    let h = t.host.as_ref().unwrap();
    assert_eq!(h.shm_bytes, Some(64 << 20));
    let facts = h.host_facts().unwrap();
    assert_eq!(
        (facts.shm_present, facts.ib_devices),
        (true, Some(vec!["mlx5_0".to_string()]))
    );
    assert_eq!(
        h.installed().unwrap().torch().unwrap().version,
        "2.8.0+cu128"
    );
    // Round trip, and null for "not recorded".
    assert_eq!(
        Topology::from_json_str(&t.to_json_pretty(), "again").unwrap(),
        t
    );
    let t = Topology::from_json_str(&with("null"), "box.json").unwrap();
    assert_eq!(t.host, None);
    let t = Topology::from_json_str(&with(r#"{"shm_bytes": null}"#), "box.json").unwrap();
    assert_eq!(t.host.unwrap().host_facts(), None);

    let e = err(&with(r#"{"shm_byte": 1}"#));
    assert!(e.contains("unknown host key `shm_byte`"), "{e}");
    assert!(e.contains("did you mean `shm_bytes`?"), "{e}");
    let e = err(&with(r#"{"rdma_devices": 2}"#));
    assert!(
        e.contains("host.rdma_devices: expected a list, found 2"),
        "{e}"
    );
    let e = err(&with(r#""big""#));
    assert!(e.contains("host: expected an object"), "{e}");
    let e = err(&with(r#"{"packages": {"torch": 2}}"#));
    assert!(e.contains("box.json:3:"), "{e}");
}
