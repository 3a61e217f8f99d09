//! Turning a node's `path:` into something nerve can start.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::spec::NodePath;

/// The `path:` value that marks a node started by hand.
pub(crate) const DYNAMIC: &str = "dynamic";

/// Resolves `raw` against `base_dir`; the error is the whole message.
pub(crate) fn resolve(raw: &str, base_dir: &Path, has_build: bool) -> Result<NodePath, String> {
    if raw == DYNAMIC {
        return Ok(NodePath::Dynamic);
    }
    if raw.is_empty() {
        return Err("`path` is empty".to_owned());
    }
    if raw.contains('\0') {
        return Err("`path` contains a NUL character".to_owned());
    }
    // Joining keeps an absolute `raw` as it is. Collecting the components drops
    // `./` segments; `..` stays, as only the file system knows what it means
    // under symlinks.
    let joined: PathBuf = base_dir.join(raw).components().collect();

    if raw.ends_with(".py") {
        return if joined.is_file() || (has_build && !joined.exists()) {
            Ok(NodePath::Python(joined))
        } else if joined.is_dir() {
            Err(format!("{} is a directory, not a Python file", joined.display()))
        } else {
            Err(format!("file not found: {}", joined.display()))
        };
    }

    if raw.contains('/') || joined.exists() {
        return if joined.is_file() {
            if is_executable(&joined) {
                Ok(NodePath::Executable(joined))
            } else {
                Err(format!("file is not executable: {} (`chmod +x` it)", joined.display()))
            }
        } else if joined.exists() {
            Err(format!("{} is a directory, not a program", joined.display()))
        } else if has_build {
            Ok(NodePath::ToBuild(joined))
        } else {
            Err(format!("file not found: {}", joined.display()))
        };
    }

    match find_on_path(OsStr::new(raw)) {
        Some(found) => Ok(NodePath::Executable(found)),
        None => {
            let hint =
                if has_build { " (if `build:` installs it, run the build first so that it is on PATH)" } else { "" };
            Err(format!("`{raw}` is neither a file relative to {} nor a program on PATH{hint}", base_dir.display()))
        }
    }
}

/// What a node whose `path:` is a URL runs: the downloaded `file`, which `nerve build` makes.
pub(crate) fn downloaded(file: &Path) -> NodePath {
    match (file.extension().is_some_and(|e| e == "py"), file.is_file()) {
        (true, _) => NodePath::Python(file.to_owned()),
        (false, true) => NodePath::Executable(file.to_owned()),
        (false, false) => NodePath::ToBuild(file.to_owned()),
    }
}

/// Looks `name` up the way a shell does, skipping empty and relative `PATH`
/// entries: they would make the result depend on the daemon's working directory.
fn find_on_path(name: &OsStr) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file() && is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().map(|m| m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_and_empty() {
        assert_eq!(resolve("dynamic", Path::new("/"), false), Ok(NodePath::Dynamic));
        assert!(resolve("", Path::new("/"), false).is_err());
    }

    #[test]
    fn dot_segments_are_dropped() {
        let p = resolve("./missing/./x", Path::new("/nonexistent-base"), true);
        assert_eq!(p, Ok(NodePath::ToBuild(PathBuf::from("/nonexistent-base/missing/x"))));
    }

    #[cfg(unix)]
    #[test]
    fn program_on_path() {
        match resolve("sh", Path::new("/nonexistent-base"), false) {
            Ok(NodePath::Executable(p)) => {
                assert!(p.is_absolute());
                assert_eq!(p.file_name(), Some(OsStr::new("sh")));
            }
            other => panic!("sh not found on PATH: {other:?}"),
        }
    }
}
