//! `claude-session init [DIR]`: make a state dir once, so that a later
//! `--state-dir DIR` (or `CLAUDE_SESSION_STATE_DIR`) finds one, and a
//! folder that is not one (an unmounted file system, a typo) is refused.

use serde::Serialize;

use crate::cli::{Cli, InitArgs};
use crate::commands::{Output, effective_state_dir, print_json, print_text};
use crate::error::usage;
use crate::state::State;
use crate::state::dir::{EffectiveStateDir, StateDirSource};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InitJson<'a> {
    state_dir: &'a std::path::Path,
    created: bool,
}

pub fn run(cli: &Cli, args: &InitArgs, output: Output) -> anyhow::Result<()> {
    let origin = match &args.dir {
        Some(dir) => {
            if let Some(flag) = &cli.state_dir
                && flag != dir
                && std::env::var_os(crate::state::dir::STATE_DIR_ENV).as_deref()
                    != Some(flag.as_os_str())
            {
                return Err(usage(format!(
                    "init got two folders, {} (--state-dir) and {}; give one",
                    flag.display(),
                    dir.display()
                )));
            }
            if dir.as_os_str().is_empty() {
                return Err(usage("init DIR is empty; give a folder"));
            }
            EffectiveStateDir {
                path: dir.clone(),
                source: StateDirSource::Flag,
            }
        }
        None => effective_state_dir(cli)?,
    };
    let created = State::init(&origin)?;
    if output.json {
        return print_json(&InitJson {
            state_dir: &origin.path,
            created,
        });
    }
    print_text(&if created {
        format!("made a state dir at {}", origin.path.display())
    } else {
        format!(
            "{} is already a state dir; nothing changed",
            origin.path.display()
        )
    })
}
