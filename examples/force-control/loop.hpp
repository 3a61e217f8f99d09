// The robot's side of the 1 kHz force loop, whatever carries its messages: robot.cpp runs it
// over nerve, benches/control-loop/robot_zmq.cpp over ZeroMQ. A link is a class with
//
//   void send(const force_loop::Frame &reading);           // publish a reading
//   std::optional<force_loop::Frame> receive(int timeout_ms); // the next command, or nullopt
//   bool closed() const;                                   // no command will ever come again
//
// and everything else is here, the same for both: the robot owns the clock, as a robot driver
// does (absolute deadlines, clock_nanosleep on CLOCK_MONOTONIC). At each deadline it checks that
// the command answering the previous reading came in time, applies the newest command, steps the
// plant (plant.hpp) and sends the new reading. A thread of its own takes the commands as they
// come, so their round trips are measured when they arrive, not at the next deadline.
#pragma once

#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "plant.hpp"

namespace force_loop {

// 1 kHz: the rate the Panda of ORC's experiment asks of its controller.
constexpr int64_t PERIOD_NS = 1'000'000;
// The seq of the readings sent until the controller first answers one (the loop starts once
// its controller listens), and of the last reading, which says the loop is over (force_pi.py
// has both).
constexpr int64_t PRIMING = -1;
constexpr int64_t END = -2;
constexpr int64_t PRIMING_EVERY_NS = 10'000'000;
constexpr int64_t PRIMING_FOR_NS = 60'000'000'000;
// How long the receiving thread waits for a command before it looks whether the loop is over.
constexpr int RECEIVE_TIMEOUT_MS = 50;

// One message, either way: a reading (its seq, when it was sent, the force measured) or a
// command (the seq of the reading it answers, that reading's stamp echoed, the force to apply).
// 24 bytes, little-endian: force_pi.py's FRAME.
struct Frame {
    int64_t seq;
    int64_t stamp_ns;
    double force_n;
};
constexpr size_t FRAME_BYTES = 24;
static_assert(sizeof(Frame) == FRAME_BYTES, "a frame is three 8-byte fields");
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "frames are little-endian, as this machine's memory");

inline std::array<uint8_t, FRAME_BYTES> encode(const Frame &frame) {
    std::array<uint8_t, FRAME_BYTES> bytes;
    std::memcpy(bytes.data(), &frame, FRAME_BYTES);
    return bytes;
}

inline Frame decode(const uint8_t *data, size_t len) {
    if (len != FRAME_BYTES)
        throw std::runtime_error("a message of " + std::to_string(len) + " bytes is no frame (" +
                                 std::to_string(FRAME_BYTES) + " bytes)");
    Frame frame;
    std::memcpy(&frame, data, FRAME_BYTES);
    return frame;
}

// CLOCK_MONOTONIC in nanoseconds: the clock of the deadlines and of every stamp, Python's
// time.monotonic_ns() too.
inline int64_t monotonic_ns() {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// Sleeps until `t_ns`: an absolute deadline, so that a late wake-up never delays the next one.
inline void sleep_until(int64_t t_ns) {
    const timespec t{static_cast<time_t>(t_ns / 1'000'000'000), static_cast<long>(t_ns % 1'000'000'000)};
    int error;
    while ((error = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr)) == EINTR) {
    }
    if (error != 0) throw std::runtime_error(std::string("clock_nanosleep: ") + std::strerror(error));
}

// A command and when it came into the robot's hands.
struct Delivery {
    Frame command;
    int64_t arrived_ns;
};

// The newest command: put by the receiving thread, read by the clock's at each deadline.
class Mailbox {
   public:
    void put(const Delivery &delivery) {
        std::lock_guard<std::mutex> lock(mutex_);
        newest_ = delivery;
    }
    std::optional<Delivery> newest() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return newest_;
    }

   private:
    mutable std::mutex mutex_;
    std::optional<Delivery> newest_;
};

// The receiving thread: puts each command into the mailbox as it comes and notes its reading's
// round trip, until stopped or the link closes. A failure stops it; the clock's thread rethrows
// it (rethrow_failure, join), and the destructor stops and joins the thread in any case.
template <typename Link>
class Receiver {
   public:
    Receiver(Link &link, Mailbox &mailbox) : thread_([this, &link, &mailbox] { receive(link, mailbox); }) {}
    ~Receiver() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
    }
    Receiver(const Receiver &) = delete;
    Receiver &operator=(const Receiver &) = delete;

    void rethrow_failure() const {
        if (failed_.load(std::memory_order_acquire)) std::rethrow_exception(failure_);
    }
    // Stops the thread: the (seq, round trip in ns) of every answer to a reading of the loop.
    std::vector<std::pair<int64_t, int64_t>> join() {
        stop_ = true;
        thread_.join();
        rethrow_failure();
        return std::move(round_trips_);
    }

   private:
    void receive(Link &link, Mailbox &mailbox) noexcept {
        try {
            while (!stop_ && !link.closed()) {
                std::optional<Frame> command = link.receive(RECEIVE_TIMEOUT_MS);
                if (!command) continue;
                const int64_t now = monotonic_ns();
                mailbox.put({*command, now});
                if (command->seq >= 0) round_trips_.emplace_back(command->seq, now - command->stamp_ns);
            }
        } catch (...) {
            failure_ = std::current_exception();
            failed_.store(true, std::memory_order_release);
        }
    }

    std::atomic<bool> stop_{false}, failed_{false};
    std::exception_ptr failure_;
    std::vector<std::pair<int64_t, int64_t>> round_trips_;
    std::thread thread_;  // last: it starts once the members it uses exist
};

// What the robot knows of one reading of the loop.
struct Cycle {
    int64_t sent_ns = 0;         // when it went out
    int64_t round_trip_ns = -1;  // from then to its answer in the robot's hands; -1: never answered
    bool missed = false;         // its answer was not in by the next deadline
};

// Whether the answer to reading `seq` was in by `deadline_ns`. Only readings up to `seq` have
// been sent, so a newer command cannot have come.
inline bool answered_by(const std::optional<Delivery> &newest, int64_t seq, int64_t deadline_ns) {
    return newest && newest->command.seq == seq && newest->arrived_ns <= deadline_ns;
}

// Sends priming readings until the controller answers one.
template <typename Link>
void wait_for_controller(Link &link, const Mailbox &mailbox, const Receiver<Link> &receiver, Plant &plant) {
    const int64_t give_up = monotonic_ns() + PRIMING_FOR_NS;
    while (!mailbox.newest()) {
        receiver.rethrow_failure();
        if (monotonic_ns() > give_up)
            throw std::runtime_error("the controller did not answer within " +
                                     std::to_string(PRIMING_FOR_NS / 1'000'000'000) + " s");
        const double force_n = plant.sensor_reading_n();
        link.send({PRIMING, monotonic_ns(), force_n});
        sleep_until(monotonic_ns() + PRIMING_EVERY_NS);
    }
}

// The loop: once the controller answers, `cycles` periods, then the END reading. The record of
// every reading. A period with no fresh command applies the newest one there is (the answer to
// a priming reading, at first).
template <typename Link>
std::vector<Cycle> run(Link &link, int64_t cycles) {
    Plant plant;
    Mailbox mailbox;
    Receiver<Link> receiver(link, mailbox);
    wait_for_controller(link, mailbox, receiver, plant);
    std::vector<Cycle> record(cycles);
    const int64_t start = monotonic_ns() + PERIOD_NS;
    for (int64_t c = 0; c <= cycles; c++) {
        const int64_t deadline = start + c * PERIOD_NS;
        sleep_until(deadline);
        receiver.rethrow_failure();
        const std::optional<Delivery> newest = mailbox.newest();
        if (c > 0) record[c - 1].missed = !answered_by(newest, c - 1, deadline);
        if (c == cycles) break;
        plant.step(newest->command.force_n, PERIOD_NS / 1e9);
        const double force_n = plant.sensor_reading_n();
        record[c].sent_ns = monotonic_ns();
        link.send({c, record[c].sent_ns, force_n});
    }
    link.send({END, monotonic_ns(), 0.0});
    for (auto [seq, round_trip_ns] : receiver.join()) {
        if (seq >= cycles) throw std::runtime_error("the controller answered reading " + std::to_string(seq) +
                                                    ", which was never sent");
        if (record[seq].round_trip_ns < 0) record[seq].round_trip_ns = round_trip_ns;
    }
    return record;
}

// How long a run lasts and where its record goes: `--seconds S` (3 by default), `--record FILE`
// (none by default). A flag given twice counts as its last, so a harness may append its own.
struct Options {
    double seconds = 3.0;
    std::string record;
};

// The value of --seconds: a number of seconds that holds one period at least.
inline double seconds_of(const std::string &value) {
    size_t used = 0;
    double seconds = 0.0;
    try {
        seconds = std::stod(value, &used);
    } catch (const std::exception &) {
        used = 0;
    }
    if (used != value.size() || !(seconds * 1e9 >= PERIOD_NS))
        throw std::invalid_argument("--seconds " + value + ": not a number of seconds, one period (1 ms) at least");
    return seconds;
}

inline Options parse_options(int argc, char **argv) {
    Options options;
    for (int i = 1; i < argc; i += 2) {
        const std::string flag = argv[i];
        if (i + 1 == argc) throw std::invalid_argument(flag + " needs a value");
        const std::string value = argv[i + 1];
        if (flag == "--seconds")
            options.seconds = seconds_of(value);
        else if (flag == "--record")
            options.record = value;
        else
            throw std::invalid_argument("unknown flag " + flag + " (known: --seconds S, --record FILE)");
    }
    return options;
}

// The `q`th percentile (0..100) of `values`, nearest rank; it sorts them.
inline int64_t percentile(std::vector<int64_t> &values, double q) {
    std::sort(values.begin(), values.end());
    const size_t rank = static_cast<size_t>(std::ceil(q / 100.0 * values.size()));
    return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

// One line: cycles, the loop's round trip (reading sent → its answer in hand), the jitter of
// the period (|time between two readings − 1 ms|) and the missed deadlines.
inline void print_summary(const std::vector<Cycle> &record) {
    std::vector<int64_t> round_trips, jitters;
    size_t missed = 0;
    for (size_t c = 0; c < record.size(); c++) {
        if (record[c].round_trip_ns >= 0) round_trips.push_back(record[c].round_trip_ns);
        if (c > 0) jitters.push_back(std::abs(record[c].sent_ns - record[c - 1].sent_ns - PERIOD_NS));
        missed += record[c].missed;
    }
    std::printf("robot: %zu cycles at %lld Hz", record.size(), static_cast<long long>(1'000'000'000 / PERIOD_NS));
    if (!round_trips.empty())
        std::printf("; loop round trip p50 %.0f µs, p99 %.0f µs, max %.0f µs", percentile(round_trips, 50) / 1e3,
                    percentile(round_trips, 99) / 1e3, percentile(round_trips, 100) / 1e3);
    if (!jitters.empty())
        std::printf("; period jitter p99 %.0f µs, max %.0f µs", percentile(jitters, 99) / 1e3,
                    percentile(jitters, 100) / 1e3);
    std::printf("; missed deadlines %zu (%.2f%%)", missed, 100.0 * missed / record.size());
    if (round_trips.size() < record.size()) std::printf("; %zu readings never answered", record.size() - round_trips.size());
    std::printf("\n");
    std::fflush(stdout);
}

// One line per reading: `sent_ns round_trip_ns missed` (round trip -1: never answered).
inline void write_record(const std::string &path, const std::vector<Cycle> &record) {
    std::ofstream out(path);
    for (const Cycle &c : record) out << c.sent_ns << ' ' << c.round_trip_ns << ' ' << int{c.missed} << '\n';
    out.close();
    if (!out) throw std::runtime_error("cannot write the record to " + path);
}

// A robot's main over `Link`: the loop, its summary and, if asked, its record.
template <typename Link>
int robot_main(int argc, char **argv) {
    try {
        const Options options = parse_options(argc, argv);
        Link link;
        const std::vector<Cycle> record = run(link, std::llround(options.seconds * 1e9 / PERIOD_NS));
        print_summary(record);
        if (!options.record.empty()) write_record(options.record, record);
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "robot: %s\n", e.what());
        return 1;
    }
}

}  // namespace force_loop
