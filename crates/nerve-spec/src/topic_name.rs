//! Topic names: the one rule shared by dataflow files (`topic/<name>` inputs,
//! `topic:` on outputs) and the topic API, so that a name a dataflow accepts is
//! always one a publisher or subscriber accepts, and the other way round.

/// Longest topic name accepted (file names on Linux stop at 255 bytes).
pub const MAX_TOPIC_LEN: usize = 200;

/// What is wrong with a topic name, as a phrase without the name itself: callers say which
/// name and where (a dataflow's file, line and field; the topic API's call).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TopicNameError {
    /// Nothing, or only `/`.
    #[error("it is empty")]
    Empty,
    /// Longer than [`MAX_TOPIC_LEN`].
    #[error("it is longer than {MAX_TOPIC_LEN} bytes")]
    TooLong,
    /// An empty, `.` or `..` segment: names become directory names in the registry, and these
    /// would escape it.
    #[error("segments between `/` must be non-empty and not `.` or `..`")]
    BadSegment,
    /// A character outside the name alphabet.
    #[error("`{0}` is not allowed (use letters, digits, `_`, `-`, `.` and `/`)")]
    BadCharacter(char),
}

/// Checks a topic name and returns its canonical form (no leading `/`).
///
/// A name is one or more `/`-separated segments of ASCII letters, digits, `_`, `-` and `.`,
/// none empty and none `.` or `..`: `camera/image`, `robot1/pose`, `/tf` (same as `tf`).
///
/// ```
/// use nerve_spec::topic_name::canonical;
///
/// assert_eq!(canonical("/tf").as_deref(), Ok("tf"));
/// assert_eq!(
///     canonical("a b").map_err(|e| e.to_string()),
///     Err("` ` is not allowed (use letters, digits, `_`, `-`, `.` and `/`)".to_owned())
/// );
/// ```
///
/// # Errors
/// [`TopicNameError`]: what is wrong with the name, as a phrase without the name itself
/// (callers say which name and where): `it is empty`, …
pub fn canonical(topic: &str) -> Result<String, TopicNameError> {
    let name = topic.strip_prefix('/').unwrap_or(topic);
    if name.is_empty() {
        return Err(TopicNameError::Empty);
    }
    if name.len() > MAX_TOPIC_LEN {
        return Err(TopicNameError::TooLong);
    }
    for segment in name.split('/') {
        // Names become directory names in the registry: these would escape it.
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(TopicNameError::BadSegment);
        }
        if let Some(c) = segment.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
            return Err(TopicNameError::BadCharacter(c));
        }
    }
    Ok(name.to_owned())
}

/// Longest run name that can scope names (`nerve run --name`, else the run id, a 36-byte
/// UUID): a run's topic is registered under a file named after the run and the topic together,
/// and file names stop at 255 bytes.
pub const MAX_RUN_NAME_LEN: usize = 50;

/// What is wrong with a run's name as the scope of its topics, services and actions, as a
/// phrase without the name itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RunNameError {
    /// Nothing.
    #[error("it is empty")]
    Empty,
    /// Longer than [`MAX_RUN_NAME_LEN`].
    #[error("it is longer than {MAX_RUN_NAME_LEN} bytes")]
    TooLong,
    /// `.` or `..`, which would escape the registry as a directory name.
    #[error("`.` and `..` are not run names")]
    Dots,
    /// A character outside the alphabet of one name segment.
    #[error("`{0}` is not allowed (use letters, digits, `_`, `-` and `.`)")]
    BadCharacter(char),
}

/// Checks that `run` can scope names: one segment of a topic name (letters, digits, `_`, `-`,
/// `.`), at most [`MAX_RUN_NAME_LEN`] bytes.
///
/// # Errors
/// [`RunNameError`]: what is wrong with it.
pub fn check_run_name(run: &str) -> Result<(), RunNameError> {
    if run.is_empty() {
        return Err(RunNameError::Empty);
    }
    if run.len() > MAX_RUN_NAME_LEN {
        return Err(RunNameError::TooLong);
    }
    if run == "." || run == ".." {
        return Err(RunNameError::Dots);
    }
    match run.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
        Some(c) => Err(RunNameError::BadCharacter(c)),
        None => Ok(()),
    }
}

/// The topic's directory name in the registry (`/` cannot appear in a file name).
#[must_use]
pub fn file_name(canonical: &str) -> String {
    canonical.replace('/', "%")
}

/// The topic back from its directory name.
#[must_use]
pub fn from_file_name(file: &str) -> String {
    file.replace('%', "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ros_style_names() -> Result<(), TopicNameError> {
        assert_eq!(canonical("/tf")?, "tf");
        assert_eq!(canonical("camera/image_raw")?, "camera/image_raw");
        assert_eq!(canonical("robot1/odom.v2-x")?, "robot1/odom.v2-x");
        assert_eq!(canonical(&"x".repeat(MAX_TOPIC_LEN))?.len(), MAX_TOPIC_LEN);
        assert_eq!(from_file_name(&file_name("a/b.c/d-e")), "a/b.c/d-e");
        Ok(())
    }

    #[test]
    fn run_names_are_one_segment() {
        assert_eq!(check_run_name("2f6c1c52-8a0e-4a55-9b7c-1e0f5a0c9d3e"), Ok(()));
        assert_eq!(check_run_name("robot-1.sim_a"), Ok(()));
        assert_eq!(check_run_name(""), Err(RunNameError::Empty));
        assert_eq!(check_run_name(".."), Err(RunNameError::Dots));
        assert_eq!(check_run_name("a/b"), Err(RunNameError::BadCharacter('/')));
        assert_eq!(check_run_name(&"r".repeat(MAX_RUN_NAME_LEN + 1)), Err(RunNameError::TooLong));
    }

    #[test]
    fn refuses_names_that_escape_or_are_empty() {
        const SEGMENTS: &str = "segments between `/` must be non-empty and not `.` or `..`";
        for (bad, why) in [
            ("", "it is empty"),
            ("/", "it is empty"),
            ("a//b", SEGMENTS),
            ("//tf", SEGMENTS),
            ("a/", SEGMENTS),
            ("a/../b", SEGMENTS),
            ("..", SEGMENTS),
            ("./a", SEGMENTS),
            ("a b", "` ` is not allowed (use letters, digits, `_`, `-`, `.` and `/`)"),
            ("a%b", "`%` is not allowed (use letters, digits, `_`, `-`, `.` and `/`)"),
            ("é", "`é` is not allowed (use letters, digits, `_`, `-`, `.` and `/`)"),
        ] {
            assert_eq!(canonical(bad).map_err(|e| e.to_string()), Err(why.to_owned()), "{bad:?}");
        }
        assert_eq!(
            canonical(&"x".repeat(MAX_TOPIC_LEN + 1)).map_err(|e| e.to_string()),
            Err(format!("it is longer than {MAX_TOPIC_LEN} bytes"))
        );
    }
}
