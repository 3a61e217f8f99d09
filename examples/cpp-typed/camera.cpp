// A synthetic camera: a dark frame with one bright square, sent as sensor_msgs/msg/Image.
#include <nerve/msg/sensor_msgs.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common.hpp"

using nerve::msg::sensor_msgs::msg::Image;

int main(int argc, char **argv) {
    uint32_t frames = 0;  // 0: until stopped
    for (int i = 1; i + 1 < argc; i++)
        if (std::strcmp(argv[i], "--frames") == 0) frames = static_cast<uint32_t>(std::atoi(argv[i + 1]));
    try {
        nerve::Node node;
        uint32_t frame = 0;
        for (nerve::Event &event : node) {
            if (event.type() == NERVE_EVENT_TYPE_STOP) break;
            if (event.type() != NERVE_EVENT_TYPE_INPUT) continue;
            Image image;
            uint64_t now = node.now_ns();
            image.header.stamp.sec = static_cast<int32_t>(now / 1000000000);
            image.header.stamp.nanosec = static_cast<uint32_t>(now % 1000000000);
            image.header.frame_id = "camera/" + std::to_string(frame);
            image.height = HEIGHT;
            image.width = WIDTH;
            image.encoding = "rgb8";
            image.step = WIDTH * 3;
            std::vector<uint8_t> &pixels = image.data.mutable_values();
            pixels.assign(size_t{HEIGHT} * WIDTH * 3, 0);
            auto [x, y] = square_at(frame);
            for (uint32_t row = y; row < y + SIDE; row++)
                std::memset(&pixels[(size_t{row} * WIDTH + x) * 3], 255, size_t{SIDE} * 3);
            nerve::msg::send(node, "image", image);  // the pixels are copied once, into shared memory
            if (++frame == frames) break;
        }
        std::printf("camera sent %u images\n", frame);
    } catch (const nerve::Error &e) {
        std::fprintf(stderr, "camera: %s\n", e.what());
        return 1;
    }
}
