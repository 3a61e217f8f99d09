// The simulated robot as a nerve node: it owns the 1 kHz clock, sends a force reading on
// `force` every period and applies the newest command of its `command` input (loop.hpp has the
// loop, plant.hpp the physics). `--seconds S` sets how long it runs, `--record FILE` writes
// what it measured of every reading.
#include <nerve.hpp>

#include "loop.hpp"

// nerve's side of the loop: the node's output `force` and input `command`, which the dataflow
// gives a keep-latest queue. The clock's thread sends while the receiving thread waits for the
// next event: a nerve::Node allows both at once.
class NerveLink {
   public:
    void send(const force_loop::Frame &reading) {
        const auto bytes = force_loop::encode(reading);
        node_.send("force", {bytes.data(), bytes.size()});
    }

    // The next command within `timeout_ms`; nullopt on a timeout, for another event, or once
    // the stream has ended (closed() says which).
    std::optional<force_loop::Frame> receive(int timeout_ms) {
        std::optional<nerve::Event> event = node_.next(timeout_ms);
        if (!event || event->type() != NERVE_EVENT_TYPE_INPUT) return std::nullopt;
        const nerve::Bytes bytes = event->bytes();
        return force_loop::decode(bytes.data, bytes.size);
    }

    // A stop came or the controller is gone: nothing more will come.
    bool closed() const { return node_.ended(); }

   private:
    nerve::Node node_;
};

int main(int argc, char **argv) { return force_loop::robot_main<NerveLink>(argc, argv); }
