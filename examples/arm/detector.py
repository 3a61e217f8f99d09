"""Finds the ArUco tags in each camera frame and where they are in the world: the image gives
each tag's corners (OpenCV's ArUco detector), the depth image how far each of them is, and the
camera's intrinsics (`camera_info`) and mounting (the cell's calibration, `scene.py`) put them
in the world."""

import cv2
import nerve
import numpy as np
import scene
from nerve.msg import arm_msgs, sensor_msgs
from pairing import Pairing
from spatial import pose_message, stamp_ns

INSIDE = 0.7  # where depth is sampled, from the tag's centre towards each corner


class TagFinder:
    """Tag poses in the world from one camera's frames."""

    def __init__(self, camera_in_world: np.ndarray):
        self.camera_in_world = camera_in_world  # 4x4: optical frame to world
        dictionary = cv2.aruco.getPredefinedDictionary(scene.TAG_DICTIONARY)
        self.detector = cv2.aruco.ArucoDetector(dictionary, cv2.aruco.DetectorParameters())

    def find(self, rgb: np.ndarray, depth: np.ndarray, k: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """Every tag seen: (id, 4x4 pose of the tag in the world, its 4 image corners)."""
        corners, ids, _ = self.detector.detectMarkers(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))
        if ids is None:
            return []
        found = []
        for tag_corners, tag_id in zip(corners, ids.ravel(), strict=True):
            pixels = tag_corners.reshape(4, 2)
            pose = self._pose_in_camera(pixels, depth, k)
            if pose is not None:
                found.append((int(tag_id), self.camera_in_world @ pose, pixels))
        return found

    @staticmethod
    def _pose_in_camera(pixels: np.ndarray, depth: np.ndarray, k: np.ndarray) -> np.ndarray | None:
        """The tag's pose in the optical frame, from four points of its face in 3-D: the depth
        under each corner, a little inside it, so the sample is on the tag and not past its
        edge. The corners alone (a planar PnP) confuse a small tag seen face-on with its mirror
        image tilted the other way; the depth does not. None where depth is missing."""
        centre = pixels.mean(axis=0)
        inner = centre + INSIDE * (pixels - centre)
        rows, cols = np.round(inner[:, 1]).astype(int), np.round(inner[:, 0]).astype(int)
        if rows.min() < 0 or cols.min() < 0 or rows.max() >= depth.shape[0] or cols.max() >= depth.shape[1]:
            return None
        z = depth[rows, cols].astype(np.float64)
        if not np.all(np.isfinite(z) & (z > 0)):
            return None
        points = (np.linalg.solve(k, np.column_stack([inner, np.ones(4)]).T) * z).T
        top_left, top_right, bottom_right, bottom_left = points
        x = (top_right - top_left) + (bottom_right - bottom_left)
        y = (top_left - bottom_left) + (top_right - bottom_right)
        z_axis = np.cross(x, y)
        pose = np.eye(4)
        pose[:3, 0] = x / np.linalg.norm(x)
        pose[:3, 2] = z_axis / np.linalg.norm(z_axis)
        pose[:3, 1] = np.cross(pose[:3, 2], pose[:3, 0])
        pose[:3, 3] = points.mean(axis=0)
        return pose


def tag_message(tag_id: int, pose: np.ndarray, corners: np.ndarray) -> arm_msgs.Tag:
    return arm_msgs.Tag(id=tag_id, pose=pose_message(pose), corners=corners.astype(np.float32).reshape(-1))


def main() -> None:
    node = nerve.Node()
    frames = Pairing("image", "depth", "camera_info")
    finder = TagFinder(scene.camera_in_world())
    # How long each camera image took from the simulator to this node (DORA's figure for its
    # arm): the image's send time, which nerve stamps, to the image in hand.
    image_ages_us, image_mib = [], 0.0
    for event in node:
        if event["type"] == "STOP":
            break
        if event["type"] != "INPUT":
            continue
        if event["id"] == "image":
            image_ages_us.append((node.timestamp() - event["metadata"]["timestamp"]) / 1000)
        message_type = sensor_msgs.CameraInfo if event["id"] == "camera_info" else sensor_msgs.Image
        message = message_type.from_arrow(event["value"])
        frame = frames.add(event["id"], stamp_ns(message.header), message)
        if frame is None:
            continue
        image, depth, info = frame["image"], frame["depth"], frame["camera_info"]
        rgb = image.data.reshape(image.height, image.width, 3)
        image_mib = rgb.nbytes / 2**20
        metres = depth.data.view(np.float32).reshape(depth.height, depth.width)
        found = finder.find(rgb, metres, info.k.reshape(3, 3))
        tags = [tag_message(tag_id, pose, corners) for tag_id, pose, corners in found]
        node.send_output("tags", arm_msgs.TagArray(header=image.header, tags=tags))
    if image_ages_us:
        ages = np.array(image_ages_us)
        print(
            f"detector: {ages.size} images of {image_mib:.1f} MiB from the simulator, "
            f"latency mean {ages.mean():.0f} µs, max {ages.max():.0f} µs",
            flush=True,
        )


if __name__ == "__main__":
    main()
