"""Eclipse Cyclone DDS (cyclonedds-python): reliable keep-last-10 pub/sub of a
``sequence<uint8>`` struct over loopback UDP."""

from __future__ import annotations

import os
from pathlib import Path

from benches.model import Case, Samples
from benches.peers import _harness

NAME = "cyclonedds"

# Loopback only: the 127.0.0.1 interface, no multicast (so no SPDP multicast either), discovery by
# unicast to the participant ports of 127.0.0.1, and no routing. (Cyclone binds its receiving
# sockets to the wildcard address as always, but sends to 127.0.0.1 only.)
CONFIG = """<?xml version="1.0" encoding="UTF-8"?>
<CycloneDDS xmlns="https://cdds.io/config">
  <Domain id="any">
    <General>
      <Interfaces><NetworkInterface address="127.0.0.1"/></Interfaces>
      <AllowMulticast>false</AllowMulticast>
      <DontRoute>true</DontRoute>
    </General>
    <Discovery>
      <ParticipantIndex>auto</ParticipantIndex>
      <MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>
      <Peers><Peer address="127.0.0.1"/></Peers>
    </Discovery>
  </Domain>
</CycloneDDS>
"""


def supports(case: Case) -> bool:
    # No loan in cyclonedds-python: the copy variant of a case would measure the same thing.
    return case.lang == "python" and case.loan and not case.realtime


def run(case: Case, workdir: Path) -> Samples:
    folder = _harness.folder_for(NAME, case, workdir)
    config = folder / "cyclonedds.xml"
    config.write_text(CONFIG)
    # A domain of its own per run (ids 0..232), away from the default 0.
    domain = 100 + os.getpid() % 100
    env = {"CYCLONEDDS_URI": config.as_uri()}
    return _harness.run_nodes(NAME, case, workdir, "cyclonedds_node.py", {"domain": domain}, env=env, folder=folder)
