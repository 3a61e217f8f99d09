// Watches the robot without a dataflow: a callback on `robot/pose` on nerve's thread, and once
// it has seen POSES poses, a call of `robot/stop`.
#include <nerve.hpp>

#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

constexpr int POSES = 20;

struct Pose {
    double x, y, theta;
};

int main() {
    try {
        std::mutex mutex;
        std::condition_variable enough;
        int seen = 0;
        nerve::Subscriber poses("robot/pose", [&](const nerve::EventView &event) {
            nerve::Bytes bytes = event.bytes();
            if (bytes.size != sizeof(Pose)) throw std::runtime_error("not a pose");
            Pose pose;
            std::memcpy(&pose, bytes.data, sizeof pose);
            std::lock_guard lock(mutex);
            if (++seen <= POSES)
                std::printf("monitor: pose %lld: x=%.3f y=%.3f theta=%.2f\n",
                            static_cast<long long>(event.parameter_int("seq")), pose.x, pose.y, pose.theta);
            enough.notify_all();
        });
        {
            std::unique_lock lock(mutex);
            enough.wait(lock, [&] { return seen >= POSES; });
        }
        nerve::Client stop("robot/stop");
        if (!stop.wait_for_server(10000)) throw std::runtime_error("no robot/stop server");
        std::string why = "monitor saw enough";
        nerve::Event reply = stop.call({reinterpret_cast<const uint8_t *>(why.data()), why.size()}, 10000);
        nerve::Bytes answer = reply.bytes();
        std::printf("monitor: robot answered: %.*s\n", static_cast<int>(answer.size),
                    reinterpret_cast<const char *>(answer.data));
    } catch (const std::exception &e) {
        std::fprintf(stderr, "monitor: %s\n", e.what());
        return 1;
    }
}
