//! Which server files a caller may have the gateway read (`file_path`).
//!
//! A local agent (stdio) is the machine's owner: it may name any file the
//! gateway can read, unless the operator listed directories with
//! `--file-root`, which then bound it too. A remote caller (HTTP) is a
//! stranger: it may name files only under those directories, and with none
//! listed it may name none. Paths are compared after resolving symlinks and
//! `..`, and the file actually opened is checked again (through
//! `/proc/self/fd`), so a symlink swapped in between cannot lead outside.

use neotoma_core::{ErrorCode, NeotomaError};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

/// The directories the operator allowed, resolved.
#[derive(Debug, Default, Clone)]
pub struct FileRoots(Vec<PathBuf>);

/// A file read for a caller.
pub struct ReadFile {
    pub bytes: Vec<u8>,
    pub name: Option<String>,
}

impl FileRoots {
    /// Resolves the directories; each must exist.
    pub fn new(dirs: &[PathBuf]) -> anyhow::Result<FileRoots> {
        let mut roots = Vec::new();
        for d in dirs.iter().filter(|d| !d.as_os_str().is_empty()) {
            let resolved = std::fs::canonicalize(d)
                .map_err(|e| anyhow::anyhow!("--file-root {}: {e}", d.display()))?;
            anyhow::ensure!(
                resolved.is_dir(),
                "--file-root {} is not a directory",
                d.display()
            );
            roots.push(resolved);
        }
        Ok(FileRoots(roots))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn contains(&self, path: &Path) -> bool {
        self.0.iter().any(|root| path.starts_with(root))
    }

    /// Reads `path` for a caller (`remote`: over HTTP), at most `max_bytes`.
    pub fn read(&self, path: &str, remote: bool, max_bytes: u64) -> Result<ReadFile, NeotomaError> {
        let bounded = remote || !self.is_empty();
        if remote && self.is_empty() {
            return Err(NeotomaError::new(
                ErrorCode::Forbidden,
                "file_path is not available to remote callers: this server reads no files for them. \
                 Send the bytes as file_content (base64), or ask the operator to allow a directory \
                 (neotoma-mcp --file-root DIR)",
            )
            .with("field", "file_path"));
        }
        let outside = || {
            NeotomaError::new(
                ErrorCode::Forbidden,
                format!("{path} is not under a directory this server may read (--file-root)"),
            )
            .with("field", "file_path")
            .with("file_path", path)
        };
        let not_found = || {
            NeotomaError::new(ErrorCode::FileNotFound, format!("no file at {path}"))
                .with("file_path", path)
        };
        let unreadable = |e: std::io::Error| {
            NeotomaError::new(ErrorCode::FileReadError, format!("cannot read {path}: {e}"))
                .with("file_path", path)
        };
        let target = if bounded {
            match std::fs::canonicalize(path) {
                Ok(resolved) if self.contains(&resolved) => resolved,
                // A missing file is reported as missing only where the
                // caller may look; elsewhere nothing is revealed.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(match lexical_absolute(path) {
                        Some(p) if self.contains(&p) => not_found(),
                        _ => outside(),
                    });
                }
                _ => return Err(outside()),
            }
        } else {
            PathBuf::from(path)
        };
        // Opened without blocking: opening a FIFO (or a device) for reading
        // would wait for a writer. Anything but a regular file is refused
        // below, before a byte is read.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&target)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => not_found(),
                _ if bounded => outside(),
                _ => unreadable(e),
            })?;
        if bounded {
            let opened = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
                .map_err(|_| outside())?;
            if !self.contains(&opened) {
                return Err(outside());
            }
        }
        let meta = file.metadata().map_err(unreadable)?;
        if !meta.is_file() {
            return Err(NeotomaError::new(
                ErrorCode::FileReadError,
                format!("{path} is not a regular file"),
            )
            .with("file_path", path));
        }
        if meta.len() > max_bytes {
            return Err(too_large(meta.len(), max_bytes));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        // The file may grow while it is read: never read past the limit.
        file.take(max_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        if bytes.len() as u64 > max_bytes {
            return Err(too_large(bytes.len() as u64, max_bytes));
        }
        let name = target
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string);
        Ok(ReadFile { bytes, name })
    }
}

fn too_large(size: u64, max_bytes: u64) -> NeotomaError {
    NeotomaError::new(
        ErrorCode::FileTooLarge,
        format!("the file is {size} bytes; the limit is {max_bytes}"),
    )
    .with("file_size_bytes", size)
    .with("max_size_bytes", max_bytes)
}

/// `path` made absolute and with `.` and `..` removed, without touching the
/// file system (for paths that do not exist).
fn lexical_absolute(path: &str) -> Option<PathBuf> {
    let path = Path::new(path);
    let base = if path.is_absolute() {
        PathBuf::new()
    } else {
        std::env::current_dir().ok()?
    };
    let mut out = base;
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("neotoma-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("root/sub")).unwrap();
        std::fs::write(d.join("root/sub/ok.txt"), b"hello").unwrap();
        std::fs::write(d.join("secret.txt"), b"secret").unwrap();
        d
    }

    #[test]
    fn remote_callers_read_nothing_without_roots() {
        let d = scratch("none");
        let roots = FileRoots::new(&[]).unwrap();
        let p = d.join("root/sub/ok.txt");
        let e = roots.read(p.to_str().unwrap(), true, 100).err().unwrap();
        assert_eq!(e.code, ErrorCode::Forbidden);
        // Locally, anything readable.
        assert_eq!(
            roots.read(p.to_str().unwrap(), false, 100).unwrap().bytes,
            b"hello"
        );
    }

    #[test]
    fn roots_bound_paths_after_resolving() {
        let d = scratch("roots");
        let roots = FileRoots::new(&[d.join("root")]).unwrap();
        let ok = d.join("root/sub/ok.txt");
        let read = roots.read(ok.to_str().unwrap(), true, 100).unwrap();
        assert_eq!(
            (read.bytes.as_slice(), read.name.as_deref()),
            (&b"hello"[..], Some("ok.txt"))
        );
        for escape in [
            d.join("secret.txt"),
            d.join("root/../secret.txt"),
            d.join("root/sub/../../secret.txt"),
            PathBuf::from("/etc/passwd"),
            PathBuf::from("/proc/self/environ"),
        ] {
            for remote in [true, false] {
                let e = roots
                    .read(escape.to_str().unwrap(), remote, 100)
                    .err()
                    .unwrap();
                assert_eq!(e.code, ErrorCode::Forbidden, "{}", escape.display());
            }
        }
        // A symlink inside a root that points outside it.
        std::os::unix::fs::symlink(d.join("secret.txt"), d.join("root/link")).unwrap();
        let e = roots
            .read(d.join("root/link").to_str().unwrap(), true, 100)
            .err()
            .unwrap();
        assert_eq!(e.code, ErrorCode::Forbidden);
        // Missing files: FILE_NOT_FOUND inside a root, FORBIDDEN outside.
        let e = roots
            .read(d.join("root/nope").to_str().unwrap(), true, 100)
            .err()
            .unwrap();
        assert_eq!(e.code, ErrorCode::FileNotFound);
        let e = roots
            .read(d.join("nope").to_str().unwrap(), true, 100)
            .err()
            .unwrap();
        assert_eq!(e.code, ErrorCode::Forbidden);
        // Directories are not files to read.
        let e = roots
            .read(d.join("root").to_str().unwrap(), true, 100)
            .err()
            .unwrap();
        assert_eq!(e.code, ErrorCode::FileReadError);
        let e = roots
            .read(d.join("root/sub").to_str().unwrap(), true, 100)
            .err()
            .unwrap();
        assert_eq!(e.code, ErrorCode::FileReadError);
        let e = roots.read(ok.to_str().unwrap(), true, 3).err().unwrap();
        assert_eq!(e.code, ErrorCode::FileTooLarge);
    }

    #[test]
    fn lexical_paths() {
        assert_eq!(
            lexical_absolute("/a/b/../c/./d"),
            Some(PathBuf::from("/a/c/d"))
        );
        assert_eq!(lexical_absolute("/../.."), Some(PathBuf::from("/")));
    }
}
