//! The `svkit-wrap` binary: the program is the library's
//! [`svkit_wrap::main`], which the multi-call `svkit` binary runs too.

fn main() -> std::process::ExitCode {
    svkit_wrap::main()
}
