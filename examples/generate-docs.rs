//! Regenerate the committed man pages and shell completions from the clap
//! definition in `src/cli/mod.rs`:
//!
//! ```sh
//! cargo run --example generate-docs            # into the crate root
//! cargo run --example generate-docs -- OUTDIR  # into OUTDIR/man, OUTDIR/completions
//! ```
//!
//! `tests/generated.rs` fails when the committed files differ from what this
//! writes; the rendering lives in `tests/support/docs.rs`, shared by both.

use std::path::PathBuf;
use std::process::ExitCode;

#[path = "../tests/support/docs.rs"]
mod docs;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let root = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    if args.next().is_some() {
        eprintln!("usage: cargo run --example generate-docs [-- OUTDIR]");
        return ExitCode::from(2);
    }

    match docs::generate(&root) {
        Ok(written) => {
            for path in &written {
                println!("{}", root.join(path).display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "generate-docs: could not write into {}: {e}",
                root.display()
            );
            ExitCode::FAILURE
        }
    }
}
