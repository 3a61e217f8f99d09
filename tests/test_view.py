"""`nerve view`, the live dashboard, in a real browser (Debian's chromium, driven by Playwright).

A dataflow with a typed camera, a pose, a transform broadcaster and a mapper (a point cloud, a
path, a stamped pose) runs with ``--view``; the page must draw every node with a rate on every
edge, draw the camera's image, the cloud's and the path's points, and plot the poses when their
edges are clicked, show the transform tree and a node's log, turn a killed node to its failed
state, and log no console error. Screenshots are kept in ``target/artifacts``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nerve
import numpy as np
import pytest
from conftest import REPO, Dataflows, unique_topic
from playwright.sync_api import ConsoleMessage, sync_playwright
from websockets.sync.client import connect

CAMERA = """
    import numpy as np
    from nerve import Node
    from nerve.msg import sensor_msgs

    node = Node()
    frame = np.zeros((48, 64, 3), dtype=np.uint8)
    frame[:, :, 0] = 200  # red everywhere
    frame[:, :, 2] = np.arange(64, dtype=np.uint8)  # blue grows to the right
    for event in node:
        if event["type"] == "INPUT":
            image = sensor_msgs.Image(height=48, width=64, encoding="rgb8", step=64 * 3, data=frame.reshape(-1))
            node.send_output("image", image)
"""

POSE = """
    import itertools
    import pyarrow as pa
    import nerve
    from nerve import Node

    node = Node()
    static = nerve.StaticTransformBroadcaster()
    static.send("base", "camera", [0.2, 0.0, 0.5], [0.0, 0.0, 0.0, 1.0])
    moving = nerve.TransformBroadcaster()
    steps = itertools.count()
    for event in node:
        if event["type"] == "INPUT":
            i = next(steps)
            moving.send("world", "base", [0.01 * i, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0])
            node.send_output("pose", pa.array([0.01 * i, 1.0]))
"""

MAPPER = """
    import numpy as np
    from nerve import Node
    from nerve.msg import geometry_msgs, nav_msgs, sensor_msgs

    # The outline of a 2 m square around (5, 5): nothing at its centre, nor at the frame's
    # origin, which is off the drawn area. The left and bottom sides at z = 0, the others at 1.
    side = np.linspace(4.0, 6.0, 100, dtype=np.float32)
    low, high = np.full(100, 4.0, np.float32), np.full(100, 6.0, np.float32)
    zeros, ones = np.zeros(100, np.float32), np.ones(100, np.float32)
    points = np.concatenate([
        np.stack([low, side, zeros], axis=1), np.stack([side, low, zeros], axis=1),
        np.stack([high, side, ones], axis=1), np.stack([side, high, ones], axis=1),
    ])
    fields = [{"name": n, "offset": 4 * i, "datatype": 7, "count": 1} for i, n in enumerate("xyz")]
    header = {"stamp": {"sec": 1_700_000_000, "nanosec": 0}, "frame_id": "map"}
    cloud = sensor_msgs.PointCloud2(
        header=header, height=1, width=len(points), fields=fields, is_bigendian=False,
        point_step=12, row_step=12 * len(points), data=points.reshape(-1).view(np.uint8), is_dense=True,
    )

    def stamped(i):
        return {"header": header, "pose": {"position": {"x": 0.1 * i, "y": 0.05 * i, "z": 0.0},
                                           "orientation": {"w": 1.0}}}

    node = Node()
    for event in node:
        if event["type"] == "INPUT":
            node.send_output("cloud", cloud)
            node.send_output("path", nav_msgs.Path(header=header, poses=[stamped(i) for i in range(20)]))
            node.send_output("pose", geometry_msgs.PoseStamped(**stamped(19)))
"""

SINK = """
    from nerve import Node

    node = Node()
    for event in node:
        if event["type"] == "INPUT" and event["id"] == "image":
            print("image", flush=True)
"""

DATAFLOW = """
    share: [tf, tf_static]
    nodes:
      - id: camera
        path: camera.py
        inputs:
          tick: dora/timer/hz/30
        outputs: [image]
        output_types:
          image: sensor_msgs/msg/Image
      - id: pose
        path: pose.py
        inputs:
          tick: dora/timer/hz/20
        outputs: [pose]
      - id: mapper
        path: mapper.py
        inputs:
          tick: dora/timer/hz/10
        outputs: [cloud, path, {id: pose, topic: robot/pose}]
        output_types:
          cloud: sensor_msgs/msg/PointCloud2
          path: nav_msgs/msg/Path
          pose: geometry_msgs/msg/PoseStamped
      - id: sink
        path: sink.py
        inputs:
          image: camera/image
          pose: pose/pose
          cloud: mapper/cloud
          path: mapper/path
          stamped: mapper/pose
"""


@pytest.fixture
def dashboard(dataflows: Dataflows) -> Iterator[tuple[str, str]]:
    """The dataflow above run with ``--view=0``; yields the dashboard's URL and the run's name."""
    name = f"view{os.getpid()}"
    path = dataflows.write(DATAFLOW, {"camera.py": CAMERA, "pose.py": POSE, "mapper.py": MAPPER, "sink.py": SINK})
    proc = dataflows.start(path, "--name", name, "--view=0")
    assert proc.stderr is not None
    url = None
    for line in proc.stderr:
        if m := re.search(r"dashboard on (http://\S+)", line):
            url = m.group(1)
            break
    assert url, proc.communicate()
    try:
        yield url, name
    finally:
        out, err = dataflows.interrupt(proc)
        # The killed node fails the run; everything else ended cleanly.
        assert "sink" in err, out + err


def graph(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/api/graph", timeout=30) as r:
        return json.load(r)


def test_the_dashboard_draws_the_running_graph_its_channels_transforms_and_a_killed_node(
    dashboard: tuple[str, str], tmp_path: Path
) -> None:
    url, name = dashboard
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is missing (scripts/test.sh installs it)"
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})

        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                errors.append(message.text)

        page.on("console", on_console)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("response", lambda r: r.status >= 400 and errors.append(f"{r.status} {r.url}"))
        page.goto(url)

        # Every node, and a rate and a latency on every edge (counters read once a second).
        for node in ("camera", "pose", "mapper", "sink"):
            page.wait_for_selector(f'[data-node="{node}"].ok', timeout=60_000)
        page.wait_for_function(
            """() => {
                const edges = [...document.querySelectorAll('.edge-label')];
                return edges.length === 5 && edges.every(e => Number(e.dataset.rate) > 0)
                    && edges.every(e => /[µm]s/.test(e.querySelector('.stats').textContent));
            }""",
            timeout=60_000,
        )
        assert page.locator('.edge[data-edge="camera/image->sink/image"]').count() == 1

        # The image channel: drawn as an image, the camera's pixels.
        page.locator('[data-edge="camera/image->sink/image"] .name').click()
        page.wait_for_function("() => Number(document.getElementById('channel-image').dataset.frames) >= 3")
        pixel = page.evaluate(
            """() => {
                const c = document.getElementById('channel-image');
                return [c.width, c.height, ...c.getContext('2d').getImageData(10, 5, 1, 1).data];
            }"""
        )
        assert pixel == [64, 48, 200, 0, 10, 255]
        assert page.locator("#channel-title").text_content() == f"~{name}/camera/image"
        page.screenshot(path=str(artifact("nerve-view.png")))

        # The pose: a few numbers, plotted.
        page.locator('[data-edge="pose/pose->sink/pose"] .name').click()
        page.wait_for_function("() => Number(document.getElementById('channel-plot').dataset.points) >= 5")
        assert page.locator("#channel-legend span").count() == 2

        # The cloud: its points drawn from above, coloured by height, nothing at the centre.
        page.locator('[data-edge="mapper/cloud->sink/cloud"] .name').click()
        page.wait_for_function("() => Number(document.getElementById('channel-points').dataset.frames) >= 2")
        drawn = page.evaluate(
            """() => {
                const c = document.getElementById('channel-points');
                const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                let low = 0, high = 0;
                for (let i = 0; i < px.length; i += 4) {
                    if (px[i + 2] > 200 && px[i] < 50) low++;
                    if (px[i] > 200 && px[i + 2] < 50) high++;
                }
                const centre = [...c.getContext('2d').getImageData(c.width / 2, c.height / 2, 1, 1).data];
                return {shape: c.dataset.shape, points: c.dataset.points, low, high, centre};
            }"""
        )
        assert (drawn["shape"], drawn["points"], drawn["centre"]) == ("cloud", "400", [255, 255, 255, 255]), drawn
        # 200 points at each height, each drawn 2 by 2 (where two overlap, fewer pixels).
        assert drawn["low"] >= 400 and drawn["high"] >= 400, drawn
        assert "400 points in map" in page.locator("#channel-legend").text_content()
        page.screenshot(path=str(artifact("nerve-view-cloud.png")))

        # The path: its poses as a line, ending where the robot is.
        page.locator('[data-edge="mapper/path->sink/path"] .name').click()
        page.wait_for_function("() => document.getElementById('channel-points').dataset.shape === 'path'")
        assert page.locator("#channel-points").get_attribute("data-points") == "20"
        assert "20 poses in map" in page.locator("#channel-legend").text_content()

        # A stamped pose, an output published on a topic of its own name: its edge opens that
        # topic; its position and orientation plotted, its frame beside, its stamp not.
        page.locator('[data-edge="mapper/pose->sink/stamped"] .name').click()
        page.wait_for_function(f"() => document.getElementById('channel-title').textContent === '~{name}/robot/pose'")
        page.wait_for_function("() => Number(document.getElementById('channel-plot').dataset.points) >= 2")
        legend = page.locator("#channel-legend").text_content()
        assert "pose.position.x = 1.9" in legend and "header.frame_id: map" in legend, legend
        assert "stamp" not in legend, legend

        # The transform tree, while its panel is open.
        page.locator('#panel nav button[data-tab="tf"]').click()
        page.wait_for_selector('#tf-tree li[data-frame="world"] li[data-frame="base"] li[data-frame="camera"]')
        assert "static" in page.locator('#tf-tree li[data-frame="camera"]').text_content()

        # A node's log tail.
        page.locator('[data-node="sink"] rect').click()
        page.wait_for_function("() => document.getElementById('node-log').textContent.includes('image')")

        # A killed node turns to its failed state.
        sink = next(n for n in graph(url)["runs"][0]["nodes"] if n["id"] == "sink")
        os.kill(sink["pid"], signal.SIGKILL)
        page.wait_for_selector('[data-node="sink"].bad', timeout=60_000)
        check_refuses_other_origins(url)
        page.screenshot(path=str(tmp_path / "killed.png"))
        browser.close()
    assert errors == []


def artifact(name: str) -> Path:
    """Where a test keeps a file for people to look at after CI."""
    folder = REPO / "target" / "artifacts"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def check_refuses_other_origins(url: str) -> None:
    """A page of another site, or a name rebound to loopback, reads nothing."""
    port = url.rsplit(":", 1)[1]
    for headers in ({"Origin": "http://evil.example"}, {"Host": f"evil.example:{port}"}):
        request = urllib.request.Request(f"{url}/api/graph", headers=headers)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 403


def test_a_channel_takes_a_page_s_keepalives_while_it_waits(dashboard: tuple[str, str]) -> None:
    """A client's pings while a channel waits for its next message are keepalives, not the
    page leaving (Python's `websockets` sends one every 20 s): answered, and the message still
    comes. Nothing is published before the ping is answered, so the ping lands in the wait."""
    url, _ = dashboard
    topic = unique_topic("view/keepalive")
    publisher = nerve.Publisher(topic)
    address = f"{url.replace('http://', 'ws://', 1)}/api/channel?key={urllib.parse.quote(topic, safe='')}"
    with connect(address, ping_interval=None, open_timeout=30) as page:
        page.send("next")
        assert page.ping().wait(timeout=30), "the ping was not answered"
        publisher.send(np.array([1.5, 2.5]))
        header = json.loads(page.recv(timeout=30))
        assert (header["kind"], header["values"]) == ("numbers", [1.5, 2.5]), header
