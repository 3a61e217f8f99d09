//! Generated messages go to Arrow and back unchanged, meet ROS 2's wire format through the
//! registry's CDR codec, and read their number sequences in place.

use nerve_msgs::arrow_array::{Array, ArrayRef, UInt32Array};
use nerve_msgs::geometry_msgs::msg::{Point, Pose, Quaternion};
use nerve_msgs::sensor_msgs::msg::{Image, PointCloud2, PointField};
use nerve_msgs::std_msgs::msg::{ColorRGBA, Header};
use nerve_msgs::visualization_msgs::msg::Marker;
use nerve_msgs::{Message, MessageError};
use nerve_types::{Registry, TypeName, from_cdr, to_cdr};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

fn through_cdr<M: Message>(message: &M) -> Result<M> {
    let registry = Registry::with_folders(Vec::new());
    let name = TypeName::parse(M::TYPE_NAME)?;
    let bytes = to_cdr(&registry, &name, &message.to_arrow()?, 0)?;
    Ok(M::from_arrow(&from_cdr(&registry, &name, &bytes)?)?)
}

fn header(frame: &str) -> Header {
    let mut header = Header { frame_id: frame.to_owned(), ..Header::default() };
    header.stamp.sec = 1_700_000_000;
    header.stamp.nanosec = 42;
    header
}

#[test]
fn an_image_survives_arrow_and_cdr() -> Result {
    let image = Image {
        header: header("camera"),
        height: 2,
        width: 3,
        encoding: "rgb8".to_owned(),
        step: 9,
        data: (0..18).collect(),
        ..Image::default()
    };
    assert_eq!(Image::from_arrow(&image.to_arrow()?)?, image);
    assert_eq!(through_cdr(&image)?, image);
    Ok(())
}

#[test]
fn a_point_cloud_and_a_marker_survive_arrow_and_cdr() -> Result {
    let field =
        |name: &str, offset| PointField { name: name.to_owned(), offset, datatype: PointField::FLOAT32, count: 1 };
    let cloud = PointCloud2 {
        header: header("lidar"),
        height: 1,
        width: 2,
        fields: vec![field("x", 0), field("y", 4), field("z", 8)],
        point_step: 12,
        row_step: 24,
        data: vec![7u8; 24].into(),
        is_dense: true,
        ..PointCloud2::default()
    };
    assert_eq!(through_cdr(&cloud)?, cloud);
    let marker = Marker {
        header: header("map"),
        ns: "obstacles".to_owned(),
        r#type: Marker::CUBE,
        action: Marker::ADD,
        pose: Pose {
            position: Point { x: 1.0, y: -2.0, z: 0.5 },
            orientation: Quaternion { w: 1.0, ..Quaternion::default() },
        },
        points: vec![Point { x: 1.0, ..Point::default() }, Point { z: 3.0, ..Point::default() }],
        colors: vec![ColorRGBA { r: 1.0, a: 1.0, ..ColorRGBA::default() }],
        ..Marker::default()
    };
    assert_eq!(through_cdr(&marker)?, marker);
    Ok(())
}

#[test]
fn a_received_images_data_views_the_value_in_place() -> Result {
    let image = Image { height: 1, width: 4, data: vec![1, 2, 3, 4].into(), ..Image::default() };
    let value: ArrayRef = image.to_arrow()?;
    let read = Image::from_arrow(&value)?;
    // The bytes are those of the value's buffer, not a copy of them.
    let buffers = value.to_data().child_data()[6].child_data()[0].buffers()[0].clone();
    assert_eq!(read.data.as_ptr(), buffers.as_ptr());
    Ok(())
}

#[test]
fn another_type_or_row_count_is_refused_with_both_named() -> Result {
    let err = Image::from_arrow(&UInt32Array::from(vec![1])).err().ok_or("accepted a UInt32 array")?;
    let MessageError::Type { message, .. } = &err else { return Err(format!("{err:?}").into()) };
    assert_eq!(*message, "sensor_msgs/msg/Image");
    assert!(err.to_string().contains("UInt32"), "{err}");
    let two = Header::to_arrow_rows(&[header("a"), header("b")])?;
    assert!(matches!(Header::from_arrow(&two), Err(MessageError::Rows { rows: 2, .. })));
    assert_eq!(Header::from_arrow_rows(&two)?, [header("a"), header("b")]);
    assert!(two.len() == 2);
    Ok(())
}
