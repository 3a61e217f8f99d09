"""Typed messages (the `types` scenario), nerve only.

Latency: a 1080p rgb8 frame sent as a ``sensor_msgs/msg/Image`` on a typed output, and the same
bytes sent as a plain numpy array, in the same run (two implementations that take turns, as
every implementation of a case does); each consumer reads the pixels back as a numpy view and
counts the messages whose view was the received shared memory itself. Typing should add no
copy: whatever the typed row costs beyond the plain one is the Python of ``nerve.msg``.

CDR: ``nerve.msg.to_cdr`` / ``from_cdr`` beside real rclpy's ``serialize_message`` /
``deserialize_message`` of the same message, each in a process of its own
(benches/nodes/types_node.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benches.impl_nerve import failure, run_dataflow
from benches.model import WARMUP, Case, Samples, read_stamp_lines

NODE = Path(__file__).resolve().parent / "nodes" / "types_node.py"
WIDTH = 1920  # the latency case's frames: rgb8, this wide
#: How long each of a codec case's encode and decode runs at least, in seconds.
CODEC_SECONDS = 1.0


class Latency:
    """A producer → consumer dataflow sending the frame typed (`typed`) or as bytes (`plain`)."""

    def __init__(self, how: str, name: str) -> None:
        self.how, self.NAME = how, name

    def supports(self, case: Case) -> bool:
        return case.scenario == "types" and not case.codec

    def dataflow(self, case: Case, folder: Path) -> str:
        if case.size % (WIDTH * 3):
            raise ValueError(f"an rgb8 frame {WIDTH} wide has a multiple of {WIDTH * 3} bytes, not {case.size}")
        height = case.size // (WIDTH * 3)
        args = (self.how, WIDTH, height, case.count, case.rate_hz, folder / "p0.json", WARMUP)
        producer = f"  - id: p0\n    path: {NODE}\n    args: producer {' '.join(str(a) for a in args)}\n"
        producer += "    outputs: [data]\n"
        consumer = f"  - id: c0\n    path: {NODE}\n    args: consumer {self.how} {folder / 'c0.txt'} {WARMUP}\n"
        consumer += "    inputs: {in0: p0/data}\n"
        if self.how == "typed":
            producer += f"    output_types: {{data: {case.message}}}\n"
            consumer += f"    input_types: {{in0: {case.message}}}\n"
        return "nodes:\n" + producer + consumer

    def run(self, case: Case, workdir: Path) -> Samples:
        folder = workdir / f"types-{self.how}--{case.key}"
        samples = Samples(self.NAME, case)
        samples.error = failure(run_dataflow(folder, self.dataflow(case, folder)))
        if samples.error:
            return samples
        read_stamp_lines(folder / "c0.txt", 0, samples)
        producer = json.loads((folder / "p0.json").read_text())
        consumer = json.loads((folder / "c0.txt.json").read_text())
        samples.take_node_stats(producer, consumer)
        samples.views = consumer["views"]
        samples.steps_us = {"send": producer["send_us_p50"], "read": consumer["read_us_p50"]}
        return samples


class Codec:
    """CDR encode and decode of the case's message in one process: `nerve` or `rclpy`."""

    def __init__(self, impl: str, name: str) -> None:
        self.impl, self.NAME = impl, name

    def supports(self, case: Case) -> bool:
        return case.scenario == "types" and case.codec

    def run(self, case: Case, workdir: Path) -> Samples:
        folder = workdir / f"types-{self.impl}--{case.key}"
        folder.mkdir(parents=True, exist_ok=True)
        out = folder / "cdr.json"
        samples = Samples(self.NAME, case)
        args = [self.impl, case.message, case.size, case.count, CODEC_SECONDS, out]
        try:
            subprocess.run(
                [sys.executable, str(NODE), "codec", *(str(a) for a in args)],
                check=True,
                capture_output=True,
                text=True,
                timeout=600,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
            detail = getattr(e, "stderr", None) or str(e)
            samples.error = f"failed: {str(detail).strip().splitlines()[-1:]}"
            return samples
        data = json.loads(out.read_text())
        if data.get("error"):
            samples.error = data["error"]
            return samples
        samples.cdr = data
        samples.note = data.get("note")
        return samples


IMPLEMENTATIONS = (
    Latency("typed", "nerve typed (Image)"),
    Latency("plain", "nerve plain (uint8 array)"),
    Codec("nerve", "nerve.msg to_cdr, from_cdr"),
    Codec("rclpy", "rclpy serialize, deserialize"),
)
