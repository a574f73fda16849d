//! `plan --print-args` prints one shell line that every POSIX shell (dash, bash) splits back
//! into exactly the command (control characters through `printf` octal escapes).

use std::ffi::OsString;

use proptest::prelude::*;
use sglang_launch::facts::Env;
use sglang_launch::plan::{self, Request};
use sglang_launch::report;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn print_args_round_trips(path in "[^\0]{0,40}", name in "[^\0]{0,40}", extra in proptest::collection::vec("[^\0]{0,12}", 0..4)) {
        let mut tokens: Vec<OsString> = vec!["--model-path".into(), path.into(), "--served-model-name".into(), name.into()];
        tokens.extend(extra.into_iter().map(OsString::from));
        let req = Request {
            tokens: tokens.clone(),
            topology: Some(format!("{ROOT}/examples/topologies/1x-l4.json").into()),
            sglang_version: Some("0.5.23".into()),
            python: Some("/usr/bin/python3".into()),
            no_fix: true,
            env: Env::default(),
            ..Request::default()
        };
        let outcome = plan::build(&req).unwrap();
        let line = report::command_line(&outcome, true);
        // One printable line, unless a word ends in a newline (which follows it, quoted).
        let trailing = tokens.iter().any(|t| t.to_string_lossy().ends_with('\n'));
        prop_assert!(trailing || !line.chars().any(char::is_control), "{line:?}");
        let mut want = vec!["/usr/bin/python3".to_owned(), "-m".into(), "sglang.launch_server".into()];
        want.extend(tokens.iter().map(|t| t.to_string_lossy().into_owned()));
        for shell in ["sh", "dash", "bash"] {
            let split = std::process::Command::new(shell)
                .args(["-c", "eval \"set -- $1\"; printf '%s\\0' \"$@\"", "_"])
                .arg(&line)
                .output()
                .unwrap()
                .stdout;
            let words: Vec<String> = String::from_utf8(split)
                .unwrap()
                .split_terminator('\0')
                .map(str::to_owned)
                .collect();
            prop_assert_eq!(&words, &want, "{}", shell);
        }
    }
}
