//! The `svctl` binary: the program is the library's [`svctl::main`], which
//! the multi-call `svkit` binary runs too.

fn main() -> std::process::ExitCode {
    svctl::main()
}
