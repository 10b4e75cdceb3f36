//! Which file system holds a path, and whether it is shared between hosts.
//!
//! A local file system (ext4, xfs, tmpfs …) is coherent: what one process
//! wrote, every other sees at once. A network or FUSE file system is not:
//! each host's client caches names, sizes and contents for a while
//! (GlusterFS's defaults: about a second), so a host can read a file short
//! of what another host appended, or open the file a name pointed to before
//! another host renamed over it. `store::shared` reads and writes past
//! those caches, and only where this module says the file system is shared:
//! on a local disk it would cost time for nothing.
//!
//! `doctor` names the file system and says whether the tool was proven on
//! it (a test in CI runs it there).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The file system under a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSystem {
    /// `statfs` f_type.
    pub magic: u64,
    /// A name people know: `ext4`, `nfs`, `fuse.glusterfs`, or the magic
    /// number in hex when unknown.
    pub name: String,
    /// Shared between hosts (or unknown, which is treated as shared).
    pub shared: bool,
    /// A file system the test suite runs the tool on (`tests/shared-fs/`
    /// for GlusterFS; the everyday suite for local disks).
    pub proven: bool,
}

impl FileSystem {
    /// What `doctor` should warn about, if anything: a shared file system
    /// the tool was not proven on. A local disk needs no warning.
    pub fn warning(&self) -> Option<String> {
        (self.shared && !self.proven).then(|| {
            format!(
                "the state dir is on {}, a shared file system claude-session was not tested on; \
                 see \"Shared file systems\" in the README for what it needs and how to check it",
                self.name
            )
        })
    }
}

const EXT4: u64 = 0xEF53;
const XFS: u64 = 0x5846_5342;
const BTRFS: u64 = 0x9123_683E;
const TMPFS: u64 = 0x0102_1994;
const RAMFS: u64 = 0x8584_58F6;
const ZFS: u64 = 0x2FC1_2FC1;
const F2FS: u64 = 0xF2F5_2010;
const OVERLAYFS: u64 = 0x794C_7630;
const BCACHEFS: u64 = 0xCA45_1A4E;
const FUSE: u64 = 0x6573_5546;
const NFS: u64 = 0x6969;
const CIFS: u64 = 0xFF53_4D42;
const SMB2: u64 = 0xFE53_4D42;
const CEPH: u64 = 0x00C3_6400;
const V9FS: u64 = 0x0102_1997;
const LUSTRE: u64 = 0x0BD0_0BD0;
const GFS2: u64 = 0x0116_1970;
const OCFS2: u64 = 0x7461_636F;
const AFS: u64 = 0x6B41_4653;

/// Local file systems: (magic, name, tested here).
const LOCAL: &[(u64, &str, bool)] = &[
    (EXT4, "ext4", true),
    (TMPFS, "tmpfs", true),
    (XFS, "xfs", false),
    (BTRFS, "btrfs", false),
    (RAMFS, "ramfs", false),
    (ZFS, "zfs", false),
    (F2FS, "f2fs", false),
    (OVERLAYFS, "overlayfs", false),
    (BCACHEFS, "bcachefs", false),
];

/// Shared (or possibly shared) file systems.
const SHARED: &[(u64, &str)] = &[
    (FUSE, "fuse"),
    (NFS, "nfs"),
    (CIFS, "cifs"),
    (SMB2, "smb2"),
    (CEPH, "ceph"),
    (V9FS, "9p"),
    (LUSTRE, "lustre"),
    (GFS2, "gfs2"),
    (OCFS2, "ocfs2"),
    (AFS, "afs"),
];

/// FUSE file systems (by mount type) the shared-FS suite runs on.
const PROVEN_FUSE: &[&str] = &["fuse.glusterfs"];

/// The file system under `path`, or under its nearest existing ancestor
/// (a state dir that does not exist yet will be created there).
pub fn identify(path: &Path) -> std::io::Result<FileSystem> {
    let existing = nearest_existing(path);
    let magic = statfs_type(&existing)?;
    Ok(describe(magic, || fuse_subtype(&existing)))
}

fn describe(magic: u64, fuse_type: impl FnOnce() -> Option<String>) -> FileSystem {
    if let Some(&(_, name, proven)) = LOCAL.iter().find(|(m, _, _)| *m == magic) {
        return FileSystem {
            magic,
            name: name.to_owned(),
            shared: false,
            proven,
        };
    }
    let name = match SHARED.iter().find(|(m, _)| *m == magic) {
        Some(&(FUSE, _)) => fuse_type().unwrap_or_else(|| "fuse".to_owned()),
        Some(&(_, name)) => name.to_owned(),
        None => format!("unknown (f_type {magic:#x})"),
    };
    FileSystem {
        magic,
        proven: PROVEN_FUSE.contains(&name.as_str()),
        name,
        shared: true,
    }
}

/// Whether files in `dir` need the careful reads and writes of
/// `store::shared`. Asked once per folder per process (a `statfs` on a
/// FUSE mount is a round trip to its server); nothing outlives the process.
pub fn is_shared(dir: &Path) -> bool {
    static KNOWN: Mutex<Option<HashMap<PathBuf, bool>>> = Mutex::new(None);
    if let Some(shared) = KNOWN
        .lock()
        .ok()
        .and_then(|known| known.as_ref()?.get(dir).copied())
    {
        return shared;
    }
    // An error (a folder we cannot stat) counts as shared: the careful
    // path is correct everywhere, only slower.
    let shared = identify(dir).map_or(true, |fs| fs.shared);
    if dir.is_dir()
        && let Ok(mut known) = KNOWN.lock()
    {
        known
            .get_or_insert_with(HashMap::new)
            .insert(dir.to_owned(), shared);
    }
    shared
}

fn nearest_existing(path: &Path) -> PathBuf {
    let mut current = path;
    loop {
        if current.as_os_str().is_empty() {
            return PathBuf::from(".");
        }
        if std::fs::symlink_metadata(current).is_ok() {
            return current.to_owned();
        }
        match current.parent() {
            Some(parent) => current = parent,
            None => return current.to_owned(),
        }
    }
}

fn statfs_type(path: &Path) -> std::io::Result<u64> {
    let stat = rustix::fs::statfs(path)?;
    // f_type is signed on some targets; magic numbers are 32-bit.
    Ok((stat.f_type as u64) & 0xFFFF_FFFF)
}

/// The mount type (`fuse.glusterfs`, `fuse.sshfs`) of the mount holding
/// `path`, from `/proc/self/mountinfo`: FUSE's f_type is the same for all.
fn fuse_subtype(path: &Path) -> Option<String> {
    let path = std::fs::canonicalize(path).ok()?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mount_type_of(&info, &path)
}

/// The file-system type of the longest mount point that holds `path`.
fn mount_type_of(mountinfo: &str, path: &Path) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    for line in mountinfo.lines() {
        let (left, right) = line.split_once(" - ")?;
        let mount_point = unescape(left.split(' ').nth(4)?);
        let fs_type = right.split(' ').next()?;
        let depth = mount_point.components().count();
        if path.starts_with(&mount_point) && best.as_ref().is_none_or(|(d, _)| depth >= *d) {
            best = Some((depth, fs_type.to_owned()));
        }
    }
    best.map(|(_, fs_type)| fs_type)
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> PathBuf {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let value =
                (bytes[i + 1] - b'0') * 64 + (bytes[i + 2] - b'0') * 8 + (bytes[i + 3] - b'0');
            out.push(value);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    use std::os::unix::ffi::OsStringExt as _;
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_local_shared_and_unknown_file_systems() {
        let ext4 = describe(EXT4, || None);
        assert_eq!(
            (ext4.name.as_str(), ext4.shared, ext4.proven),
            ("ext4", false, true)
        );
        let xfs = describe(XFS, || None);
        assert_eq!(
            (xfs.name.as_str(), xfs.shared, xfs.proven),
            ("xfs", false, false)
        );
        let nfs = describe(NFS, || None);
        assert_eq!(
            (nfs.name.as_str(), nfs.shared, nfs.proven),
            ("nfs", true, false)
        );
        let gluster = describe(FUSE, || Some("fuse.glusterfs".into()));
        assert_eq!(
            (gluster.name.as_str(), gluster.shared, gluster.proven),
            ("fuse.glusterfs", true, true)
        );
        let sshfs = describe(FUSE, || Some("fuse.sshfs".into()));
        assert_eq!((sshfs.shared, sshfs.proven), (true, false));
        let odd = describe(0x1234_5678, || None);
        assert_eq!(odd.name, "unknown (f_type 0x12345678)");
        assert!(odd.shared && !odd.proven);
        // doctor warns about shared file systems not tested, only.
        assert!(ext4.warning().is_none() && xfs.warning().is_none());
        assert!(gluster.warning().is_none());
        assert!(
            nfs.warning()
                .unwrap()
                .contains("on nfs, a shared file system")
        );
    }

    #[test]
    fn finds_the_longest_mount_point_in_mountinfo() {
        let info = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n\
                    42 22 0:39 / /mnt/gluster\\040vol rw - fuse.glusterfs host:v0 rw\n\
                    43 22 0:40 / /mnt rw - tmpfs tmpfs rw\n";
        let of = |p: &str| mount_type_of(info, Path::new(p));
        assert_eq!(
            of("/mnt/gluster vol/state").as_deref(),
            Some("fuse.glusterfs")
        );
        assert_eq!(of("/mnt/other").as_deref(), Some("tmpfs"));
        assert_eq!(of("/home/x").as_deref(), Some("ext4"));
    }

    #[test]
    fn identifies_a_real_folder_and_a_missing_one_below_it() {
        let dir = tempfile::tempdir().unwrap();
        let here = identify(dir.path()).unwrap();
        let below = identify(&dir.path().join("not/yet/there")).unwrap();
        assert_eq!(here, below);
        assert!(!here.name.is_empty());
    }
}
