//! The process edge: parse the arguments, run one command, turn its
//! outcome into an exit code (see `error`).

use std::io::Write as _;
use std::process::ExitCode;

use clap::{CommandFactory as _, Parser as _};

use claude_session::cli::Cli;
use claude_session::error::{exit_code_of, is_broken_pipe};
use claude_session::{commands, diag};

fn main() -> ExitCode {
    // `COMPLETE=bash claude-session …`: the shell asking for completions
    // (see completions/); answers and exits, before anything else runs.
    clap_complete::CompleteEnv::with_factory(Cli::command).complete();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => exit_with_usage_error(err),
    };
    // Chat logs are private: nothing we create is readable by others.
    rustix::process::umask(rustix::fs::Mode::RWXG | rustix::fs::Mode::RWXO);
    diag::set_verbosity(if cli.quiet { -1 } else { cli.verbose as i8 });
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            report(&err);
            ExitCode::from(exit_code_of(&err).code() as u8)
        }
    }
}

/// clap's own message, but never flooding the terminal: a 10 KB value is
/// shown cut, as our own errors show it. The value is cut in the error's
/// context, so clap renders the message as ever.
fn exit_with_usage_error(mut err: clap::Error) -> ! {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let about_a_value = matches!(
        err.kind(),
        ErrorKind::InvalidValue | ErrorKind::ValueValidation
    );
    if about_a_value
        && err.to_string().len() > 1000
        && let Some(ContextValue::String(value)) = err.get(ContextKind::InvalidValue)
    {
        let cut: String = value.chars().take(40).collect();
        err.insert(
            ContextKind::InvalidValue,
            ContextValue::String(format!("{cut}…")),
        );
    }
    err.exit()
}

/// The error on stderr: its message and root cause; with `-v`, every link
/// of the chain.
fn report(err: &anyhow::Error) {
    let mut message = format!("claude-session: error: {err}");
    let root = err.root_cause().to_string();
    if diag::verbosity() >= 1 {
        for cause in err.chain().skip(1) {
            message.push_str(&format!("\n  caused by: {cause}"));
        }
    } else if err.chain().count() > 1 && root != err.to_string() {
        message.push_str(&format!(": {root}"));
    }
    // Errors quote ids, paths and claude's output: no control character
    // reaches the operator's terminal.
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}",
        claude_session::terminal::printable(&message)
    );
}
