"""`nerve graph --output x.html` draws the dataflow in a real browser (Debian's chromium) with no
network: the page carries its renderer."""

from __future__ import annotations

import re
import shutil
import subprocess

from conftest import REPO, nerve_cmd


def test_the_html_graph_draws_offline_in_a_browser(tmp_path):
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is missing (scripts/test.sh installs it)"
    page = tmp_path / "graph.html"
    made = subprocess.run(
        nerve_cmd("graph", str(REPO / "examples" / "pipeline" / "dataflow.yml"), "--output", str(page)),
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    # A network namespace of its own with no interface up: the browser reaches no network at all.
    browser = [
        "unshare", "--net", "--",
        chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000",
        "--dump-dom", page.as_uri(),
    ]  # fmt: skip
    shown = subprocess.run(browser, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    dom = shown.stdout
    # Mermaid replaced the chart's text with a drawing, each node a label of its own.
    assert 'aria-roledescription="flowchart' in dom, dom[-2000:]
    drawing = dom[dom.index("<svg") : dom.index("</svg>")]
    labels = re.findall(r'class="nodeLabel[^>]*>(?:<[^>]+>)*([^<]+)', drawing)
    assert {"camera", "processor", "sink"} <= set(labels), labels
