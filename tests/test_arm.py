"""examples/arm, DORA's robot-arm case study in simulation: the arm picks the object named, and
the perception under it finds, locates and reads what the camera sees."""

import os
import re
import subprocess
import tempfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import REPO, nerve_cmd

ARM = REPO / "examples" / "arm"


def run_example(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The README's command, `PICK=… nerve run dataflow.yml`, from the example's folder."""
    return subprocess.run(
        nerve_cmd("run", "dataflow.yml", "--log-dir", str(tmp_path)),
        cwd=ARM,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.timeout(700)
@pytest.mark.parametrize(("pick", "shuffle"), [("apple", ""), ("lemon", "7")])
def test_the_arm_picks_the_named_object_and_only_it(tmp_path, pick, shuffle):
    result = run_example(tmp_path, PICK=pick, SHUFFLE=shuffle)
    assert result.returncode == 0, result.stdout + result.stderr
    verdicts = re.findall(r"\[sim\] sim: (picked|FAILED)(.*)", result.stdout)
    assert len(verdicts) == 1 and verdicts[0][0] == "picked", result.stdout
    picked = re.fullmatch(r" (\w+): held ([\d.]+) cm above the table .*; (.*) still on the table", verdicts[0][1])
    assert picked, verdicts
    others = {"APPLE", "BANANA", "LEMON", "ORANGE"} - {pick.upper()}
    assert picked[1] == pick.upper() and set(picked[3].split(", ")) == others, verdicts
    assert float(picked[2]) >= 5.0
    assert f"[planner] planner: {pick.upper()} is tag " in result.stdout, result.stdout


@pytest.mark.timeout(700)
def test_an_object_not_on_the_table_fails_the_run_saying_what_was_read(tmp_path):
    result = run_example(tmp_path, PICK="kiwi")
    assert result.returncode != 0, result.stdout
    said = "planner: no object is labelled KIWI; the labels read are APPLE, BANANA, LEMON, ORANGE"
    assert said in result.stdout, result.stdout
    assert "sim: picked" not in result.stdout


@pytest.fixture(scope="module")
def arm(monkeypatch_module):
    """The example's modules, imported as its nodes import them (their folder first on the
    path, its message types found)."""
    monkeypatch_module.setenv("NERVE_TYPES_PATH", str(ARM / "types"))
    monkeypatch_module.syspath_prepend(str(ARM))
    import detector
    import reader
    import scene
    import world
    import yolo

    return SimpleNamespace(scene=scene, world=world, detector=detector, reader=reader, yolo=yolo)


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.fixture(scope="module")
def frame(arm):
    """A rendered camera frame of a shuffled table (objects turned), and the truth behind it."""
    placements = arm.scene.placements(11)
    with tempfile.TemporaryDirectory() as workdir:
        cell = arm.world.World(placements, Path(workdir))
        cell.step(10)
        rgb, depth = cell.render()
        centres = {p.label: cell.object_position(p.label) for p in placements}
    return placements, rgb, depth, centres


def tags_in(arm, rgb: np.ndarray, depth: np.ndarray) -> list:
    """The detector's finds in a frame."""
    return arm.detector.TagFinder(arm.scene.camera_in_world()).find(rgb, depth, arm.scene.camera_matrix())


def test_the_detector_locates_every_tag_to_a_few_millimetres(arm, frame):
    scene = arm.scene
    placements, rgb, depth, centres = frame
    found = tags_in(arm, rgb, depth)
    by_tag = {p.tag_id: p for p in placements}
    assert sorted(tag_id for tag_id, _, _ in found) == sorted(by_tag)
    for tag_id, pose, _ in found:
        placement = by_tag[tag_id]
        centre = pose[:3, 3] + pose[:3, :3] @ [scene.TAG_TO_CENTRE, 0, -scene.BOX_HEIGHT / 2]
        assert np.linalg.norm(centre - centres[placement.label]) < 0.003, (placement, centre)
        assert abs(np.arctan2(pose[1, 0], pose[0, 0]) - placement.yaw) < 0.02, placement
        assert pose[2, 2] > 0.999  # the tag faces up


def test_the_reader_reads_every_label_with_rapidocr(arm, frame):
    placements, rgb, depth, _ = frame
    tags = [arm.detector.tag_message(tag_id, pose, corners) for tag_id, pose, corners in tags_in(arm, rgb, depth)]
    labelled = arm.reader.Reader(arm.reader.TextReader()).label(rgb, tags)
    assert {tag.id: tag.label for tag in labelled} == {p.tag_id: p.label for p in placements}
    assert all(tag.label_score >= arm.reader.MIN_SCORE for tag in labelled)


def test_yolo_labeller_gives_each_tag_the_best_box_around_it(arm):
    detector, reader, yolo = arm.detector, arm.reader, arm.yolo
    corners = np.array([[100, 100], [120, 100], [120, 120], [100, 120]], np.float64)
    tag = detector.tag_message(4, np.eye(4), corners)
    boxes = [
        yolo.Detection("lemon", 0.6, (90, 90, 130, 130)),
        yolo.Detection("banana", 0.9, (80, 80, 200, 200)),
        yolo.Detection("apple", 0.99, (300, 300, 400, 400)),  # elsewhere
    ]
    assert reader.ObjectClasses(lambda rgb: boxes)(np.zeros((480, 640, 3), np.uint8), [tag]) == {4: ("BANANA", 0.9)}


def rapidocr_detection_model() -> Path:
    import rapidocr_onnxruntime

    return Path(rapidocr_onnxruntime.__file__).parent / "models" / "ch_PP-OCRv4_det_infer.onnx"


def test_yolo_loading_and_letterbox_on_the_onnx_model_rapidocr_ships(arm):
    """No YOLO model ships in a wheel: the session, the input's size (dynamic here, so the
    default), the letterbox and its way back are checked on rapidocr's text detector, whose
    output is a map of where text is in the letterboxed input."""
    import cv2

    yolo = arm.yolo
    model = yolo.YoloModel(rapidocr_detection_model(), names=["text"])
    assert (model.height, model.width) == (yolo.DEFAULT_SIZE, yolo.DEFAULT_SIZE)
    image = np.full((240, 480, 3), 255, np.uint8)
    cv2.putText(image, "BANANA", (150, 150), cv2.FONT_HERSHEY_DUPLEX, 1.5, (0, 0, 0), 3)
    rows, cols = np.nonzero(image[..., 0] < 128)
    output, fitted = model.run(image)
    assert output.shape == (1, 1, yolo.DEFAULT_SIZE, yolo.DEFAULT_SIZE)
    assert (fitted.scale, fitted.pad_x, fitted.pad_y) == (640 / 480, 0, 160)
    text_rows, text_cols = np.nonzero(output[0, 0] > 0.3)
    box = [text_cols.min(), text_rows.min(), text_cols.max(), text_rows.max()]
    (x0, y0, x1, y1) = fitted.to_frame(np.array([box], np.float64))[0]
    assert cols.min() - 3 <= x0 < x1 <= cols.max() + 3 and rows.min() - 3 <= y0 < y1 <= rows.max() + 3
    assert x1 - x0 > 0.8 * (cols.max() - cols.min())


def test_yolo_needs_class_names_from_the_model_or_a_file(arm):
    yolo = arm.yolo
    with pytest.raises(ValueError, match="no class names in the model's metadata"):
        yolo.YoloModel(rapidocr_detection_model())


def yolo_rows(boxes: list[tuple[float, float, float, float, int, float]], classes: int) -> np.ndarray:
    """YOLOv8 output rows (cx, cy, w, h, class scores) for boxes (x0, y0, x1, y1, class, score)."""
    rows = np.zeros((len(boxes), 4 + classes), np.float32)
    for row, (x0, y0, x1, y1, number, score) in zip(rows, boxes, strict=True):
        row[:4] = ((x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0)
        row[4 + number] = score
    return rows


BOXES = [
    (10, 10, 50, 50, 0, 0.9),
    (12, 12, 52, 52, 0, 0.8),  # the same object again, weaker: suppressed
    (12, 12, 52, 52, 1, 0.7),  # the same place, another class: kept
    (100, 100, 140, 160, 2, 0.6),
    (200, 200, 220, 220, 1, 0.1),  # below the score threshold
]


def test_yolo_decodes_both_layouts_and_suppresses_overlaps_per_class(arm):
    yolo = arm.yolo
    rows = yolo_rows(BOXES, 3)
    v8 = rows.T[None]  # 1 x (4 + classes) x boxes
    v5 = np.insert(rows, 4, 1.0, axis=1)[None]  # 1 x boxes x (5 + classes), objectness 1
    for output in (v8, v5):
        boxes, scores, numbers = yolo.decode(output, 3, min_score=0.25, max_overlap=0.45)
        assert numbers.tolist() == [0, 1, 2]
        np.testing.assert_allclose(scores, [0.9, 0.7, 0.6], rtol=1e-6)
        np.testing.assert_allclose(boxes, [[10, 10, 50, 50], [12, 12, 52, 52], [100, 100, 140, 160]])
    with pytest.raises(ValueError, match="rows of 7 or 8 values"):
        yolo.decode(np.zeros((1, 10, 6), np.float32), 3, 0.25, 0.45)


def test_yolo_letterbox_maps_boxes_back_to_the_frame(arm):
    yolo = arm.yolo
    tensor, fitted = yolo.letterbox(np.zeros((480, 640, 3), np.uint8), 320, 320)
    assert tensor.shape == (1, 3, 320, 320) and tensor.dtype == np.float32
    assert (fitted.scale, fitted.pad_x, fitted.pad_y) == (0.5, 0, 40)
    assert np.allclose(tensor[0, :, :40], yolo.PAD / 255) and np.allclose(tensor[0, :, 40:280], 0)
    np.testing.assert_allclose(fitted.to_frame(np.array([[0.0, 40, 320, 280]])), [[0, 0, 640, 480]])


def test_the_example_pins_are_in_the_test_extras():
    """The README installs requirements.txt; CI installs nerve's `test` extras: the same pins."""
    pyproject = (REPO / "pyproject.toml").read_text()
    pins = [line for line in (ARM / "requirements.txt").read_text().splitlines() if line and not line.startswith("#")]
    assert pins and all(f'"{pin}"' in pyproject for pin in pins), pins
