//! Fetching a node's files before its build: cloning its `git:` repository at the commit it
//! asks for, or downloading its `path: https://…` file.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::process::Command;

use nerve_spec::fetch::{Fetch, GitRef};

use crate::error::RuntimeError;

/// Largest file a `path:` URL may download: a node program, not a dataset.
const MAX_DOWNLOAD: u64 = 1 << 30;

/// Fetches what `node` needs; a clone that exists already is brought up to date rather than
/// cloned again.
///
/// # Errors
/// When git or the download fails, with git's or the server's own words.
pub(crate) fn fetch(node: &str, what: &Fetch) -> Result<(), RuntimeError> {
    let failed = |reason: String| RuntimeError::Fetch { node: node.to_owned(), url: what.url().to_owned(), reason };
    match what {
        Fetch::Git { url, reference, dir } => {
            if what.is_fetched() {
                println!("[{node}] fetch: {url} in {}", dir.display());
                git(dir, &["fetch", "--quiet", "--tags", "--force", "origin"]).map_err(failed)?;
            } else {
                println!("[{node}] clone: {url} into {}", dir.display());
                let parent = dir.parent().unwrap_or(dir);
                std::fs::create_dir_all(parent)
                    .map_err(|e| failed(format!("cannot create {}: {e}", parent.display())))?;
                let into = dir.to_string_lossy();
                git(parent, &["clone", "--quiet", "--no-checkout", "--", url, &into]).map_err(failed)?;
            }
            let commit = match reference {
                GitRef::Default => "refs/remotes/origin/HEAD".to_owned(),
                GitRef::Branch(b) => format!("refs/remotes/origin/{b}"),
                GitRef::Tag(t) => format!("refs/tags/{t}"),
                GitRef::Rev(r) => r.clone(),
            };
            // A detached checkout: the clone follows the dataflow, never local commits.
            git(dir, &["-c", "advice.detachedHead=false", "checkout", "--quiet", "--force", "--detach", &commit, "--"])
                .map_err(|why| failed(format!("cannot check out {reference}: {why}")))
        }
        Fetch::Url { url, file } => {
            println!("[{node}] download: {url}");
            download(url, file).map_err(failed)
        }
    }
}

/// Runs `git ARGS` in `dir`; the error is git's own message.
fn git(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        // A missing credential fails the build instead of waiting for a password.
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| format!("cannot run git (is it installed?): {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let command = args.iter().find(|a| a.chars().all(|c| c.is_ascii_lowercase())).unwrap_or(&"");
    Err(format!("`git {command}` failed ({}): {}", out.status, said.trim()))
}

/// Downloads `url` to `file`, whole or not at all: into a temporary file that is renamed once
/// complete, executable unless it is a Python script.
fn download(url: &str, file: &Path) -> Result<(), String> {
    let folder = file.parent().unwrap_or(file);
    std::fs::create_dir_all(folder).map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    let mut response = ureq::get(url).call().map_err(|e| e.to_string())?;
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_DOWNLOAD)
        .read_to_vec()
        .map_err(|e| format!("reading the response: {e}"))?;
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    let partial = folder.join(format!(".{name}.partial"));
    let mode = if file.extension().is_some_and(|e| e == "py") { 0o644 } else { 0o755 };
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(&partial)
        .and_then(|mut f| f.write_all(&body))
        .and_then(|()| std::fs::rename(&partial, file));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(format!("cannot write {}: {e}", file.display()));
    }
    Ok(())
}
