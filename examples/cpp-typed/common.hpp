// What the camera draws and the others expect: a bright square moving along the image (check.py
// has the same).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

constexpr uint32_t HEIGHT = 480, WIDTH = 640, SIDE = 40;

// The square's top-left corner (x, y) in frame number `frame`.
inline std::pair<uint32_t, uint32_t> square_at(uint32_t frame) {
    return {(frame * 8) % (WIDTH - SIDE), (frame * 5) % (HEIGHT - SIDE)};
}

// The frame number a header's frame_id (`camera/N`) carries.
inline uint32_t frame_of(const std::string &frame_id) {
    return static_cast<uint32_t>(std::stoul(frame_id.substr(frame_id.rfind('/') + 1)));
}
