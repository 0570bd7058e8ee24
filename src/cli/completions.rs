//! `brownout completions SHELL`: print a shell completion script (clap_complete).

use clap::Args;
use clap_complete::Shell;

use super::Failure;

/// Arguments of `brownout completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    shell: Shell,
}

/// Print the script for `shell` to stdout, generated from the same command definition that
/// parses the arguments (so completions list exactly the subcommands and flags there are).
pub fn completions(args: CompletionsArgs) -> Result<(), Failure> {
    let mut cmd = super::command();
    clap_complete::generate(args.shell, &mut cmd, "brownout", &mut std::io::stdout());
    Ok(())
}
