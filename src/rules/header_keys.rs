/// The keys a rule text's header may have, in the order the generated table stores their values
/// (shared by `build.rs`, which stops the build on any other key, and the catalogue).
const HEADER_KEYS: [&str; 11] = [
    "code",
    "name",
    "severity",
    "versions",
    "fix",
    "check",
    "summary",
    "sources",
    "no-source",
    "evidence",
    "emitted-by",
];
