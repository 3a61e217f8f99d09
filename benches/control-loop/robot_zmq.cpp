// The robot of examples/force-control over ZeroMQ instead of nerve: the same loop and physics
// (the example's loop.hpp and plant.hpp), only the link differs. It binds a PUB socket for its
// readings (ipc://readings.ipc) and a SUB socket for the commands (ipc://commands.ipc), both in
// its working directory; the controller (benches/nodes/controller_zmq.py) connects to them. The
// SUB socket keeps only the newest command (ZMQ_CONFLATE), as the nerve robot's keep-latest
// input does. Same flags as the nerve robot: --seconds S, --record FILE.
#include <zmq.h>

#include <memory>

#include "loop.hpp"

namespace {

// Throws the failure of a ZeroMQ call, with what it was doing.
int check(int result, const char *what) {
    if (result < 0) throw std::runtime_error(std::string(what) + ": " + zmq_strerror(zmq_errno()));
    return result;
}

struct CloseSocket {
    void operator()(void *socket) const noexcept { zmq_close(socket); }
};
struct TermContext {
    void operator()(void *context) const noexcept { zmq_ctx_term(context); }
};
using Socket = std::unique_ptr<void, CloseSocket>;

// How long the last readings (the END one) may take to go out once the robot closes.
constexpr int LINGER_MS = 1000;

}  // namespace

// ZeroMQ's side of the loop. The clock's thread uses the PUB socket only and the receiving
// thread the SUB socket only: a ZeroMQ socket is for one thread at a time.
class ZmqLink {
   public:
    ZmqLink() : context_(zmq_ctx_new()) {
        if (!context_) check(-1, "zmq_ctx_new");
        readings_ = open(ZMQ_PUB, "readings");
        const int linger = LINGER_MS, conflate = 1;
        check(zmq_setsockopt(readings_.get(), ZMQ_LINGER, &linger, sizeof linger), "ZMQ_LINGER");
        check(zmq_bind(readings_.get(), "ipc://readings.ipc"), "zmq_bind ipc://readings.ipc");
        commands_ = open(ZMQ_SUB, "commands");
        // Before the bind: a socket keeps only the newest message if it says so first.
        check(zmq_setsockopt(commands_.get(), ZMQ_CONFLATE, &conflate, sizeof conflate), "ZMQ_CONFLATE");
        check(zmq_setsockopt(commands_.get(), ZMQ_SUBSCRIBE, "", 0), "ZMQ_SUBSCRIBE");
        check(zmq_bind(commands_.get(), "ipc://commands.ipc"), "zmq_bind ipc://commands.ipc");
    }

    void send(const force_loop::Frame &reading) {
        const auto bytes = force_loop::encode(reading);
        check(zmq_send(readings_.get(), bytes.data(), bytes.size(), 0), "zmq_send");
    }

    // The next command within `timeout_ms`, or nullopt.
    std::optional<force_loop::Frame> receive(int timeout_ms) {
        zmq_pollitem_t item{commands_.get(), 0, ZMQ_POLLIN, 0};
        if (check(zmq_poll(&item, 1, timeout_ms), "zmq_poll") == 0) return std::nullopt;
        uint8_t buffer[2 * force_loop::FRAME_BYTES];  // room to see that a longer message is no frame
        const int len = check(zmq_recv(commands_.get(), buffer, sizeof buffer, 0), "zmq_recv");
        return force_loop::decode(buffer, static_cast<size_t>(len));
    }

    // A ZeroMQ subscription has no end: the loop ends by its clock.
    bool closed() const { return false; }

   private:
    Socket open(int type, const char *what) {
        Socket socket(zmq_socket(context_.get(), type));
        if (!socket) check(-1, (std::string("zmq_socket for the ") + what).c_str());
        return socket;
    }

    // Declared first: the context is terminated after its sockets are closed.
    std::unique_ptr<void, TermContext> context_;
    Socket readings_, commands_;
};

int main(int argc, char **argv) { return force_loop::robot_main<ZmqLink>(argc, argv); }
