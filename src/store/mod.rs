//! Bytes on disk: private opening (`fs`; a regular file only, for
//! reading: `regular`), locks (`lock`), appends
//! (`jsonl`), line reads and rewrites (`lines`, `tail`), atomic rewrites
//! (`atomic`), frontmatter (`frontmatter`, the only user of `serde_yaml`),
//! gzip archives (`archive`), folder trees (`tree`), and the shared file
//! systems under them (`filesystem`, `shared`). Knows nothing of users,
//! messages or the layout's names; `memory` and `layout` do.

pub mod archive;
pub mod atomic;
pub mod filesystem;
pub mod frontmatter;
pub mod fs;
pub mod jsonl;
pub mod lines;
pub mod lock;
pub mod regular;
pub mod shared;
pub mod tail;
pub mod tree;
