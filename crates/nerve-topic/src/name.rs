//! Topic names, and how they are spelled on disk.
//!
//! The rules live in [`nerve_spec::topic_name`], shared with dataflow files;
//! this module gives them the topic API's error type.

use crate::error::TopicError;

pub use nerve_spec::topic_name::{MAX_TOPIC_LEN, file_name, from_file_name};

/// Checks a topic name and returns its canonical form (no leading `/`).
///
/// A name is one or more `/`-separated segments of ASCII letters, digits, `_`, `-` and `.`,
/// none empty and none `.` or `..`: `camera/image`, `robot1/pose`, `/tf` (same as `tf`).
///
/// # Errors
/// [`TopicError::BadName`] naming what is wrong.
pub fn canonical(topic: &str) -> Result<String, TopicError> {
    nerve_spec::topic_name::canonical(topic)
        .map_err(|why| TopicError::BadName { topic: topic.to_owned(), why: why.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_names_that_escape_or_are_empty() -> Result<(), TopicError> {
        assert_eq!(canonical("/tf")?, "tf");
        for bad in ["", "/", "a//b", "a/../b", "..", "a b", "a%b", "é"] {
            let err = canonical(bad).expect_err(bad);
            let text = err.to_string();
            assert!(text.contains("topic name"), "{text}");
            assert!(text.contains(&format!("`{bad}`")), "{text}");
        }
        assert!(canonical(&"x".repeat(MAX_TOPIC_LEN + 1)).is_err());
        Ok(())
    }
}
