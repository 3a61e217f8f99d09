//! Topic names, and how they are spelled on disk.

use crate::error::TopicError;

/// Longest topic name accepted (file names on Linux stop at 255 bytes).
pub const MAX_TOPIC_LEN: usize = 200;

/// Checks a topic name and returns its canonical form (no leading `/`).
///
/// A name is one or more `/`-separated segments of ASCII letters, digits, `_`, `-` and `.`,
/// none empty and none `.` or `..`: `camera/image`, `robot1/pose`, `/tf` (same as `tf`).
///
/// # Errors
/// [`TopicError::BadName`] naming what is wrong.
pub fn canonical(topic: &str) -> Result<String, TopicError> {
    let bad = |why: &str| TopicError::BadName { topic: topic.to_owned(), why: why.to_owned() };
    let name = topic.strip_prefix('/').unwrap_or(topic);
    if name.is_empty() {
        return Err(bad("it is empty"));
    }
    if name.len() > MAX_TOPIC_LEN {
        return Err(bad(&format!("it is longer than {MAX_TOPIC_LEN} bytes")));
    }
    for segment in name.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(bad("segments between `/` must be non-empty and not `.` or `..`"));
        }
        if let Some(c) = segment.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
            return Err(bad(&format!("`{c}` is not allowed (use letters, digits, `_`, `-`, `.` and `/`)")));
        }
    }
    Ok(name.to_owned())
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
    fn accepts_ros_style_names() -> Result<(), TopicError> {
        assert_eq!(canonical("/tf")?, "tf");
        assert_eq!(canonical("camera/image_raw")?, "camera/image_raw");
        assert_eq!(from_file_name(&file_name("a/b.c/d-e")), "a/b.c/d-e");
        Ok(())
    }

    #[test]
    fn refuses_names_that_escape_or_are_empty() {
        for bad in ["", "/", "a//b", "a/../b", "..", "a b", "a%b", "é"] {
            let err = canonical(bad).expect_err(bad);
            assert!(err.to_string().contains("topic name"), "{err}");
        }
        assert!(canonical(&"x".repeat(MAX_TOPIC_LEN + 1)).is_err());
    }
}
