"""The synthetic world of the SLAM example, what its lidar sees of it, and where its robot is.

A room of 12 m x 8 m with 2 m walls and five pillars, no ceiling. The robot drives an ellipse
around the two middle pillars; its lidar (16 rings from -15 to +15 degrees, one beam per degree
of azimuth, like a Velodyne VLP-16) sits 0.4 m above the floor. Both the mapper and the monitor
import this module: the monitor checks the map against the same walls the mapper scanned.
"""

import math

import numpy as np

#: The room's walls, as segments (x0, y0, x1, y1) on the floor, and how tall they are (m).
HALF_X, HALF_Y, WALL_HEIGHT = 6.0, 4.0, 2.0
WALLS = np.array(
    [
        (-HALF_X, -HALF_Y, HALF_X, -HALF_Y),
        (HALF_X, -HALF_Y, HALF_X, HALF_Y),
        (HALF_X, HALF_Y, -HALF_X, HALF_Y),
        (-HALF_X, HALF_Y, -HALF_X, -HALF_Y),
    ]
)
#: Pillars as (x, y, radius), as tall as the walls.
PILLARS = np.array([(-1.5, 0.0, 0.3), (1.5, 0.0, 0.3), (4.6, 2.8, 0.25), (-4.6, -2.8, 0.25), (0.0, 3.3, 0.2)])

#: The lidar: its height above the floor (it is the `base -> lidar` transform), its rings, its
#: beams per ring, its range, and the noise of a range (m, one standard deviation).
LIDAR_HEIGHT = 0.4
RINGS = np.radians(np.linspace(-15.0, 15.0, 16))
AZIMUTHS = np.radians(np.arange(360.0))
MAX_RANGE = 30.0
RANGE_NOISE = 0.01

#: The loop: an ellipse of these half-axes (m), driven at this angular rate (rad/s): a lap every 25 s.
LOOP_A, LOOP_B, LOOP_RATE = 3.5, 2.2, 2 * math.pi / 25
#: The fastest the robot goes along the loop (at the ends of its short axis), in m/s.
MAX_SPEED = LOOP_A * LOOP_RATE


def robot_pose(seconds: float) -> tuple[float, float, float]:
    """Where the robot is `seconds` after it started: x, y (m) and heading (rad), facing along
    the loop."""
    angle = LOOP_RATE * seconds
    heading = math.atan2(LOOP_B * math.cos(angle), -LOOP_A * math.sin(angle))
    return LOOP_A * math.cos(angle), LOOP_B * math.sin(angle), heading


def yaw_quaternion(yaw: float) -> tuple[float, float, float, float]:
    """A quaternion (x, y, z, w) turning `yaw` radians about z."""
    return 0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2)


def scan(x: float, y: float, heading: float, rng: np.random.Generator) -> np.ndarray:
    """One sweep of the lidar of a robot at (x, y) facing `heading`: the points its beams hit,
    N x 3 float32 in the lidar's frame, with `rng`'s noise on every range. A beam hits the
    nearest wall or pillar in its direction unless it passes over it (rising beams) or reaches
    the floor first (falling ones); beams that rise over the walls hit nothing."""
    across = vertical_hits(x, y, heading + AZIMUTHS)  # horizontal distance per azimuth
    slope = np.tan(RINGS)[:, None]  # rings x azimuths from here on
    z_at_wall = LIDAR_HEIGHT + across * slope
    floor = np.where(slope < 0, LIDAR_HEIGHT / np.maximum(-slope, 1e-9), np.inf)
    distance = np.where(floor < across, floor, np.where(z_at_wall <= WALL_HEIGHT, across, np.inf))
    hit = distance * np.sqrt(1 + slope**2) <= MAX_RANGE
    rings, azimuths = np.nonzero(hit)
    d = distance[rings, azimuths]
    # Range noise moves a point along its beam.
    stretch = 1 + rng.normal(0.0, RANGE_NOISE, d.shape) / (d * np.sqrt(1 + slope[rings, 0] ** 2))
    points = np.stack([d * np.cos(AZIMUTHS[azimuths]), d * np.sin(AZIMUTHS[azimuths]), d * slope[rings, 0]], axis=1)
    return (points * stretch[:, None]).astype(np.float32)


def vertical_hits(x: float, y: float, directions: np.ndarray) -> np.ndarray:
    """For each horizontal direction (rad), the distance along the floor from (x, y) to the
    first wall or pillar."""
    dx, dy = np.cos(directions)[:, None], np.sin(directions)[:, None]
    # Walls: the ray (x, y) + t (dx, dy) meets the segment p + s (q - p) with t > 0, 0 <= s <= 1.
    px, py = WALLS[:, 0], WALLS[:, 1]
    ex, ey = WALLS[:, 2] - px, WALLS[:, 3] - py
    cross = dx * ey - dy * ex
    with np.errstate(divide="ignore", invalid="ignore"):
        t = ((px - x) * ey - (py - y) * ex) / cross
        s = ((px - x) * dy - (py - y) * dx) / cross
    walls = np.where((t > 0) & (s >= 0) & (s <= 1), t, np.inf).min(axis=1)
    # Pillars: the nearer root of |(x, y) + t (dx, dy) - c| = r.
    cx, cy, r = PILLARS[:, 0] - x, PILLARS[:, 1] - y, PILLARS[:, 2]
    along = dx * cx + dy * cy
    gap = along**2 - (cx**2 + cy**2 - r**2)
    with np.errstate(invalid="ignore"):
        t = along - np.sqrt(gap)
    pillars = np.where((gap >= 0) & (t > 0), t, np.inf).min(axis=1)
    return np.minimum(walls, pillars)


def lidar_to_map(points: np.ndarray, x: float, y: float, heading: float) -> np.ndarray:
    """`points` of the lidar's frame in the map's, for a robot at (x, y) facing `heading`."""
    c, s = math.cos(heading), math.sin(heading)
    px, py = points[:, 0], points[:, 1]
    moved = np.stack([x + c * px - s * py, y + s * px + c * py, points[:, 2] + LIDAR_HEIGHT], axis=1)
    return moved.astype(np.float32)


def distance_to_surfaces(points: np.ndarray) -> np.ndarray:
    """How far each map point (N x 3) is from the nearest surface: the floor, a wall or a pillar."""
    xy, z = points[:, :2].astype(np.float64), points[:, 2].astype(np.float64)
    above = np.maximum(z - WALL_HEIGHT, 0.0)  # past the top of walls and pillars
    p, e = WALLS[:, :2], WALLS[:, 2:] - WALLS[:, :2]
    s = np.clip(((xy[:, None, :] - p) * e).sum(axis=2) / (e**2).sum(axis=1), 0, 1)
    walls = np.linalg.norm(xy[:, None, :] - (p + s[..., None] * e), axis=2).min(axis=1)
    pillars = np.abs(np.linalg.norm(xy[:, None, :] - PILLARS[:, :2], axis=2) - PILLARS[:, 2]).min(axis=1)
    return np.minimum(np.abs(z), np.hypot(np.minimum(walls, pillars), above))
