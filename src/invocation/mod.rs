//! The raw invocation: launcher options (clap) and the SGLang tokens that follow them.

pub fn main() -> i32 {
    0
}
