"""{{name}}: a nerve node.

It answers every input with the number of values that input held, on output `out`.
"""

import pyarrow as pa
from nerve import Node


def main() -> None:
    node = Node()
    for event in node:
        if event["type"] == "INPUT":
            value = event["value"]
            stamp = event["metadata"]["timestamp"]
            print(f"{event['id']}: {len(value)} values, sent at {stamp} ns")
            # Replace this with the node's work. Every output it sends must be
            # listed under the node's `outputs:` in the dataflow.
            count = pa.array([len(value)], type=pa.uint64())
            node.send_output("out", count, {"input": event["id"]})
        elif event["type"] == "STOP":
            break


if __name__ == "__main__":
    main()
