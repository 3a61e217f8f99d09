//! Messages the dashboard draws as points in space: a `sensor_msgs/msg/PointCloud2`, the poses
//! of a `nav_msgs/msg/Path` (a line) or a `geometry_msgs/msg/PoseArray`, and the hits of a
//! `sensor_msgs/msg/LaserScan` in its plane.
//!
//! The page gets at most [`MAX_POINTS`] of them (a larger cloud is sampled evenly) as
//! little-endian `f32` x, y, z triples, in the message's frame, and draws them itself, so a
//! cloud costs the server one pass over its points.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, UInt8Type, UInt32Type};
use arrow_array::{Array, ArrayRef, StructArray};
use arrow_schema::DataType;

use crate::preview::bytes_at;

/// The most points sent to the page for one message.
pub const MAX_POINTS: usize = 50_000;

/// `sensor_msgs/msg/PointField`'s `FLOAT32` and `FLOAT64` datatypes, the only ones a
/// coordinate is drawn from.
const FLOAT32: u8 = 7;
const FLOAT64: u8 = 8;

/// Points of one message, as the page draws them.
#[derive(Debug, PartialEq)]
pub struct Points {
    /// What the points are: `cloud`, `path`, `poses` or `scan`.
    pub shape: &'static str,
    /// x, y, z of each point sent, one after the other.
    pub xyz: Vec<f32>,
    /// Points the message holds, of which `xyz` has a sample.
    pub total: usize,
    /// The message's `header.frame_id`, if it has one.
    pub frame: Option<String>,
}

impl Points {
    /// Points sent.
    #[must_use]
    pub fn len(&self) -> usize {
        self.xyz.len() / 3
    }

    /// True when no point was sent.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.xyz.is_empty()
    }

    /// `xyz` as the page reads it: little-endian `f32`s.
    #[must_use]
    pub fn bytes(&self) -> Vec<u8> {
        self.xyz.iter().flat_map(|v| v.to_le_bytes()).collect()
    }
}

/// The points of `data` when it is a one-row message of a kind drawn as points; `Err` says
/// why a message of such a kind cannot be drawn (its layout contradicts itself).
pub fn of(data: &ArrayRef) -> Option<Result<Points, String>> {
    let row = data.as_struct_opt().filter(|row| row.len() == 1)?;
    let found = cloud(row).or_else(|| poses(row).map(Ok)).or_else(|| scan(row).map(Ok))?;
    Some(found.map(|points| Points { frame: frame_of(row), ..points }))
}

/// Every `every`-th of `0..total`, and the last one too, so a path ends where the robot is.
fn sampled(total: usize) -> impl Iterator<Item = usize> {
    let every = total.div_ceil(MAX_POINTS).max(1);
    (0..total).step_by(every).chain((total > 0 && !(total - 1).is_multiple_of(every)).then(|| total - 1))
}

/// A `PointCloud2`'s x, y, z, read from its bytes by its `fields`.
fn cloud(row: &StructArray) -> Option<Result<Points, String>> {
    let fields = row.column_by_name("fields")?.as_list_opt::<i32>()?;
    let data = bytes_at(row.column_by_name("data")?, 0)?;
    let uint = |name: &str| uint(row, name);
    let (width, height, point_step, row_step) =
        (uint("width")?, uint("height")?, uint("point_step")?, uint("row_step")?);
    let big_endian = row.column_by_name("is_bigendian")?.as_boolean_opt()?.value(0);
    let fields = fields.value(0);
    let fields = fields.as_struct_opt()?;
    let names = fields.column_by_name("name")?.as_string_opt::<i32>()?;
    let offsets = fields.column_by_name("offset")?.as_primitive_opt::<UInt32Type>()?;
    let datatypes = fields.column_by_name("datatype")?.as_primitive_opt::<UInt8Type>()?;
    let axis = |name: &str| -> Result<(usize, u8), String> {
        let i = (0..names.len())
            .find(|&i| names.value(i) == name)
            .ok_or_else(|| format!("a point cloud without an `{name}` field"))?;
        let (offset, datatype) = (offsets.value(i) as usize, datatypes.value(i));
        let size = match datatype {
            FLOAT32 => 4,
            FLOAT64 => 8,
            other => {
                return Err(format!("a point cloud whose `{name}` is of datatype {other}, not FLOAT32 or FLOAT64"));
            }
        };
        if offset + size > point_step {
            return Err(format!("a point cloud whose `{name}` ends past its point_step of {point_step}"));
        }
        Ok((offset, datatype))
    };
    let axes = match (axis("x"), axis("y"), axis("z")) {
        (Ok(x), Ok(y), Ok(z)) => [x, y, z],
        (Err(why), ..) | (_, Err(why), _) | (.., Err(why)) => return Some(Err(why)),
    };
    // The last row's start plus one row of points must lie in the data (no rows: nothing to read).
    let fits = height.checked_sub(1).is_none_or(|rows_before_last| {
        rows_before_last
            .checked_mul(row_step)
            .and_then(|n| n.checked_add(width * point_step))
            .is_some_and(|n| n <= data.len())
    });
    if !fits || (height > 1 && row_step < width * point_step) {
        return Some(Err(format!(
            "a point cloud of {width}×{height} points of {point_step} bytes (rows of {row_step}) with {} bytes of data",
            data.len()
        )));
    }
    let read = |at: usize, datatype: u8| -> f32 {
        match (datatype, big_endian) {
            (FLOAT32, false) => f32::from_le_bytes(data[at..at + 4].try_into().unwrap_or_default()),
            (FLOAT32, true) => f32::from_be_bytes(data[at..at + 4].try_into().unwrap_or_default()),
            (_, false) => f64::from_le_bytes(data[at..at + 8].try_into().unwrap_or_default()) as f32,
            (_, true) => f64::from_be_bytes(data[at..at + 8].try_into().unwrap_or_default()) as f32,
        }
    };
    let total = width * height;
    let mut xyz = Vec::with_capacity(3 * total.min(MAX_POINTS + 1));
    for i in sampled(total) {
        let start = (i / width) * row_step + (i % width) * point_step;
        let point = axes.map(|(offset, datatype)| read(start + offset, datatype));
        // Clouds that are not dense mark missing points with NaN.
        if point.iter().all(|v| v.is_finite()) {
            xyz.extend_from_slice(&point);
        }
    }
    Some(Ok(Points { shape: "cloud", xyz, total, frame: None }))
}

/// The positions of a `Path`'s poses (a `poses` list of `PoseStamped`) or of a `PoseArray`'s
/// (a `poses` list of `Pose`).
fn poses(row: &StructArray) -> Option<Points> {
    let list = row.column_by_name("poses")?.as_list_opt::<i32>()?;
    let (start, end) = (list.value_offsets()[0] as usize, list.value_offsets()[1] as usize);
    let items = list.values().as_struct_opt()?;
    let (shape, position) = match items.column_by_name("pose") {
        Some(pose) => ("path", pose.as_struct_opt()?.column_by_name("position")?),
        None => ("poses", items.column_by_name("position")?),
    };
    let position = position.as_struct_opt()?;
    let axis = |name: &str| position.column_by_name(name)?.as_primitive_opt::<Float64Type>();
    let (x, y, z) = (axis("x")?, axis("y")?, axis("z")?);
    let xyz = sampled(end - start).flat_map(|i| [x, y, z].map(|a| a.value(start + i) as f32)).collect();
    Some(Points { shape, xyz, total: end - start, frame: None })
}

/// A `LaserScan`'s hits (ranges within its limits) in its plane, z = 0.
fn scan(row: &StructArray) -> Option<Points> {
    let float = |name: &str| Some(row.column_by_name(name)?.as_primitive_opt::<Float32Type>()?.value(0));
    let (angle_min, increment) = (float("angle_min")?, float("angle_increment")?);
    let (range_min, range_max) = (float("range_min")?, float("range_max")?);
    let ranges = row.column_by_name("ranges")?.as_list_opt::<i32>()?.value(0);
    let ranges = ranges.as_primitive_opt::<Float32Type>()?;
    let mut xyz = Vec::with_capacity(3 * ranges.len().min(MAX_POINTS + 1));
    for i in sampled(ranges.len()) {
        let r = ranges.value(i);
        if r.is_finite() && r >= range_min && r <= range_max {
            let angle = angle_min + increment * i as f32;
            xyz.extend_from_slice(&[r * angle.cos(), r * angle.sin(), 0.0]);
        }
    }
    Some(Points { shape: "scan", xyz, total: ranges.len(), frame: None })
}

/// `header.frame_id` of a one-row message.
fn frame_of(row: &StructArray) -> Option<String> {
    let header = row.column_by_name("header")?.as_struct_opt()?;
    let frame = header.column_by_name("frame_id")?.as_string_opt::<i32>()?;
    (!frame.is_null(0)).then(|| frame.value(0).to_owned())
}

/// A `uint32` field of row 0, as a size.
pub(crate) fn uint(row: &StructArray, name: &str) -> Option<usize> {
    let column = row.column_by_name(name)?.as_primitive_opt::<UInt32Type>()?;
    (!column.is_null(0)).then(|| column.value(0) as usize)
}

/// Whether `data_type` is `builtin_interfaces/msg/Time` or `Duration`: `sec` and `nanosec`.
pub(crate) fn is_time(data_type: &DataType) -> bool {
    matches!(data_type, DataType::Struct(fields)
        if fields.len() == 2 && fields[0].name() == "sec" && fields[1].name() == "nanosec")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{BinaryBuilder, Float32Builder, ListBuilder};
    use arrow_array::{BooleanArray, Float32Array, Float64Array, ListArray, StringArray, UInt8Array, UInt32Array};
    use arrow_buffer::OffsetBuffer;
    use arrow_schema::Field;

    use super::*;

    fn one<T: Array + 'static>(array: T) -> ArrayRef {
        Arc::new(array)
    }

    fn strukt(columns: Vec<(&str, ArrayRef)>) -> StructArray {
        StructArray::from(
            columns
                .into_iter()
                .map(|(name, a)| (Arc::new(Field::new(name, a.data_type().clone(), true)), a))
                .collect::<Vec<_>>(),
        )
    }

    fn list_of(values: ArrayRef, lengths: &[usize]) -> ArrayRef {
        let field = Arc::new(Field::new("item", values.data_type().clone(), true));
        Arc::new(ListArray::new(field, OffsetBuffer::from_lengths(lengths.iter().copied()), values, None))
    }

    fn header(frame: &str) -> ArrayRef {
        let stamp = strukt(vec![
            ("sec", one(arrow_array::Int32Array::from(vec![1]))),
            ("nanosec", one(UInt32Array::from(vec![2]))),
        ]);
        one(strukt(vec![("stamp", one(stamp)), ("frame_id", one(StringArray::from(vec![frame])))]))
    }

    /// A one-row PointCloud2 of `points` as x, y, z float32 with a pad of 4 bytes, little-endian.
    fn cloud_of(points: &[[f32; 3]], fields: &[(&str, u32, u8)]) -> ArrayRef {
        let mut data = Vec::new();
        for p in points {
            for v in p {
                data.extend_from_slice(&v.to_le_bytes());
            }
            data.extend_from_slice(&[0; 4]);
        }
        let n = fields.len();
        let fields = strukt(vec![
            ("name", one(StringArray::from(fields.iter().map(|f| f.0).collect::<Vec<_>>()))),
            ("offset", one(UInt32Array::from(fields.iter().map(|f| f.1).collect::<Vec<_>>()))),
            ("datatype", one(UInt8Array::from(fields.iter().map(|f| f.2).collect::<Vec<_>>()))),
            ("count", one(UInt32Array::from(vec![1; n]))),
        ]);
        let mut bytes = BinaryBuilder::new();
        bytes.append_value(&data);
        let u = |v: usize| one(UInt32Array::from(vec![v as u32]));
        one(strukt(vec![
            ("header", header("map")),
            ("height", u(1)),
            ("width", u(points.len())),
            ("fields", list_of(one(fields), &[n])),
            ("is_bigendian", one(BooleanArray::from(vec![false]))),
            ("point_step", u(16)),
            ("row_step", u(16 * points.len())),
            ("data", one(bytes.finish())),
            ("is_dense", one(BooleanArray::from(vec![false]))),
        ]))
    }

    /// `cloud` with its `height` and `row_step` replaced.
    fn with_layout(cloud: &ArrayRef, height: u32, row_step: u32) -> ArrayRef {
        let row = cloud.as_struct();
        let columns = row
            .fields()
            .iter()
            .zip(row.columns())
            .map(|(field, column)| match field.name().as_str() {
                "height" => one(UInt32Array::from(vec![height])),
                "row_step" => one(UInt32Array::from(vec![row_step])),
                _ => column.clone(),
            })
            .collect();
        one(StructArray::new(row.fields().clone(), columns, None))
    }

    const XYZ: [(&str, u32, u8); 3] = [("x", 0, FLOAT32), ("y", 4, FLOAT32), ("z", 8, FLOAT32)];

    #[test]
    fn a_cloud_gives_its_points_in_its_frame_without_the_missing_ones() {
        let points = of(&cloud_of(&[[1.0, 2.0, 3.0], [f32::NAN, 0.0, 0.0], [4.0, 5.0, 6.0]], &XYZ));
        assert_eq!(
            points,
            Some(Ok(Points {
                shape: "cloud",
                xyz: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                total: 3,
                frame: Some("map".into())
            }))
        );
    }

    #[test]
    fn a_cloud_whose_layout_contradicts_itself_is_refused_with_the_reason() {
        let no_z = of(&cloud_of(&[[1.0, 2.0, 3.0]], &XYZ[..2]));
        assert_eq!(no_z, Some(Err("a point cloud without an `z` field".into())));
        let past = of(&cloud_of(&[[1.0, 2.0, 3.0]], &[("x", 0, FLOAT32), ("y", 4, FLOAT32), ("z", 14, FLOAT32)]));
        assert!(matches!(past, Some(Err(why)) if why.contains("past its point_step")));
        let ints = of(&cloud_of(&[[1.0, 2.0, 3.0]], &[("x", 0, 5), ("y", 4, FLOAT32), ("z", 8, FLOAT32)]));
        assert!(matches!(ints, Some(Err(why)) if why.contains("datatype 5")));
        // Rows whose offsets do not fit in a machine word are no cloud either, not a panic.
        let huge = of(&with_layout(&cloud_of(&[[1.0, 2.0, 3.0]], &XYZ), u32::MAX, u32::MAX));
        assert!(matches!(&huge, Some(Err(why)) if why.contains("with 16 bytes of data")), "{huge:?}");
    }

    #[test]
    fn a_large_cloud_is_sampled_evenly_and_keeps_its_last_point() {
        let many: Vec<[f32; 3]> = (0..MAX_POINTS * 2 + 1).map(|i| [i as f32, 0.0, 0.0]).collect();
        let Some(Ok(points)) = of(&cloud_of(&many, &XYZ)) else { panic!("not a cloud") };
        // One in three, then the last: 0, 3, …, 99 999, 100 000.
        assert_eq!((points.len(), points.total), ((MAX_POINTS * 2 + 1).div_ceil(3) + 1, MAX_POINTS * 2 + 1));
        assert_eq!((points.xyz[3], points.xyz[points.xyz.len() - 3]), (3.0, (MAX_POINTS * 2) as f32));
    }

    #[test]
    fn a_path_is_its_poses_positions() {
        let axis = |v: Vec<f64>| one(Float64Array::from(v));
        let position =
            strukt(vec![("x", axis(vec![0.0, 1.0])), ("y", axis(vec![0.0, 2.0])), ("z", axis(vec![0.0, 0.5]))]);
        let pose = strukt(vec![("position", one(position))]);
        let stamped = strukt(vec![("pose", one(pose))]);
        let path = one(strukt(vec![("header", header("odom")), ("poses", list_of(one(stamped), &[2]))]));
        let expected =
            Points { shape: "path", xyz: vec![0.0, 0.0, 0.0, 1.0, 2.0, 0.5], total: 2, frame: Some("odom".into()) };
        assert_eq!(of(&path), Some(Ok(expected)));
    }

    #[test]
    fn a_scan_is_its_hits_within_range() {
        let f = |v: f32| one(Float32Array::from(vec![v]));
        let mut ranges = ListBuilder::new(Float32Builder::new());
        ranges.values().append_slice(&[1.0, 50.0, 2.0]);
        ranges.append(true);
        let scan = one(strukt(vec![
            ("angle_min", f(0.0)),
            ("angle_increment", f(std::f32::consts::FRAC_PI_2)),
            ("range_min", f(0.1)),
            ("range_max", f(10.0)),
            ("ranges", one(ranges.finish())),
        ]));
        let Some(Ok(points)) = of(&scan) else { panic!("not a scan") };
        let rounded: Vec<f32> = points.xyz.iter().map(|v| v.round()).collect();
        assert_eq!((rounded, points.total), (vec![1.0, 0.0, 0.0, -2.0, 0.0, 0.0], 3));
    }

    #[test]
    fn other_structs_are_not_points() {
        let pose = one(strukt(vec![("x", one(Float64Array::from(vec![1.0])))]));
        assert_eq!(of(&pose), None);
    }
}
