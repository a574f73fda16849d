//! The limits on what a YAML file may make the loader build, so that no file makes it use
//! unbounded memory or time. Each is far above any real SGLang config (a few hundred keys, a
//! handful of shared blocks) and below what would hurt a machine.

/// Values copied out through aliases and merge keys (`*a`, `<<: *a`), counted one per scalar,
/// list, mapping and merged key. A config reuses a few blocks of tens of values; 1000 aliases
/// of a 1000-value block still fit. The 413-byte "billion laughs" file asks for 10⁹.
pub(crate) const ALIAS_NODES: usize = 1_000_000;

/// Bytes of scalar text copied out through aliases: 1000 copies of a 32 KiB chat template fit.
pub(crate) const ALIAS_BYTES: usize = 32 << 20;

/// Lists and mappings inside one another, written or through aliases. PyYAML's recursive
/// composer stops with a RecursionError at 490 written levels (Python's default limit of 1000
/// frames, less under SGLang's own calls), and Python's `str()` of a list nested through
/// aliases stops about as deep, so SGLang can use nothing deeper; much deeper nesting would
/// overflow our stack.
pub(crate) const DEPTH: usize = 512;

/// Digits of a binary, octal or hexadecimal integer, whose conversion to decimal takes time
/// quadratic in its length. Python 3.11+ refuses to print an integer of more than 4300 decimal
/// digits (about 14,000 binary ones), so SGLang could not use a longer one either.
pub(crate) const INT_DIGITS: usize = 20_000;

/// Which budget a file went past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    AliasNodes,
    AliasBytes,
    Depth,
    IntDigits,
}

impl std::fmt::Display for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Budget::AliasNodes => write!(
                f,
                "its aliases and merge keys expand to more than {ALIAS_NODES} values (the alias \
                 expansion budget); a file this small that stands for this much is an expansion \
                 bomb: write the values out or alias fewer of them"
            ),
            Budget::AliasBytes => write!(
                f,
                "its aliases expand to more than {ALIAS_BYTES} bytes of text (the alias expansion \
                 budget): write the values out or alias fewer of them"
            ),
            Budget::Depth => write!(
                f,
                "lists and mappings nest more than {DEPTH} deep (the nesting budget; PyYAML fails \
                 with a RecursionError well before that): flatten the document"
            ),
            Budget::IntDigits => write!(
                f,
                "an integer has more than {INT_DIGITS} digits (the integer budget; Python cannot \
                 print one that long): write it as a string"
            ),
        }
    }
}

/// What constructing one document has used so far.
#[derive(Debug, Default)]
pub(super) struct Spent {
    nodes: usize,
    bytes: usize,
}

impl Spent {
    /// Counts one value copied through an alias or merge key (with `bytes` of scalar text).
    pub(super) fn copy(&mut self, bytes: usize) -> Result<(), Budget> {
        self.nodes += 1;
        self.bytes += bytes;
        if self.nodes > ALIAS_NODES {
            return Err(Budget::AliasNodes);
        }
        if self.bytes > ALIAS_BYTES {
            return Err(Budget::AliasBytes);
        }
        Ok(())
    }
}
