//! Node files that `nerve build` fetches before it builds: a git repository (dora-rs's `git:`
//! with `branch:`, `tag:` or `rev:`) or a file at a URL (`path: https://…`).
//!
//! Both land under the dataflow's folder, in [`FETCH_DIR`], at a place named after what was
//! asked for, so a second build reuses the first one's clone and two refs of one repository
//! never share a checkout.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fields::{join_field, key_str, string_field};
use crate::tree::{Node, Problems};

/// The folder, inside the dataflow's, that holds what `nerve build` fetched.
pub const FETCH_DIR: &str = ".nerve";

/// The node keys that choose a repository and its commit.
pub(crate) const GIT_KEYS: &[&str] = &["git", "branch", "tag", "rev"];

/// What `nerve build` fetches for a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fetch {
    /// `git: URL`: the repository is cloned into `dir` and checked out at `reference`; the
    /// node's relative `path:` and its `build:` start from `dir`, and the node runs there.
    Git {
        /// The repository, as written (anything `git clone` takes).
        url: String,
        /// The commit to check out.
        reference: GitRef,
        /// The clone, absolute.
        dir: PathBuf,
    },
    /// `path: https://…`: the file is downloaded to `file`, which the node then runs.
    Url {
        /// The address, as written.
        url: String,
        /// Where the download goes, absolute.
        file: PathBuf,
    },
}

impl Fetch {
    /// The folder the node's `build:` and process run in, when not the dataflow's.
    #[must_use]
    pub fn work_dir(&self) -> Option<&Path> {
        match self {
            Self::Git { dir, .. } => Some(dir),
            Self::Url { .. } => None,
        }
    }

    /// Whether a build has fetched it already.
    #[must_use]
    pub fn is_fetched(&self) -> bool {
        match self {
            Self::Git { dir, .. } => dir.join(".git").exists(),
            Self::Url { file, .. } => file.is_file(),
        }
    }

    /// The address, as written.
    #[must_use]
    pub fn url(&self) -> &str {
        match self {
            Self::Git { url, .. } | Self::Url { url, .. } => url,
        }
    }
}

/// Which commit of a repository a node runs (dora-rs allows at most one of the three).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GitRef {
    /// The remote's default branch, as of the latest build.
    Default,
    /// `branch: NAME`: the branch's head, as of the latest build.
    Branch(String),
    /// `tag: NAME`.
    Tag(String),
    /// `rev: COMMIT`: a commit id (or anything `git checkout` resolves after a fetch).
    Rev(String),
}

impl std::fmt::Display for GitRef {
    /// As messages name it: "branch `main`", "the default branch".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Default => f.write_str("the default branch"),
            Self::Branch(b) => write!(f, "branch `{b}`"),
            Self::Tag(t) => write!(f, "tag `{t}`"),
            Self::Rev(r) => write!(f, "rev `{r}`"),
        }
    }
}

/// A node's `git`, `branch`, `tag` and `rev` keys as written, each with the key's position.
#[derive(Default)]
pub(crate) struct GitKeys<'a> {
    keys: Vec<(&'a Node, &'a Node)>,
}

impl<'a> GitKeys<'a> {
    pub(crate) fn push(&mut self, key: &'a Node, value: &'a Node) {
        self.keys.push((key, value));
    }

    /// Whether the node names a repository (`git:`), rightly or not.
    pub(crate) fn any_repository(&self) -> bool {
        self.keys.iter().any(|(k, _)| key_str(k) == "git")
    }

    /// The repository these keys name, cloned under `base_dir`; `None` without `git:` (a ref
    /// without it is reported) or when a key is wrong (reported).
    pub(crate) fn resolve(&self, p: &mut Problems, field: &str, base_dir: &Path) -> Option<Fetch> {
        let mut url = None;
        let mut refs = Vec::new();
        for (key, value) in &self.keys {
            let k = key_str(key);
            let text = string_field(p, value, &join_field(field, k))?;
            if k != "git" && (text.is_empty() || text.starts_with('-')) {
                // git would read `-…` as an option of its own.
                p.push(
                    value.mark,
                    join_field(field, k),
                    format!("`{text}` is not a git {k}: empty or starting with `-`"),
                );
                return None;
            }
            match k {
                "git" => url = Some((text, value.mark)),
                "branch" => refs.push((key.mark, k, GitRef::Branch(text))),
                "tag" => refs.push((key.mark, k, GitRef::Tag(text))),
                _ => refs.push((key.mark, k, GitRef::Rev(text))),
            }
        }
        let Some((url, url_mark)) = url else {
            if let Some((mark, k, _)) = refs.first() {
                p.push(
                    *mark,
                    join_field(field, k),
                    format!("`{k}` chooses a commit of the `git:` repository, and the node has no `git:`"),
                );
            }
            return None;
        };
        if let [(_, first, _), (mark, second, _), ..] = refs.as_slice() {
            p.push(
                *mark,
                join_field(field, second),
                format!("`{first}` and `{second}` both choose the commit to check out: keep one"),
            );
            return None;
        }
        if url.trim().is_empty() {
            p.push(url_mark, join_field(field, "git"), "`git` is empty: give the repository's URL");
            return None;
        }
        let reference = refs.pop().map_or(GitRef::Default, |(_, _, r)| r);
        let dir = base_dir.join(FETCH_DIR).join("git").join(place(&url, &reference.to_string()));
        Some(Fetch::Git { url, reference, dir })
    }
}

/// Where `path: https://…` (or `http://`) is downloaded to; `None` when `raw` is not a URL, and
/// an error for a URL nerve cannot fetch.
pub(crate) fn url_path(raw: &str, base_dir: &Path) -> Option<Result<PathBuf, String>> {
    let (scheme, rest) = raw.split_once("://")?;
    if !scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) || scheme.is_empty() {
        return None;
    }
    if !matches!(scheme, "https" | "http") {
        return Some(Err(format!(
            "nerve fetches `path:` only over https or http, not `{scheme}://`: download the file yourself and point `path:` at it"
        )));
    }
    let name = rest.split(['?', '#']).next().unwrap_or_default().rsplit('/').next().unwrap_or_default();
    if name.is_empty() || name == "." || name == ".." {
        return Some(Err(format!("`{raw}` names no file (its last segment is empty): give the file's own URL")));
    }
    Some(Ok(base_dir.join(FETCH_DIR).join("download").join(place(raw, "")).join(name)))
}

/// A folder name for `url` (and `detail`): readable, and unique to both.
fn place(url: &str, detail: &str) -> String {
    let stem = url.trim_end_matches('/').rsplit(['/', ':']).next().unwrap_or_default().trim_end_matches(".git");
    let stem: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).take(40).collect();
    let id = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, format!("{url}\n{detail}").as_bytes());
    format!("{}-{}", stem.trim_start_matches('.'), &id.simple().to_string()[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_differ_by_url_and_ref_and_are_readable() {
        let a = place("https://github.com/dora-rs/dora.git", "");
        assert!(a.starts_with("dora-"), "{a}");
        assert_eq!(a, place("https://github.com/dora-rs/dora.git", ""));
        assert_ne!(a, place("https://github.com/dora-rs/dora.git", "branch main"));
        assert_ne!(a, place("https://example.com/dora.git", ""));
    }

    #[test]
    fn url_paths() {
        let base = Path::new("/flow");
        assert!(url_path("nodes/x.py", base).is_none());
        let Some(Ok(file)) = url_path("https://h.example/n/x.py?raw=1", base) else { panic!("a URL") };
        assert_eq!(file.file_name().and_then(|n| n.to_str()), Some("x.py"));
        assert!(file.starts_with("/flow/.nerve/download"));
        assert!(url_path("ftp://h/x", base).is_some_and(|r| r.is_err()));
        assert!(url_path("https://h.example/", base).is_some_and(|r| r.is_err()));
    }
}
