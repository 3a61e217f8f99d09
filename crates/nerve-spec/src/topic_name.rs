//! Topic names: the one rule shared by dataflow files (`topic/<name>` inputs,
//! `topic:` on outputs) and the topic API, so that a name a dataflow accepts is
//! always one a publisher or subscriber accepts, and the other way round.

/// Longest topic name accepted (file names on Linux stop at 255 bytes).
pub const MAX_TOPIC_LEN: usize = 200;

/// Why a name with an empty, `.` or `..` segment is refused.
pub(crate) const BAD_SEGMENT: &str = "segments between `/` must be non-empty and not `.` or `..`";

/// Checks a topic name and returns its canonical form (no leading `/`).
///
/// A name is one or more `/`-separated segments of ASCII letters, digits, `_`, `-` and `.`,
/// none empty and none `.` or `..`: `camera/image`, `robot1/pose`, `/tf` (same as `tf`).
///
/// ```
/// use nerve_spec::topic_name::canonical;
///
/// assert_eq!(canonical("/tf").as_deref(), Ok("tf"));
/// assert_eq!(canonical("a b"), Err("` ` is not allowed (use letters, digits, `_`, `-`, `.` and `/`)".to_owned()));
/// ```
///
/// # Errors
/// What is wrong with the name, as a phrase without the name itself (callers
/// say which name and where): `it is empty`, …
pub fn canonical(topic: &str) -> Result<String, String> {
    let name = topic.strip_prefix('/').unwrap_or(topic);
    if name.is_empty() {
        return Err("it is empty".to_owned());
    }
    if name.len() > MAX_TOPIC_LEN {
        return Err(format!("it is longer than {MAX_TOPIC_LEN} bytes"));
    }
    for segment in name.split('/') {
        // Names become directory names in the registry: these would escape it.
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(BAD_SEGMENT.to_owned());
        }
        if let Some(c) = segment.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
            return Err(format!("`{c}` is not allowed (use letters, digits, `_`, `-`, `.` and `/`)"));
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
    fn accepts_ros_style_names() -> Result<(), String> {
        assert_eq!(canonical("/tf")?, "tf");
        assert_eq!(canonical("camera/image_raw")?, "camera/image_raw");
        assert_eq!(canonical("robot1/odom.v2-x")?, "robot1/odom.v2-x");
        assert_eq!(canonical(&"x".repeat(MAX_TOPIC_LEN))?.len(), MAX_TOPIC_LEN);
        assert_eq!(from_file_name(&file_name("a/b.c/d-e")), "a/b.c/d-e");
        Ok(())
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
            assert_eq!(canonical(bad), Err(why.to_owned()), "{bad:?}");
        }
        assert_eq!(canonical(&"x".repeat(MAX_TOPIC_LEN + 1)), Err(format!("it is longer than {MAX_TOPIC_LEN} bytes")));
    }
}
