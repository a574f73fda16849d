//! Slurm's compressed hostlists (`gpu[07-08,10],login1`), expanded as `scontrol show hostnames`
//! does, so the launcher needs no `scontrol`: commas outside brackets separate hosts, inside
//! they separate numbers and ranges; a range keeps its lower bound's zero padding; several
//! bracket groups in one name expand as a product, the last group varying fastest.

/// More hosts than any Slurm job has: a typo like `n[0-999999999]` is an error, not an
/// allocation.
const MAX_HOSTS: usize = 1 << 16;
/// The longest host name a resolver takes (RFC 1035's 255 bytes): a longer one, or zero
/// padding to match, is an error before anything that size is built.
const MAX_NAME: usize = 255;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostlistError {
    #[error("is empty")]
    Empty,
    #[error("has an empty host name")]
    EmptyHost,
    #[error("has a '[' without its ']'")]
    Unclosed,
    #[error("has a ']' without its '['")]
    Unopened,
    #[error("has brackets inside brackets")]
    Nested,
    #[error("has {0:?} in brackets, not a number or a range like 01-04")]
    BadRange(String),
    #[error("names more than {MAX_HOSTS} hosts")]
    TooMany,
    #[error("has a host name longer than {MAX_NAME} bytes")]
    TooLong,
}

/// The hosts of `list`, in Slurm's order.
pub fn expand(list: &str) -> Result<Vec<String>, HostlistError> {
    let list = list.trim();
    if list.is_empty() {
        return Err(HostlistError::Empty);
    }
    let mut hosts = Vec::new();
    for item in split_outside_brackets(list)? {
        if item.is_empty() {
            return Err(HostlistError::EmptyHost);
        }
        hosts.extend(expand_host(item)?);
        if hosts.len() > MAX_HOSTS {
            return Err(HostlistError::TooMany);
        }
    }
    Ok(hosts)
}

/// `list` cut at the commas outside brackets; brackets are checked to pair, one level deep.
fn split_outside_brackets(list: &str) -> Result<Vec<&str>, HostlistError> {
    let (mut items, mut start, mut open) = (Vec::new(), 0, false);
    for (i, c) in list.char_indices() {
        match (c, open) {
            ('[', true) => return Err(HostlistError::Nested),
            ('[', false) => open = true,
            (']', false) => return Err(HostlistError::Unopened),
            (']', true) => open = false,
            (',', false) => {
                items.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if open {
        return Err(HostlistError::Unclosed);
    }
    items.push(&list[start..]);
    Ok(items)
}

/// One host expression (`rack[1-2]-gpu[07,09]`): the product of its parts.
fn expand_host(item: &str) -> Result<Vec<String>, HostlistError> {
    let mut names = vec![String::new()];
    let mut rest = item;
    while let Some(open) = rest.find('[') {
        let close = rest[open..].find(']').ok_or(HostlistError::Unclosed)? + open;
        let prefix = &rest[..open];
        let numbers = expand_group(&rest[open + 1..close])?;
        if names.len().saturating_mul(numbers.len()) > MAX_HOSTS {
            return Err(HostlistError::TooMany);
        }
        let longest = numbers.iter().map(String::len).max().unwrap_or(0);
        let named = names.iter().map(String::len).max().unwrap_or(0);
        if named + prefix.len() + longest > MAX_NAME {
            return Err(HostlistError::TooLong);
        }
        names = names
            .iter()
            .flat_map(|n| numbers.iter().map(move |x| format!("{n}{prefix}{x}")))
            .collect();
        rest = &rest[close + 1..];
    }
    if names.iter().map(String::len).max().unwrap_or(0) + rest.len() > MAX_NAME {
        return Err(HostlistError::TooLong);
    }
    Ok(names.into_iter().map(|n| n + rest).collect())
}

/// The inside of one bracket group (`07-08,10`): its numbers as written, padding kept.
fn expand_group(group: &str) -> Result<Vec<String>, HostlistError> {
    let mut out = Vec::new();
    for part in group.split(',') {
        let bad = || HostlistError::BadRange(part.to_owned());
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(lo) || !digits(hi) {
            return Err(bad());
        }
        if lo.len() > MAX_NAME || hi.len() > MAX_NAME {
            return Err(HostlistError::TooLong);
        }
        let (a, b): (u64, u64) = (
            lo.parse().map_err(|_| bad())?,
            hi.parse().map_err(|_| bad())?,
        );
        if a > b {
            return Err(bad());
        }
        if b - a >= MAX_HOSTS as u64 || out.len() + (b - a) as usize >= MAX_HOSTS {
            return Err(HostlistError::TooMany);
        }
        let width = lo.len();
        out.extend((a..=b).map(|n| format!("{n:0width$}")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hosts(list: &str) -> Vec<String> {
        expand(list).unwrap_or_else(|e| panic!("{list}: {e}"))
    }

    #[test]
    fn expands_like_scontrol_show_hostnames() {
        assert_eq!(
            hosts("gpu[07-08,10],login1"),
            ["gpu07", "gpu08", "gpu10", "login1"]
        );
        assert_eq!(hosts("node1"), ["node1"]);
        // Only the whole list is trimmed (as the environment may carry a newline).
        assert_eq!(hosts(" a,b\n"), ["a", "b"]);
        // Padding follows the lower bound; a wider upper bound grows past it.
        assert_eq!(hosts("n[8-10]"), ["n8", "n9", "n10"]);
        assert_eq!(hosts("n[098-101]"), ["n098", "n099", "n100", "n101"]);
        // Several groups: a product, the last varying fastest; suffixes kept.
        assert_eq!(
            hosts("r[1-2]-g[01,03]-ib"),
            ["r1-g01-ib", "r1-g03-ib", "r2-g01-ib", "r2-g03-ib"]
        );
        assert_eq!(hosts("a[1-2],b[5]"), ["a1", "a2", "b5"]);
    }

    #[test]
    fn malformed_lists_are_errors_naming_the_problem() {
        use HostlistError::*;
        for (list, err) in [
            ("", Empty),
            ("  ", Empty),
            ("a,,b", EmptyHost),
            ("a,", EmptyHost),
            ("gpu[07-08", Unclosed),
            ("gpu07]", Unopened),
            ("gpu[0[1]]", Nested),
            ("gpu[08-07]", BadRange("08-07".into())),
            ("gpu[a-b]", BadRange("a-b".into())),
            ("gpu[]", BadRange(String::new())),
            ("gpu[1-]", BadRange("1-".into())),
            ("gpu[1,,2]", BadRange(String::new())),
            (
                "gpu[99999999999999999999]",
                BadRange("99999999999999999999".into()),
            ),
            ("n[0-999999999]", TooMany),
            ("a[0-999]b[0-999]", TooMany),
        ] {
            assert_eq!(expand(list), Err(err), "{list}");
        }
        // Padding or names no resolver takes are refused before anything that size is built.
        let zeros = |n| "0".repeat(n);
        for list in [
            format!("gpu[{}1]", zeros(65536)),
            format!("gpu[{z}1-{z}60000]", z = zeros(30000)),
            format!("{}[1-2]", "n".repeat(255)),
            format!("n[1-2]{}", "x".repeat(254)),
        ] {
            assert_eq!(expand(&list), Err(TooLong), "{}", &list[..20]);
        }
        assert_eq!(expand(&format!("{}[1]", "n".repeat(254))).unwrap().len(), 1);
    }

    /// A list of hosts compressed into one bracket group of single numbers and ranges.
    fn compress(prefix: &str, numbers: &[(u32, u32)], width: usize) -> String {
        let parts: Vec<String> = numbers
            .iter()
            .map(|&(a, n)| match n {
                0 => format!("{a:0width$}"),
                _ => format!("{a:0width$}-{:0width$}", a + n),
            })
            .collect();
        format!("{prefix}[{}]", parts.join(","))
    }

    proptest! {
        #[test]
        fn compressed_lists_expand_back(
            prefix in "[a-z][a-z0-9-]{0,6}",
            numbers in prop::collection::vec((0u32..500, 0u32..5), 1..6),
            width in 1usize..5,
        ) {
            let expected: Vec<String> = numbers
                .iter()
                .flat_map(|&(a, n)| (a..=a + n).map(|x| format!("{prefix}{x:0width$}")))
                .collect();
            prop_assert_eq!(expand(&compress(&prefix, &numbers, width)), Ok(expected));
        }

        #[test]
        fn any_text_is_hosts_or_an_error_never_a_panic(list in "[a-z0-9\\[\\],-]{0,24}") {
            if let Ok(hosts) = expand(&list) {
                prop_assert!(!hosts.is_empty());
            }
        }
    }
}
