// A robot's driver without a dataflow: publishes its pose on `robot/pose` at 50 Hz, each pose
// written straight into shared memory (a loan), and serves `robot/stop` until someone calls it.
#include <nerve.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>

struct Pose {
    double x, y, theta;
};

int main() {
    try {
        std::atomic<bool> stop{false};
        nerve::Server stopper("robot/stop", [&](const nerve::EventView &request, nerve::Reply &reply) {
            nerve::Bytes why = request.bytes();
            std::printf("robot: stop requested: %.*s\n", static_cast<int>(why.size),
                        reinterpret_cast<const char *>(why.data));
            stop = true;
            std::string answer = "stopped";
            reply.bytes({reinterpret_cast<const uint8_t *>(answer.data()), answer.size()});
        });
        nerve::Publisher poses("robot/pose");
        uint64_t sent = 0;
        for (; !stop; sent++) {
            double t = static_cast<double>(sent) * 0.02;
            nerve::Sample sample = poses.loan(sizeof(Pose), ("{\"seq\": " + std::to_string(sent) + "}").c_str());
            *reinterpret_cast<Pose *>(sample.data().data) = Pose{std::cos(t), std::sin(t), t};
            poses.send(std::move(sample));
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        std::printf("robot: sent %llu poses\n", static_cast<unsigned long long>(sent));
    } catch (const nerve::Error &e) {
        std::fprintf(stderr, "robot: %s\n", e.what());
        return 1;
    }
}
