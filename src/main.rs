fn main() {
    std::process::exit(sglang_launch::invocation::main());
}
