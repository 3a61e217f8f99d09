// listener: prints every message that arrives on its `message` input.
#include <nerve.hpp>

#include <cstdio>

int main() {
    try {
        nerve::Node node;
        int received = 0;
        // Events come until STOP or until every input has closed.
        for (nerve::Event &event : node) {
            if (event.type() == NERVE_EVENT_TYPE_STOP) break;
            if (event.type() != NERVE_EVENT_TYPE_INPUT) continue;
            nerve::Bytes text = event.bytes();  // in shared memory, valid while the event lives
            std::printf("listener got \"%.*s\" (sent at %llu ns)\n", static_cast<int>(text.size),
                        reinterpret_cast<const char *>(text.data), static_cast<unsigned long long>(event.timestamp()));
            received++;
        }
        std::printf("listener received %d messages\n", received);
    } catch (const nerve::Error &e) {
        std::fprintf(stderr, "listener: %s\n", e.what());
        return 1;
    }
}
