fn main() {
    std::process::exit(sglang_launch::invocation::main(sglang_launch::docs::answer));
}
