//! Bytes on disk: locks, appends, tail reads, atomic rewrites, frontmatter
//! and gzip archives. Knows nothing of users or messages; `memory` does.

pub mod archive;
pub mod atomic;
pub mod filesystem;
pub mod frontmatter;
pub mod fs;
pub mod jsonl;
pub mod lines;
pub mod lock;
pub mod shared;
pub mod tail;
pub mod tree;
