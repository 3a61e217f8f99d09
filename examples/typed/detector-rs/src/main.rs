//! The detector of `detector.py`, in Rust: finds the bright square in each
//! `sensor_msgs/msg/Image` and sends where it is as a `detection_msgs/msg/DetectionArray`.

mod msgs {
    include!(concat!(env!("OUT_DIR"), "/msgs.rs"));
}

use msgs::detection_msgs::msg::{Detection, DetectionArray};
use nerve_node::msg::Message as _;
use nerve_node::msg::sensor_msgs::msg::Image;
use nerve_node::{Event, Node, Parameters};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (node, mut events) = Node::init_from_env()?;
    while let Some(event) = events.recv() {
        match event {
            Event::Input(message) => {
                // `image.data` views the camera's block in shared memory: no copy on the way in.
                let image = Image::from_arrow(&message.data)?;
                let detections = bright_square(&image)?.into_iter().collect();
                let found = DetectionArray { header: image.header, detections };
                node.send_message("detections", &Parameters::new(), &found)?;
            }
            Event::Stop => break,
            _ => {}
        }
    }
    Ok(())
}

/// The bounding box of the pixels whose red channel is over 128, if any.
fn bright_square(image: &Image) -> Result<Option<Detection>, String> {
    if image.encoding != "rgb8" {
        return Err(format!("expected an rgb8 image, got {}", image.encoding));
    }
    let (width, step) = (image.width as usize, image.step as usize);
    let mut found: Option<(usize, usize, usize, usize)> = None;
    for y in 0..image.height as usize {
        let row = image.data.get(y * step..y * step + width * 3).ok_or_else(|| {
            format!("{} bytes of data are too few for {}×{} at step {step}", image.data.len(), image.height, width)
        })?;
        for (x, _) in row.chunks_exact(3).enumerate().filter(|(_, rgb)| rgb[0] > 128) {
            let (x0, y0, x1, y1) = found.unwrap_or((x, y, x, y));
            found = Some((x0.min(x), y0.min(y), x1.max(x), y1.max(y)));
        }
    }
    let pixels = |n: usize| u32::try_from(n).map_err(|e| e.to_string());
    found
        .map(|(x0, y0, x1, y1)| {
            Ok(Detection {
                label: "square".to_owned(),
                score: 1.0,
                x: pixels(x0)?,
                y: pixels(y0)?,
                width: pixels(x1 - x0 + 1)?,
                height: pixels(y1 - y0 + 1)?,
            })
        })
        .transpose()
}
