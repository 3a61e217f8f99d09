//! A package of the user's own, generated against `nerve-msgs` (`--root ::nerve_msgs`): its
//! defaults and constants are the interface file's, and its messages meet ROS 2's wire format.

#[rustfmt::skip]
mod generated;

use generated::defaults_msgs::msg::{Defaults, Holder};
use nerve_msgs::Message;
use nerve_types::{Registry, TypeName, from_cdr, to_cdr};

#[test]
fn defaults_and_constants_are_the_files() {
    let d = Defaults::default();
    assert_eq!((Defaults::RED, Defaults::GREETING, Defaults::SCALE), (1, "hi \"there\"", 0.0025));
    assert_eq!((d.flag, d.small, d.big, d.ratio, d.whole), (true, -5, u64::MAX, 0.25, 2.0));
    assert_eq!((d.name.as_str(), d.bounded.as_str()), ("quoted \"name\"", "short"));
    assert_eq!(
        (d.fixed, &d.seq[..], d.words.clone(), d.flags),
        ([1, 2, 3], &[1.5, -2.0][..], vec!["a".to_owned(), "b".to_owned()], [true, false])
    );
    assert_eq!(d.r#type, 7);
    assert_eq!(Holder::default().long_fixed, [0.0; 40]);
}

#[test]
fn a_user_message_survives_arrow_and_cdr() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::with_folders(vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/types")]);
    let name = TypeName::parse(Defaults::TYPE_NAME)?;
    let mut message = Defaults { holders: vec![Holder { long_fixed: [2.5; 40] }], ..Defaults::default() };
    message.points.push(nerve_msgs::geometry_msgs::msg::Point { x: 1.0, y: 2.0, z: 3.0 });
    let bytes = to_cdr(&registry, &name, &message.to_arrow()?, 0)?;
    assert_eq!(Defaults::from_arrow(&from_cdr(&registry, &name, &bytes)?)?, message);
    // Over the bound of `holders` (at most 2): the wire format refuses it, naming the field.
    message.holders = vec![Holder::default(); 3];
    let err = to_cdr(&registry, &name, &message.to_arrow()?, 0).err().ok_or("encoded 3 holders")?;
    assert!(err.to_string().contains("holders"), "{err}");
    Ok(())
}
