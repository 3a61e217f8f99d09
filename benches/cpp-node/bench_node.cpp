// The C++ roles of the benchmark suite, through nerve.hpp: the Rust node's roles
// (benches/rust-node/src/main.rs) with its arguments and its output files, so that the harness
// runs either node the same way and a C++ row measures what the Rust row beside it measures.
//
//   nerve-bench-cpp-node producer SIZE COUNT RATE_HZ OUT   # stamp in the first 8 bytes of a loaned block
//   nerve-bench-cpp-node consumer OUT [WARMUP]             # "sent received" lines + OUT.json
#include <nerve.hpp>

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using Args = std::vector<std::string>;

uint64_t cpu_ns() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(t.tv_nsec);
}

// Sleeps until message `i` is due on a schedule that starts at `start` and sends at `rate_hz`
// (no drift); at rate 0, not at all. The Rust node's schedule, so that both send alike.
void pace(uint64_t start, double rate_hz, uint64_t i) {
    if (rate_hz <= 0) return;
    uint64_t due = start + static_cast<uint64_t>(static_cast<double>(i) * 1e9 / rate_hz);
    uint64_t now = nerve::monotonic_ns();
    if (due > now) std::this_thread::sleep_for(std::chrono::nanoseconds(due - now));
}

const std::string &text(const Args &args, size_t i, const char *what) {
    if (i >= args.size()) throw std::invalid_argument(std::string("missing ") + what);
    return args[i];
}

uint64_t whole(const Args &args, size_t i, const char *what) {
    const std::string &s = text(args, i, what);
    uint64_t value = 0;
    auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (error != std::errc() || end != s.data() + s.size())
        throw std::invalid_argument(std::string("bad ") + what + ": `" + s + "`");
    return value;
}

double real(const Args &args, size_t i, const char *what) {
    const std::string &s = text(args, i, what);
    char *end = nullptr;
    errno = 0;
    double value = std::strtod(s.c_str(), &end);
    if (s.empty() || errno != 0 || *end != '\0' || value < 0)
        throw std::invalid_argument(std::string("bad ") + what + ": `" + s + "`");
    return value;
}

// The stamp is little-endian on the wire whatever the host's byte order (benches/model.py).
void put_stamp(uint8_t *to, uint64_t t) {
    for (int b = 0; b < 8; b++) to[b] = static_cast<uint8_t>(t >> (8 * b));
}
uint64_t get_stamp(const uint8_t *from) {
    uint64_t t = 0;
    for (int b = 0; b < 8; b++) t |= static_cast<uint64_t>(from[b]) << (8 * b);
    return t;
}

void write_file(const std::string &path, const std::string &content) {
    FILE *f = std::fopen(path.c_str(), "w");
    if (f == nullptr) throw std::runtime_error("cannot write " + path);
    bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
    if (std::fclose(f) != 0 || !ok) throw std::runtime_error("cannot write " + path);
}

// Sends COUNT messages of SIZE bytes, each written in place into a block nerve lends and
// stamped just before the send, as the Rust node's `send_output_raw` does.
void producer(const Args &args) {
    uint64_t size = whole(args, 2, "size"), count = whole(args, 3, "count");
    double rate = real(args, 4, "rate");
    const std::string &out = text(args, 5, "output file");
    if (size < 8) throw std::invalid_argument("size must be at least 8 bytes: the stamp");
    nerve::Node node;
    uint64_t start = nerve::monotonic_ns() + 50'000'000;
    uint64_t first_cpu = cpu_ns();
    for (uint64_t i = 0; i < count; i++) {
        pace(start, rate, i);
        nerve::Sample sample = node.loan("data", size);
        put_stamp(sample.data().data, nerve::monotonic_ns());
        node.send(std::move(sample));
    }
    uint64_t used = cpu_ns() - first_cpu;
    write_file(out, "{\"cpu_ns\": " + std::to_string(used) + ", \"messages\": " + std::to_string(count) + "}");
}

// Reads the stamp of every message in place (event.bytes() is a view of the shared memory, no
// copy) until the stream ends; CPU time counts after the first WARMUP messages.
void consumer(const Args &args) {
    const std::string &out = text(args, 2, "output file");
    uint64_t warmup = args.size() > 3 ? whole(args, 3, "warmup") : 0;
    uint64_t start_after = std::max<uint64_t>(warmup, 1);
    nerve::Node node;
    std::vector<std::pair<uint64_t, uint64_t>> lines;
    lines.reserve(1 << 20);
    std::optional<uint64_t> cpu_from;
    for (nerve::Event &event : node) {
        if (event.type() != NERVE_EVENT_TYPE_INPUT) continue;
        nerve::Bytes bytes = event.bytes();
        if (bytes.size < 8) throw std::runtime_error("a message of " + std::to_string(bytes.size) + " bytes has no stamp");
        uint64_t sent = get_stamp(bytes.data);
        lines.emplace_back(sent, nerve::monotonic_ns());
        if (lines.size() == start_after) cpu_from = cpu_ns();
    }
    // Before writing the samples: the time to write them is not the receive path's.
    uint64_t used = cpu_from ? cpu_ns() - *cpu_from : 0;
    uint64_t cpu_messages = cpu_from ? lines.size() - start_after : 0;
    std::string samples;
    samples.reserve(lines.size() * 40);
    for (auto [sent, received] : lines) samples += std::to_string(sent) + ' ' + std::to_string(received) + '\n';
    write_file(out, samples);
    double seconds = lines.empty() ? 0.0 : static_cast<double>(lines.back().second - lines.front().second) / 1e9;
    write_file(out + ".json", "{\"cpu_ns\": " + std::to_string(used) + ", \"cpu_messages\": " +
                                  std::to_string(cpu_messages) + ", \"messages\": " + std::to_string(lines.size()) +
                                  ", \"seconds\": " + std::to_string(seconds) + "}");
}

}  // namespace

int main(int argc, char **argv) {
    Args args(argv, argv + argc);
    std::string role = args.size() > 1 ? args[1] : "";
    try {
        if (role == "producer") {
            producer(args);
        } else if (role == "consumer") {
            consumer(args);
        } else {
            std::fprintf(stderr, "nerve-bench-cpp-node: unknown role `%s` (producer, consumer)\n", role.c_str());
            return 2;
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "nerve-bench-cpp-node %s: %s\n", role.c_str(), e.what());
        return 1;
    }
}
