"""Starts after tests/nodes/tf_broadcaster.py and looks transforms up; prints one JSON object.

Usage: tf_listener.py DOMAIN
"""

import json
import sys

import nerve


def error(call) -> str:
    try:
        call()
    except nerve.TransformError as e:
        return str(e)
    return "no error"


def main() -> None:
    buffer = nerve.TransformBuffer(domain=int(sys.argv[1]))
    latest = buffer.lookup("world", "camera", timeout=30).stamp
    # Between two stamps of the 20 ms grid, a little ahead: the lookup waits for them.
    when = latest + 5 * 20_000_000 + 7_000_000
    camera = buffer.lookup("world", "camera", time=when, timeout=10)
    report = {
        "time": when,
        "stamp": camera.stamp,
        "translation": camera.translation.tolist(),
        "rotation": camera.rotation.tolist(),
        "camera_origin": camera.apply([0.0, 0.0, 0.0]).tolist(),
        "frames": buffer.frames(),
        "unknown": error(lambda: buffer.lookup("world", "nowhere")),
        "disconnected": error(lambda: buffer.lookup("camera", "lander")),
        "past": error(lambda: buffer.lookup("world", "camera", time=when - 60 * 10**9)),
        "future": error(lambda: buffer.lookup("world", "camera", time=when + 3600 * 10**9)),
    }
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
