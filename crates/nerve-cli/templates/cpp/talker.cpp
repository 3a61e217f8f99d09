// talker: sends a greeting on `message` at every tick, ten times, then exits.
#include <nerve.hpp>

#include <cstdio>
#include <string>

constexpr int MESSAGES = 10;

int main() {
    try {
        nerve::Node node;
        int sent = 0;
        for (nerve::Event &event : node) {
            if (event.type() == NERVE_EVENT_TYPE_STOP) break;
            if (event.type() != NERVE_EVENT_TYPE_INPUT) continue;
            std::string text = "hello #" + std::to_string(sent);
            // Plain bytes, copied once into shared memory; Node::loan writes in place, and
            // Node::send takes Arrow arrays too.
            node.send("message", {reinterpret_cast<const uint8_t *>(text.data()), text.size()});
            if (++sent == MESSAGES) break;
        }
        std::printf("talker sent %d messages\n", sent);
    } catch (const nerve::Error &e) {
        std::fprintf(stderr, "talker: %s\n", e.what());
        return 1;
    }
}
