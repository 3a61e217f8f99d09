//! What the dashboard shows of a channel's message: an image as pixels the page draws, points
//! in space (clouds, paths, scans: [`crate::points`]) it turns and zooms, a few numbers as
//! values it plots, anything else as a tree of at most [`LIST_LIMIT`] items per list.
//!
//! Images are `sensor_msgs/msg/Image` values (a struct of `height`, `width`, `encoding`, `step`
//! and `data`) or, as dora-rs nodes send them, bytes with `width`, `height` and `encoding`
//! parameters. They are sent as RGBA, at most [`MAX_WIDTH`] pixels wide (larger ones are
//! sampled down), so the page only copies them onto a canvas.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, StructArray};
use arrow_schema::DataType;
use nerve_topic::Message;
use serde_json::{Value, json};

use crate::points;

/// Items of a list the tree shows; the rest are counted.
pub const LIST_LIMIT: usize = 64;

/// Numbers a message may hold and still be plotted.
pub const MAX_PLOTTED: usize = 16;

/// The widest image sent to the page, in pixels.
pub const MAX_WIDTH: usize = 1280;

/// One message as the page gets it: a JSON header and, for an image or points, their bytes.
#[derive(Debug)]
pub struct Preview {
    /// `{"stamp", "parameters", "type", "rows", "kind", …}`: `kind` is `image` (with `width`,
    /// `height`, `encoding`; the pixels follow), `points` (`shape`, `count`, `total`, `frame`;
    /// the points follow), `numbers` (`names`, `values`, and `texts`, the message's strings) or
    /// `tree` (`value`).
    pub header: Value,
    /// What follows the header: an image's pixels, RGBA, row after row, or the points'
    /// x, y, z as little-endian `f32`s.
    pub body: Option<Vec<u8>>,
}

/// The preview of `message`.
#[must_use]
pub fn of(message: &Message) -> Preview {
    let data = &message.data;
    let mut header = json!({
        "stamp": message.metadata.timestamp,
        "parameters": Value::Object(message.metadata.parameters.clone()),
        "type": data.data_type().to_string(),
        "rows": data.len(),
    });
    let drawn = match image(data, &message.metadata.parameters) {
        Some(image) => Some(image.rgba().map(|(width, height, rgba)| {
            header["kind"] = "image".into();
            header["width"] = width.into();
            header["height"] = height.into();
            header["encoding"] = image.encoding.into();
            rgba
        })),
        None => points::of(data).map(|found| {
            found.map(|points| {
                header["kind"] = "points".into();
                header["shape"] = points.shape.into();
                header["count"] = points.len().into();
                header["total"] = points.total.into();
                header["frame"] = points.frame.as_deref().into();
                points.bytes()
            })
        }),
    };
    let body = match drawn {
        Some(Ok(body)) => Some(body),
        // A message of a kind drawn whose layout is wrong: its tree, and why it is not drawn.
        Some(Err(why)) => {
            header["note"] = why.into();
            header["kind"] = "tree".into();
            header["value"] = nerve_foxglove::json::values_up_to(data.as_ref(), LIST_LIMIT);
            None
        }
        None => {
            if let Some(Numbers { names, values, texts }) = numbers(data) {
                header["kind"] = "numbers".into();
                header["names"] = names.into();
                header["values"] =
                    values.into_iter().map(|v| if v.is_finite() { json!(v) } else { Value::Null }).collect();
                header["texts"] = Value::Object(texts.into_iter().collect());
            } else {
                header["kind"] = "tree".into();
                header["value"] = nerve_foxglove::json::values_up_to(data.as_ref(), LIST_LIMIT);
            }
            None
        }
    };
    Preview { header, body }
}

/// An image's layout and bytes, as its message gives them.
struct Image<'a> {
    width: usize,
    height: usize,
    /// Bytes from one row's start to the next's.
    step: usize,
    encoding: &'a str,
    data: &'a [u8],
}

/// The image `data` holds, if it is one.
fn image<'a>(data: &'a ArrayRef, parameters: &'a serde_json::Map<String, Value>) -> Option<Image<'a>> {
    if let Some(row) = data.as_struct_opt() {
        return (row.len() == 1).then(|| ros_image(row)).flatten();
    }
    if data.data_type() != &DataType::UInt8 || data.null_count() > 0 {
        return None;
    }
    let number = |key: &str| parameters.get(key).and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok());
    let (width, height) = (number("width")?, number("height")?);
    let encoding = parameters.get("encoding").and_then(Value::as_str).unwrap_or("rgb8");
    let data = data.as_primitive::<UInt8Type>().values();
    let step = width * bytes_per_pixel(encoding)?;
    Some(Image { width, height, step, encoding, data })
}

/// A `sensor_msgs/msg/Image` row.
fn ros_image(row: &StructArray) -> Option<Image<'_>> {
    let uint = |name: &str| points::uint(row, name);
    let encoding = row.column_by_name("encoding")?.as_string_opt::<i32>()?.value(0);
    let data = bytes_at(row.column_by_name("data")?, 0)?;
    Some(Image { width: uint("width")?, height: uint("height")?, step: uint("step")?, encoding, data })
}

/// The bytes of row `i` of a `uint8[]` column: binary, or a list of `uint8`.
pub(crate) fn bytes_at(column: &ArrayRef, i: usize) -> Option<&[u8]> {
    if column.is_null(i) {
        return None;
    }
    Some(match column.data_type() {
        DataType::Binary => column.as_binary::<i32>().value(i),
        DataType::LargeBinary => column.as_binary::<i64>().value(i),
        DataType::List(_) => {
            let list = column.as_list::<i32>();
            let (start, end) = (list.value_offsets()[i] as usize, list.value_offsets()[i + 1] as usize);
            &list.values().as_primitive_opt::<UInt8Type>()?.values()[start..end]
        }
        _ => return None,
    })
}

/// Bytes per pixel of the encodings the page draws.
fn bytes_per_pixel(encoding: &str) -> Option<usize> {
    Some(match encoding {
        "mono8" | "8UC1" => 1,
        "mono16" | "16UC1" => 2,
        "rgb8" | "bgr8" | "8UC3" => 3,
        "rgba8" | "bgra8" | "8UC4" | "32FC1" => 4,
        _ => return None,
    })
}

impl Image<'_> {
    /// The pixels as RGBA, sampled down to at most [`MAX_WIDTH`] wide: width, height, bytes.
    /// Depth images (`16UC1`, `32FC1`) are drawn grey, from their nearest to their farthest.
    fn rgba(&self) -> Result<(usize, usize, Vec<u8>), String> {
        let bpp = bytes_per_pixel(self.encoding)
            .ok_or_else(|| format!("an image in `{}`, an encoding the dashboard does not draw", self.encoding))?;
        let needed = self.step.checked_mul(self.height.saturating_sub(1)).and_then(|n| n.checked_add(self.width * bpp));
        if self.width == 0
            || self.height == 0
            || self.step < self.width * bpp
            || needed.is_none_or(|n| n > self.data.len())
        {
            return Err(format!(
                "an image of {}×{} {} with {} bytes of data and a step of {}: not a whole image",
                self.width,
                self.height,
                self.encoding,
                self.data.len(),
                self.step
            ));
        }
        let every = self.width.div_ceil(MAX_WIDTH);
        let (width, height) = (self.width.div_ceil(every), self.height.div_ceil(every));
        // One conversion per encoding, chosen once: not a comparison of names per pixel.
        let rgba = match self.encoding {
            "mono8" | "8UC1" => self.map(every, bpp, |p| [p[0], p[0], p[0], 255]),
            "rgb8" | "8UC3" => self.map(every, bpp, |p| [p[0], p[1], p[2], 255]),
            "bgr8" => self.map(every, bpp, |p| [p[2], p[1], p[0], 255]),
            "rgba8" | "8UC4" => self.map(every, bpp, |p| [p[0], p[1], p[2], p[3]]),
            "bgra8" => self.map(every, bpp, |p| [p[2], p[1], p[0], p[3]]),
            "32FC1" => self.grey(every, bpp, |p| f64::from(f32::from_le_bytes([p[0], p[1], p[2], p[3]]))),
            _ => self.grey(every, bpp, |p| f64::from(u16::from_le_bytes([p[0], p[1]]))),
        };
        Ok((width, height, rgba))
    }

    /// The pixels shown, one in `every` each way, row after row: each a slice of `bpp` bytes.
    fn pixels(&self, every: usize, bpp: usize) -> impl Iterator<Item = &[u8]> {
        let row_bytes = self.width * bpp;
        self.data
            .chunks(self.step)
            .step_by(every)
            .take(self.height.div_ceil(every))
            .flat_map(move |row| row[..row_bytes].chunks(bpp * every).map(move |p| &p[..bpp]))
    }

    /// The pixels shown, each turned into RGBA by `f`.
    fn map(&self, every: usize, bpp: usize, f: impl Fn(&[u8]) -> [u8; 4]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.width.div_ceil(every) * self.height.div_ceil(every) * 4);
        for pixel in self.pixels(every, bpp) {
            out.extend_from_slice(&f(pixel));
        }
        out
    }

    /// A depth image in grey, from its nearest pixel (black) to its farthest (white); pixels
    /// with no depth (NaN, infinite) black.
    fn grey(&self, every: usize, bpp: usize, depth: impl Fn(&[u8]) -> f64) -> Vec<u8> {
        let (near, far) = self
            .pixels(every, bpp)
            .map(&depth)
            .filter(|d| d.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(near, far), d| (near.min(d), far.max(d)));
        self.map(every, bpp, |p| {
            let d = depth(p);
            let grey = if d.is_finite() && far > near { (255.0 * (d - near) / (far - near)) as u8 } else { 0 };
            [grey, grey, grey, 255]
        })
    }
}

/// A message plotted: its numbers by name, and its strings (a frame id) shown beside them.
#[derive(Default)]
struct Numbers {
    names: Vec<String>,
    values: Vec<f64>,
    texts: Vec<(String, Value)>,
}

/// The numbers of a one-row message of few numbers, named: a plain array's as `[i]`, a
/// struct's by their dotted field paths (`position.x`).
fn numbers(data: &ArrayRef) -> Option<Numbers> {
    let mut found = Numbers::default();
    if data.as_struct_opt().is_some() {
        if data.len() != 1 {
            return None;
        }
        leaves(data.as_ref(), "", &mut found)?;
    } else {
        if data.is_empty() || data.len() > MAX_PLOTTED {
            return None;
        }
        for i in 0..data.len() {
            found.names.push(format!("[{i}]"));
            found.values.push(number(data.as_ref(), i)?);
        }
    }
    (!found.values.is_empty() && found.values.len() <= MAX_PLOTTED).then_some(found)
}

/// The numbers of row 0 of a struct whose fields are all numbers, strings or such structs.
/// Stamps (`builtin_interfaces` times) are left out: seconds since 1970 beside a position in
/// metres would flatten the plot, and the header carries the stamp already.
fn leaves(array: &dyn Array, path: &str, found: &mut Numbers) -> Option<()> {
    if let Some(row) = array.as_struct_opt() {
        for (field, column) in row.fields().iter().zip(row.columns()) {
            if points::is_time(field.data_type()) {
                continue;
            }
            let name = if path.is_empty() { field.name().clone() } else { format!("{path}.{}", field.name()) };
            leaves(column.as_ref(), &name, found)?;
            if found.values.len() > MAX_PLOTTED {
                return None;
            }
        }
        return Some(());
    }
    if let Some(text) = array.as_string_opt::<i32>() {
        found.texts.push((path.to_owned(), (!text.is_null(0)).then(|| text.value(0)).into()));
        return Some(());
    }
    found.names.push(path.to_owned());
    found.values.push(number(array, 0)?);
    Some(())
}

/// Value `i` of a numeric array as a float; `None` for other arrays and for nulls.
fn number(array: &dyn Array, i: usize) -> Option<f64> {
    if array.is_null(i) {
        return None;
    }
    Some(match array.data_type() {
        DataType::Int8 => f64::from(array.as_primitive::<Int8Type>().value(i)),
        DataType::Int16 => f64::from(array.as_primitive::<Int16Type>().value(i)),
        DataType::Int32 => f64::from(array.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => array.as_primitive::<Int64Type>().value(i) as f64,
        DataType::UInt8 => f64::from(array.as_primitive::<UInt8Type>().value(i)),
        DataType::UInt16 => f64::from(array.as_primitive::<UInt16Type>().value(i)),
        DataType::UInt32 => f64::from(array.as_primitive::<UInt32Type>().value(i)),
        DataType::UInt64 => array.as_primitive::<UInt64Type>().value(i) as f64,
        DataType::Float32 => f64::from(array.as_primitive::<Float32Type>().value(i)),
        DataType::Float64 => array.as_primitive::<Float64Type>().value(i),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{BinaryArray, Float64Array, StringArray, UInt8Array, UInt32Array};
    use arrow_schema::Field;
    use nerve_topic::{InputId, Metadata};

    use super::*;

    fn message(data: ArrayRef, parameters: Value) -> Message {
        let parameters = parameters.as_object().cloned().unwrap_or_default();
        Message::new(InputId::from("t"), Metadata { timestamp: 7, parameters, ..Metadata::default() }, data)
    }

    fn ros_image(width: u32, height: u32, encoding: &str, data: Vec<u8>) -> ArrayRef {
        let step = data.len() as u32 / height;
        let u = |v| Arc::new(UInt32Array::from(vec![v])) as ArrayRef;
        Arc::new(StructArray::from(vec![
            (Arc::new(Field::new("height", DataType::UInt32, false)), u(height)),
            (Arc::new(Field::new("width", DataType::UInt32, false)), u(width)),
            (
                Arc::new(Field::new("encoding", DataType::Utf8, false)),
                Arc::new(StringArray::from(vec![encoding])) as ArrayRef,
            ),
            (Arc::new(Field::new("step", DataType::UInt32, false)), u(step)),
            (
                Arc::new(Field::new("data", DataType::Binary, false)),
                Arc::new(BinaryArray::from(vec![data.as_slice()])) as ArrayRef,
            ),
        ]))
    }

    #[test]
    fn a_ros_image_in_bgr_is_sent_as_rgba() {
        let p = of(&message(ros_image(2, 1, "bgr8", vec![1, 2, 3, 4, 5, 6]), json!({})));
        assert_eq!(
            (p.header["kind"].as_str(), p.header["width"].as_u64(), p.header["height"].as_u64()),
            (Some("image"), Some(2), Some(1))
        );
        assert_eq!(p.body, Some(vec![3, 2, 1, 255, 6, 5, 4, 255]));
    }

    #[test]
    fn bytes_with_dora_parameters_are_an_image_and_a_short_one_is_refused() {
        let bytes = |n: u8| Arc::new(UInt8Array::from((0..n).collect::<Vec<_>>())) as ArrayRef;
        let p = of(&message(bytes(4), json!({"width": 2, "height": 2, "encoding": "mono8"})));
        assert_eq!(p.body, Some(vec![0, 0, 0, 255, 1, 1, 1, 255, 2, 2, 2, 255, 3, 3, 3, 255]));
        let p = of(&message(bytes(5), json!({"width": 2, "height": 2})));
        assert_eq!(p.header["kind"], "tree");
        assert!(p.header["note"].as_str().is_some_and(|n| n.contains("not a whole image")), "{}", p.header);
    }

    #[test]
    fn a_depth_image_is_grey_from_near_to_far() {
        let depths: Vec<u8> = [1.0f32, f32::NAN, 3.0, 2.0].iter().flat_map(|d| d.to_le_bytes()).collect();
        let p = of(&message(ros_image(2, 2, "32FC1", depths), json!({})));
        let greys: Option<Vec<u8>> = p.body.map(|px| px.chunks(4).map(|c| c[0]).collect());
        assert_eq!(greys, Some(vec![0, 0, 255, 127]));
    }

    #[test]
    fn a_wide_image_is_sampled_down() {
        let (w, h) = (MAX_WIDTH * 2 + 1, 3);
        let p = of(&message(ros_image(w as u32, h as u32, "mono8", vec![9; w * h]), json!({})));
        // One pixel in three, each way: 854 of 2561 wide.
        assert_eq!((p.header["width"].as_u64(), p.header["height"].as_u64()), (Some(854), Some(1)));
        assert_eq!(p.body.map(|px| px.len()), Some(854 * 4));
    }

    #[test]
    fn few_numbers_are_plotted_and_a_struct_by_field_paths() {
        let p = of(&message(Arc::new(Float64Array::from(vec![1.5, f64::NAN])), json!({})));
        assert_eq!((p.header["kind"].as_str(), &p.header["values"]), (Some("numbers"), &json!([1.5, null])));
        let point = StructArray::from(vec![
            (Arc::new(Field::new("x", DataType::Float64, false)), Arc::new(Float64Array::from(vec![1.0])) as ArrayRef),
            (Arc::new(Field::new("y", DataType::Float64, false)), Arc::new(Float64Array::from(vec![2.0])) as ArrayRef),
        ]);
        let pose = StructArray::from(vec![(
            Arc::new(Field::new("position", point.data_type().clone(), false)),
            Arc::new(point) as ArrayRef,
        )]);
        let p = of(&message(Arc::new(pose), json!({})));
        assert_eq!(
            (&p.header["names"], &p.header["values"]),
            (&json!(["position.x", "position.y"]), &json!([1.0, 2.0]))
        );
    }

    #[test]
    fn a_stamped_pose_is_plotted_without_its_stamp_and_with_its_frame_beside() {
        let column = |name: &str, a: ArrayRef| (Arc::new(Field::new(name, a.data_type().clone(), false)), a);
        let stamp = StructArray::from(vec![
            column("sec", Arc::new(arrow_array::Int32Array::from(vec![1_700_000_000]))),
            column("nanosec", Arc::new(UInt32Array::from(vec![5]))),
        ]);
        let header = StructArray::from(vec![
            column("stamp", Arc::new(stamp)),
            column("frame_id", Arc::new(StringArray::from(vec!["map"]))),
        ]);
        let position = StructArray::from(vec![column("x", Arc::new(Float64Array::from(vec![0.5])))]);
        let pose = StructArray::from(vec![column("position", Arc::new(position))]);
        let stamped = StructArray::from(vec![column("header", Arc::new(header)), column("pose", Arc::new(pose))]);
        let p = of(&message(Arc::new(stamped), json!({})));
        assert_eq!(
            (&p.header["kind"], &p.header["names"], &p.header["texts"]),
            (&json!("numbers"), &json!(["pose.position.x"]), &json!({"header.frame_id": "map"}))
        );
    }

    #[test]
    fn a_large_value_is_a_tree_with_its_lists_cut() {
        let p = of(&message(Arc::new(Float64Array::from(vec![0.5; 1000])), json!({"frame": "map"})));
        assert_eq!(p.header["kind"], "tree");
        let items = p.header["value"].as_array().map(Vec::len);
        assert_eq!((items, p.header["value"][LIST_LIMIT].as_str()), (Some(LIST_LIMIT + 1), Some("… 936 more")));
        assert_eq!(p.header["parameters"]["frame"], "map");
    }
}
