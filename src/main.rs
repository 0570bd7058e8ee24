//! The `brownout` command line. Only this binary touches clap, the terminal and the
//! environment; everything it does is a call into the library.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
