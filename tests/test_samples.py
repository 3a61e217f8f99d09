"""Lent samples (`send_output_raw`) keep dora-rs's safety contract: no send while a view of the
sample is open, no view once it is sent, nothing sent when the `with` block raised."""

FILLER = """
import numpy as np
import pyarrow as pa
from nerve import Node


def refused(call, error, words):
    try:
        call()
    except error as e:
        assert any(w in str(e) for w in words), str(e)
        return True
    return False


node = Node()
checks = {}

# A memoryview left open: the send refuses and the sample stays; once released, it goes.
sample = node.send_output_raw("out", 4)
view = sample.as_memoryview()
view[:] = b"aaaa"
checks["open view refuses the send"] = refused(sample.send, RuntimeError, ["view"])
view.release()
sample.send()
checks["sent twice refused"] = refused(sample.send, RuntimeError, ["already"])
checks["no view once sent"] = refused(sample.as_memoryview, RuntimeError, ["already"])

# Each as_memoryview is a new view, each counted; as_buffer is one object, dead once sent.
sample = node.send_output_raw("out", 4)
first, second = sample.as_memoryview(), sample.as_memoryview()
checks["views are new"] = first is not second
first[:] = b"bbbb"
first.release()
checks["one view left still refuses"] = refused(sample.send, RuntimeError, ["1 view"])
second.release()
buffer = sample.as_buffer()
checks["one buffer"] = buffer is sample.as_buffer()
sample.send()
checks["buffer dead once sent"] = refused(lambda: memoryview(buffer), BufferError, ["sent"])

# A numpy array outliving the `with` block: its end refuses to send.
kept = {}
try:
    with node.send_output_raw("out", 4) as sample:
        kept["array"] = np.frombuffer(sample, dtype=np.uint8)
        kept["array"][:] = ord("c")
    checks["numpy view refuses the end of with"] = False
except RuntimeError as e:
    checks["numpy view refuses the end of with"] = "view" in str(e)
del kept["array"]
sample.send()

# An exception in the block: nothing sent, the sample can still go.
sample = node.send_output_raw("out", 4)
try:
    with sample as buf:
        memoryview(buf)[:] = b"dddd"
        raise ValueError("half written")
except ValueError:
    pass
sample.send()

# A buffer outliving its sample makes no view.
sample = node.send_output_raw("out", 4)
buffer = sample.as_buffer()
del sample
checks["buffer dead once its sample is gone"] = refused(lambda: memoryview(buffer), BufferError, ["dropped"])

with node.send_output_raw("out", 4) as buf:
    memoryview(buf)[:] = b"eeee"
print(sorted(name for name, ok in checks.items() if not ok) or "all held")
"""

READER = """
from nerve import Node

got = [bytes(e["value"].to_numpy()).decode() for e in Node() if e["type"] == "INPUT"]
print(got)
"""


def test_a_lent_sample_is_sent_only_once_no_view_of_it_is_open(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: filler
            path: filler.py
            outputs: [out]
          - id: reader
            path: reader.py
            inputs: {out: filler/out}
        """,
        {"filler.py": FILLER, "reader.py": READER},
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    assert run.node_lines("filler") == ["all held"]
    # Each message as written when it was sent; nothing of the discarded or half-written ones.
    assert run.node_lines("reader") == ["['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee']"]
