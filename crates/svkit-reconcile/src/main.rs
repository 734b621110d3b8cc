//! The `svkit-reconcile` binary: the program is the library's
//! [`svkit_reconcile::main`], which the multi-call `svkit` binary runs too.

fn main() -> std::process::ExitCode {
    svkit_reconcile::main()
}
