"""The peers: other middlewares run through the same cases as nerve (see benches/model.py).

Each module has ``NAME``, ``supports(case)`` and ``run(case, workdir) -> Samples`` like
benches/impl_nerve.py. Their packages live in their own venv, benches/.venv-peers (venv.py), whose
python runs the peers' node processes (nodes/).
"""

from __future__ import annotations

import subprocess


def available(names: list[str] | None = None) -> list:
    """The peer modules (those whose name starts with one of `names`, or all), after making sure
    their venv is installed."""
    from benches.peers import cyclonedds_peer, dora, iceoryx2_peer, venv, zenoh_peer, zmq_peer

    try:
        venv.ensure()
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"could not install the peers into {venv.VENV}: {e}") from e
    peers = [dora, iceoryx2_peer, zenoh_peer, zenoh_peer.SHARED_MEMORY, zmq_peer, cyclonedds_peer]
    if names is None:
        return peers
    unknown = [n for n in names if not any(p.NAME.startswith(n) for p in peers)]
    if unknown:
        raise SystemExit(f"no peer named {', '.join(unknown)}; the peers: {', '.join(p.NAME for p in peers)}")
    return [p for p in peers if any(p.NAME.startswith(n) for n in names)]
