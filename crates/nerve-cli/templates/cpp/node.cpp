// {{name}}: a nerve node. It answers every input with the number of bytes that input held, on
// output `out`.
#include <nerve.hpp>

#include <cstdio>

int main() {
    try {
        nerve::Node node;
        for (nerve::Event &event : node) {
            if (event.type() == NERVE_EVENT_TYPE_STOP) break;
            if (event.type() == NERVE_EVENT_TYPE_ERROR) {
                std::fprintf(stderr, "{{name}}: %.*s\n", static_cast<int>(event.error().size()), event.error().data());
                continue;
            }
            if (event.type() != NERVE_EVENT_TYPE_INPUT) continue;
            nerve::Bytes bytes;
            try {
                bytes = event.bytes();
            } catch (const nerve::Error &e) {  // strings, lists, structs, nulls: event.arrow()
                std::fprintf(stderr, "{{name}}: %s\n", e.what());
                continue;
            }
            std::printf("%.*s: %zu bytes\n", static_cast<int>(event.id().size()), event.id().data(), bytes.size);
            // Replace this with the node's work. Every output it sends must be listed under the
            // node's `outputs:` in the dataflow.
            uint64_t len = bytes.size;
            node.send("out", {reinterpret_cast<const uint8_t *>(&len), sizeof len});
        }
    } catch (const nerve::Error &e) {
        std::fprintf(stderr, "{{name}}: %s\n", e.what());
        return 1;
    }
}
