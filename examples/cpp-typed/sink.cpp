// Checks that every outline is the square the camera drew in that frame.
#include <nerve/msg/geometry_msgs.hpp>

#include <cstdio>
#include <cstdlib>

#include "common.hpp"

using nerve::msg::geometry_msgs::msg::PolygonStamped;

int main() {
    const char *expected_text = std::getenv("EXPECTED_FRAMES");
    const int expected = expected_text != nullptr ? std::atoi(expected_text) : 0;
    try {
        nerve::Node node;
        int checked = 0;
        for (nerve::Event &event : node) {
            if (event.type() == NERVE_EVENT_TYPE_STOP) break;
            if (event.type() != NERVE_EVENT_TYPE_INPUT) continue;
            PolygonStamped outline = nerve::msg::read<PolygonStamped>(event);
            uint32_t frame = frame_of(outline.header.frame_id);
            auto [x, y] = square_at(frame);
            const auto &p = outline.polygon.points;
            if (p.size() != 4 || p[0].x != x || p[0].y != y || p[2].x != x + SIDE - 1 || p[2].y != y + SIDE - 1) {
                std::fprintf(stderr, "sink: frame %u: the outline is not the square at (%u, %u)\n", frame, x, y);
                return 1;
            }
            checked++;
        }
        std::printf("sink checked %d outlines\n", checked);
        if (expected != 0 && checked != expected) {
            std::fprintf(stderr, "sink: expected %d outlines, got %d\n", expected, checked);
            return 1;
        }
    } catch (const nerve::Error &e) {
        std::fprintf(stderr, "sink: %s\n", e.what());
        return 1;
    }
}
