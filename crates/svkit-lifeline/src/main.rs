//! The `svkit-lifeline` binary: the program is the library's
//! [`svkit_lifeline::main`], which the multi-call `svkit` binary runs too.

fn main() -> std::process::ExitCode {
    svkit_lifeline::main()
}
