// Finds the bright square in each sensor_msgs/msg/Image, read in place in shared memory, and sends
// its outline as a geometry_msgs/msg/PolygonStamped with the image's header.
#include <nerve/msg/geometry_msgs.hpp>
#include <nerve/msg/sensor_msgs.hpp>

#include <algorithm>
#include <cstdio>

using nerve::msg::geometry_msgs::msg::Point32;
using nerve::msg::geometry_msgs::msg::PolygonStamped;
using nerve::msg::sensor_msgs::msg::Image;

int main() {
    try {
        nerve::Node node;
        int images = 0, in_place = 0;
        for (nerve::Event &event : node) {
            if (event.type() == NERVE_EVENT_TYPE_STOP) break;
            if (event.type() != NERVE_EVENT_TYPE_INPUT) continue;
            Image image = nerve::msg::read<Image>(event);  // throws if the value is no Image
            in_place += image.data.borrowed();
            uint32_t left = image.width, top = image.height, right = 0, bottom = 0;
            for (uint32_t y = 0; y < image.height; y++)
                for (uint32_t x = 0; x < image.width; x++)
                    if (image.data[size_t{y} * image.step + size_t{x} * 3] > 128) {
                        left = std::min(left, x);
                        right = std::max(right, x);
                        top = std::min(top, y);
                        bottom = std::max(bottom, y);
                    }
            PolygonStamped outline;
            outline.header = image.header;
            if (right >= left) {
                auto corner = [](uint32_t x, uint32_t y) {
                    Point32 p;
                    p.x = static_cast<float>(x);
                    p.y = static_cast<float>(y);
                    return p;
                };
                outline.polygon.points = {corner(left, top), corner(right, top), corner(right, bottom),
                                          corner(left, bottom)};
            }
            nerve::msg::send(node, "outline", outline);
            images++;
        }
        std::printf("detector read %d images, %d of them in place\n", images, in_place);
    } catch (const nerve::Error &e) {
        std::fprintf(stderr, "detector: %s\n", e.what());
        return 1;
    }
}
