//! Slurm's compressed hostlists (`SLURM_JOB_NODELIST`): the expander must refuse or expand any
//! text within its bounds (at most 65,536 hosts of at most 255 bytes), never panic, and agree
//! with a plain split when there are no brackets.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sglang_launch::facts::scheduler::hostlist::expand;

fuzz_target!(|data: &[u8]| {
    let Ok(list) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(hosts) = expand(list) else {
        return;
    };
    assert!(!hosts.is_empty() && hosts.len() <= 1 << 16, "{}", hosts.len());
    assert!(hosts.iter().all(|h| !h.is_empty() && h.len() <= 255));
    if !list.contains(['[', ']']) {
        let plain: Vec<&str> = list.trim().split(',').collect();
        assert_eq!(hosts, plain);
    }
});
