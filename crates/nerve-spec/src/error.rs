//! Errors: one [`Problem`] per mistake, all of them gathered in a [`SpecError`].

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One mistake in a dataflow file, with the position of the offending text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Problem {
    /// 1-based line in the file.
    pub line: usize,
    /// 1-based column in the file.
    pub column: usize,
    /// Where in the document: `nodes[camera].inputs.image`, or `(yaml)` for a syntax error.
    pub field: String,
    /// What is wrong, and where it helps, what was expected.
    pub message: String,
    /// The module file (`module:`) the position is in; `None`: the dataflow file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}: {}", self.line, self.column, self.field, self.message)
    }
}

/// Why a dataflow could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", file.display())]
    Io {
        /// The file as given.
        file: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file was read but is not a valid dataflow. Displays as one
    /// `{file}:{line}:{column}: {field}: {message}` line per problem.
    #[error("{}", render_problems(file, problems))]
    Invalid {
        /// The file as given.
        file: PathBuf,
        /// Every problem found, sorted by position.
        problems: Vec<Problem>,
    },
}

impl SpecError {
    /// The problems of an [`SpecError::Invalid`]; empty for an I/O error.
    pub fn problems(&self) -> &[Problem] {
        match self {
            SpecError::Io { .. } => &[],
            SpecError::Invalid { problems, .. } => problems,
        }
    }
}

fn render_problems(file: &Path, problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| format!("{}:{p}", p.file.as_deref().unwrap_or(file).display()))
        .collect::<Vec<_>>()
        .join("\n")
}
