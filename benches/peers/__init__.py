"""The peers: other middlewares run through the same cases as nerve (see benches/model.py).

Each module has ``NAME``, ``supports(case)`` and ``run(case, workdir) -> Samples`` like
benches/impl_nerve.py. Their packages live in their own venv, benches/.venv-peers (venv.py), whose
python runs the peers' node processes (nodes/).
"""

from __future__ import annotations

import subprocess


def available() -> list:
    """The peer modules, after making sure their venv is installed."""
    from benches.peers import cyclonedds_peer, dora, iceoryx2_peer, venv, zenoh_peer, zmq_peer

    try:
        venv.ensure()
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"could not install the peers into {venv.VENV}: {e}") from e
    return [dora, iceoryx2_peer, zenoh_peer, zenoh_peer.SHARED_MEMORY, zmq_peer, cyclonedds_peer]
