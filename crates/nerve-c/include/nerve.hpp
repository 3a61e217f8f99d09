// nerve.hpp: C++17 RAII over nerve's C API (nerve.h), header-only. See docs/c-cpp.md.
//
// Every handle of nerve.h becomes a move-only class that frees it in its destructor; callbacks
// are lambdas (any callable); text goes in as std::string_view and comes out as string_view
// into memory the event owns; bytes come out as nerve::Bytes, a pointer and a size (std::span is
// C++20).
//
// Errors are exceptions: a negative status of the C API throws nerve::Error, which carries the
// status and nerve_last_error()'s message. Why exceptions rather than expected-style results:
// the failures of the C API are exceptional (misuse, a runtime that went away, a refused value),
// not outcomes to branch on in the hot path; the outcomes that are (a timeout, the end of the
// events, no message yet) are no failures in the C API either (positive statuses) and come back
// here as std::optional or bool, never as an exception; and constructors, which acquire every
// handle, can only report a failure by throwing. std::expected is C++23 besides. A callback
// nerve runs (a subscriber's, a server's handler) must not let an exception out into nerve's
// threads: the wrappers below catch it (a handler's becomes the request's error).
//
// Thread-safety is the C API's: each class says what its functions allow.
#ifndef NERVE_HPP
#define NERVE_HPP

#include <nerve.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nerve {

// A failed call of the C API: its status (a negative nerve_status) and message.
class Error : public std::runtime_error {
   public:
    Error(int status, const std::string &message) : std::runtime_error(message), status_(status) {}
    // The nerve_status of the failure (NERVE_STATUS_NOT_FOUND, ...).
    int status() const noexcept { return status_; }

   private:
    int status_;
};

namespace detail {

// Throws the failure `status` as nerve::Error; hands other statuses back (OK, TIMEOUT, END).
inline int check(int status) {
    if (status < 0) throw Error(status, nerve_last_error());
    return status;
}

// The C API takes NUL-terminated text; a string_view need not be.
inline std::string c(std::string_view text) { return std::string(text); }

// A C handle and its free function, freed once.
template <typename T, int (*Free)(T *)>
struct Deleter {
    void operator()(T *handle) const noexcept { Free(handle); }
};
template <typename T, int (*Free)(T *)>
using Handle = std::unique_ptr<T, Deleter<T, Free>>;

// Releases an Arrow schema, which stays the caller's after a send, when the scope ends.
struct ReleaseSchema {
    ArrowSchema *schema;
    ~ReleaseSchema() {
        if (schema->release != nullptr) schema->release(schema);
    }
};

// Text a C call copies into the caller's buffer (`call(buffer, capacity, &len)`), of any
// length: a second call with the room the first one asked for.
template <typename Call>
std::string text(Call call) {
    std::string out(64, '\0');
    size_t len = 0;
    int status = call(out.data(), out.size(), &len);
    if (status == NERVE_STATUS_BUFFER_TOO_SMALL) {
        out.resize(len + 1);
        status = call(out.data(), out.size(), &len);
    }
    check(status);
    out.resize(len);
    return out;
}

}  // namespace detail

// A view of bytes owned by something else (an event, a sample): valid while it lives.
template <typename Byte>
struct BasicBytes {
    Byte *data = nullptr;
    size_t size = 0;
    Byte *begin() const noexcept { return data; }
    Byte *end() const noexcept { return data + size; }
    bool empty() const noexcept { return size == 0; }
};
using Bytes = BasicBytes<const uint8_t>;
using MutableBytes = BasicBytes<uint8_t>;

// Reads an event without owning it: what a callback is lent, and the base of nerve::Event.
// Everything it returns points into the event and is valid while the event lives.
// Thread-safety: any thread, as long as the event lives.
class EventView {
   public:
    explicit EventView(const nerve_event *event) noexcept : event_(event) {}

    nerve_event_type type() const {
        nerve_event_type t;
        detail::check(nerve_event_get_type(event_, &t));
        return t;
    }
    // The input id (the topic or the service, for their messages). Throws for STOP and ERROR.
    std::string_view id() const {
        const char *id;
        detail::check(nerve_event_input_id(event_, &id));
        return id;
    }
    // The message of an ERROR event.
    std::string_view error() const {
        const char *message;
        detail::check(nerve_event_error(event_, &message));
        return message;
    }
    // The send time: the sender's CLOCK_MONOTONIC in nanoseconds.
    uint64_t timestamp() const {
        uint64_t t;
        detail::check(nerve_event_timestamp(event_, &t));
        return t;
    }
    // The value's bytes, in shared memory (see nerve_event_bytes).
    Bytes bytes() const {
        const uint8_t *data;
        size_t len;
        detail::check(nerve_event_bytes(event_, &data, &len));
        return {data, len};
    }
    // Metadata parameters of the message, by key; a missing key or another type throws.
    int64_t parameter_int(std::string_view key) const {
        int64_t v;
        detail::check(nerve_event_parameter_int(event_, detail::c(key).c_str(), &v));
        return v;
    }
    double parameter_float(std::string_view key) const {
        double v;
        detail::check(nerve_event_parameter_float(event_, detail::c(key).c_str(), &v));
        return v;
    }
    std::string_view parameter_string(std::string_view key) const {
        const char *text;
        size_t len;
        detail::check(nerve_event_parameter_string(event_, detail::c(key).c_str(), &text, &len));
        return {text, len};
    }
    // Metadata parameter `key` of any type as JSON text (lists, nested values).
    std::string parameter_json(std::string_view key) const {
        std::string k = detail::c(key);
        return detail::text([&](char *buffer, size_t capacity, size_t *len) {
            return nerve_event_parameter_json(event_, k.c_str(), buffer, capacity, len);
        });
    }
    // The value through the Arrow C data interface, zero-copy; the caller releases both.
    void arrow(ArrowArray *array, ArrowSchema *schema) const { detail::check(nerve_event_arrow(event_, array, schema)); }

    const nerve_event *get() const noexcept { return event_; }

   private:
    const nerve_event *event_;
};

// An event the caller owns (from Node::next, Subscriber::recv, Client::call); freed with it.
class Event : public EventView {
   public:
    explicit Event(nerve_event *event) noexcept : EventView(event), owned_(event) {}

   private:
    detail::Handle<nerve_event, nerve_event_free> owned_;
};

// A block of shared memory lent by Node::loan or Publisher::loan, filled in place and handed to
// the send() of what lent it: the bytes are never copied. Dropped unsent, the block goes back.
// Thread-safety: one thread at a time.
class Sample {
   public:
    explicit Sample(nerve_sample *sample) noexcept : sample_(sample) {}
    // The bytes to fill; valid until the sample is sent or dropped.
    MutableBytes data() {
        uint8_t *data;
        size_t len;
        detail::check(nerve_sample_data(sample_.get(), &data, &len));
        return {data, len};
    }
    nerve_sample *get() const noexcept { return sample_.get(); }
    // Gives up the handle after a send, which used it up.
    nerve_sample *release() noexcept { return sample_.release(); }

   private:
    detail::Handle<nerve_sample, nerve_sample_free> sample_;
};

// A change of a node's parameter, lent to its on-change callables before the value is stored.
class ParamChange {
   public:
    ParamChange(const char *key, const char *value_json, nerve_param_change *change) noexcept
        : key_(key), value_json_(value_json), change_(change) {}
    std::string_view key() const noexcept { return key_; }
    // The new value as JSON text (`3`, `0.5`, `true`, `"fast"`, `[1, 2]`).
    std::string_view value_json() const noexcept { return value_json_; }
    // Keeps the old value: the setter gets NERVE_STATUS_REFUSED with `reason`.
    void refuse(std::string_view reason) { detail::check(nerve_param_change_refuse(change_, detail::c(reason).c_str())); }

   private:
    std::string_view key_, value_json_;
    nerve_param_change *change_;
};

// A node of a dataflow. Range-for over it yields its events until the stream ends:
//   for (nerve::Event &event : node) { ... }
// Thread-safety: as nerve_node (any thread; concurrent next() calls take turns).
class Node {
   public:
    // The node `nerve run` started this process as.
    Node() {
        nerve_node *n = nullptr;
        detail::check(nerve_node_init_from_env(&n));
        node_.reset(n);
    }
    // Node `id`: the one nerve run started under that id, or a `path: dynamic` one.
    explicit Node(std::string_view id) {
        nerve_node *n = nullptr;
        detail::check(nerve_node_init(detail::c(id).c_str(), &n));
        node_.reset(n);
    }

    // The next event, waiting at most `timeout_ms` (-1: no limit); nullopt on a timeout or
    // once the stream has ended (ended() says which).
    std::optional<Event> next(int64_t timeout_ms = -1) {
        nerve_event *event = nullptr;
        int status = detail::check(nerve_node_next_event(node_.get(), timeout_ms, &event));
        ended_ = status == NERVE_STATUS_END;
        if (status != NERVE_STATUS_OK) return std::nullopt;
        return Event(event);
    }
    // Whether the stream has ended: a STOP was delivered, or every input closed.
    bool ended() const noexcept { return ended_; }

    // Logs `message` at `level` ("error", "warn", "info", "debug", "trace") as the node.
    void log(std::string_view level, std::string_view message) {
        detail::check(nerve_node_log(node_.get(), detail::c(level).c_str(), detail::c(message).c_str()));
    }

    void send(std::string_view output, Bytes data, const char *parameters_json = nullptr) {
        detail::check(nerve_node_send_bytes(node_.get(), detail::c(output).c_str(), parameters_json, data.data,
                                            data.size));
    }
    // Moves `array` into nerve (see nerve_node_send_arrow).
    void send(std::string_view output, ArrowArray *array, const ArrowSchema *schema,
              const char *parameters_json = nullptr) {
        detail::check(nerve_node_send_arrow(node_.get(), detail::c(output).c_str(), parameters_json, array, schema));
    }
    // `len` bytes of shared memory for `output`, to fill and send() without a copy.
    Sample loan(std::string_view output, size_t len, const char *parameters_json = nullptr) {
        nerve_sample *sample = nullptr;
        detail::check(nerve_node_loan(node_.get(), detail::c(output).c_str(), parameters_json, len, &sample));
        return Sample(sample);
    }
    // Sends a sample this node lent, on the output it was lent for; on failure it stays unsent.
    void send(Sample &&sample) {
        detail::check(nerve_node_send_sample(node_.get(), sample.get()));
        sample.release();
    }

    // The node's parameters (the dataflow's `params:`, set at run time by `nerve param set`).
    // A missing key or another type throws nerve::Error (NERVE_STATUS_NOT_FOUND, _WRONG_TYPE).
    int64_t param_int(std::string_view key) const {
        int64_t v;
        detail::check(nerve_node_param_get_int(node_.get(), detail::c(key).c_str(), &v));
        return v;
    }
    double param_float(std::string_view key) const {
        double v;
        detail::check(nerve_node_param_get_float(node_.get(), detail::c(key).c_str(), &v));
        return v;
    }
    bool param_bool(std::string_view key) const {
        bool v;
        detail::check(nerve_node_param_get_bool(node_.get(), detail::c(key).c_str(), &v));
        return v;
    }
    std::string param_string(std::string_view key) const {
        std::string k = detail::c(key);
        return detail::text([&](char *buffer, size_t capacity, size_t *len) {
            return nerve_node_param_get_string(node_.get(), k.c_str(), buffer, capacity, len);
        });
    }
    // Any parameter as JSON text: the way to read lists.
    std::string param_json(std::string_view key) const {
        std::string k = detail::c(key);
        return detail::text([&](char *buffer, size_t capacity, size_t *len) {
            return nerve_node_param_get_json(node_.get(), k.c_str(), buffer, capacity, len);
        });
    }
    // Sets a parameter; a callable of on_param_change() that refuses makes it throw
    // nerve::Error with NERVE_STATUS_REFUSED and the reason.
    void set_param(std::string_view key, int64_t value) {
        detail::check(nerve_node_param_set_int(node_.get(), detail::c(key).c_str(), value));
    }
    void set_param(std::string_view key, int value) { set_param(key, static_cast<int64_t>(value)); }
    void set_param(std::string_view key, double value) {
        detail::check(nerve_node_param_set_float(node_.get(), detail::c(key).c_str(), value));
    }
    void set_param(std::string_view key, bool value) {
        detail::check(nerve_node_param_set_bool(node_.get(), detail::c(key).c_str(), value));
    }
    void set_param(std::string_view key, std::string_view value) {
        detail::check(nerve_node_param_set_string(node_.get(), detail::c(key).c_str(), detail::c(value).c_str()));
    }
    void set_param(std::string_view key, const char *value) { set_param(key, std::string_view(value)); }
    void set_param_json(std::string_view key, std::string_view json) {
        detail::check(nerve_node_param_set_json(node_.get(), detail::c(key).c_str(), detail::c(json).c_str()));
    }
    // Gives `key` the value `default_json` unless the dataflow set it.
    void declare_param(std::string_view key, std::string_view default_json) {
        detail::check(nerve_node_param_declare_json(node_.get(), detail::c(key).c_str(), detail::c(default_json).c_str()));
    }
    using ParamCallback = std::function<void(ParamChange &)>;
    // Calls `callback` with each change before it is stored, on the setter's thread (see
    // nerve_param_callback); it refuses with ParamChange::refuse or by throwing (the what() is
    // the reason). Callables live as long as the node.
    void on_param_change(ParamCallback callback) {
        param_callbacks_.push_back(std::make_unique<ParamCallback>(std::move(callback)));
        detail::check(nerve_node_param_on_change(node_.get(), &Node::param_changed, param_callbacks_.back().get()));
    }

    // Now on the node's clock (simulated time under nerve run --sim-time), in nanoseconds.
    uint64_t now_ns() const {
        uint64_t ns;
        detail::check(nerve_node_now_ns(node_.get(), &ns));
        return ns;
    }
    bool sim_time() const {
        bool simulated;
        detail::check(nerve_node_sim_time(node_.get(), &simulated));
        return simulated;
    }
    void set_sim_time(uint64_t ns) { detail::check(nerve_node_set_sim_time(node_.get(), ns)); }
    // Ticks every `period_ns` as INPUT events of id `id`.
    void add_timer(std::string_view id, uint64_t period_ns) {
        detail::check(nerve_node_add_timer(node_.get(), detail::c(id).c_str(), period_ns));
    }

    nerve_node *get() const noexcept { return node_.get(); }

    // Range-for over the events.
    class iterator {
       public:
        explicit iterator(Node *node) : node_(node) { ++*this; }
        iterator() = default;
        Event &operator*() { return *event_; }
        iterator &operator++() {
            event_ = node_->next();
            if (!event_) node_ = nullptr;
            return *this;
        }
        bool operator!=(const iterator &other) const noexcept { return node_ != other.node_; }

       private:
        Node *node_ = nullptr;
        std::optional<Event> event_;
    };
    iterator begin() { return iterator(this); }
    iterator end() { return iterator(); }

   private:
    static void param_changed(const char *key, const char *value_json, nerve_param_change *change,
                              void *user_data) noexcept {
        ParamChange c(key, value_json, change);
        try {
            (*static_cast<ParamCallback *>(user_data))(c);
        } catch (const std::exception &e) {
            nerve_param_change_refuse(change, e.what());
        } catch (...) {
            nerve_param_change_refuse(change, "the C++ callback threw");
        }
    }
    // Declared first so they outlive the node, which may call them until it is freed.
    std::vector<std::unique_ptr<ParamCallback>> param_callbacks_;
    detail::Handle<nerve_node, nerve_node_free> node_;
    bool ended_ = false;
};

// Now on CLOCK_MONOTONIC, the clock of message stamps, in nanoseconds.
inline uint64_t monotonic_ns() noexcept { return nerve_monotonic_ns(); }

// A topic publisher. Thread-safety: as nerve_publisher (any thread).
class Publisher {
   public:
    explicit Publisher(std::string_view topic, const nerve_publisher_options *options = nullptr) {
        nerve_publisher *p = nullptr;
        detail::check(nerve_publisher_new(detail::c(topic).c_str(), options, &p));
        publisher_.reset(p);
    }
    void send(Bytes data, const char *parameters_json = nullptr) {
        detail::check(nerve_publisher_send_bytes(publisher_.get(), parameters_json, data.data, data.size));
    }
    void send(ArrowArray *array, const ArrowSchema *schema, const char *parameters_json = nullptr) {
        detail::check(nerve_publisher_send_arrow(publisher_.get(), parameters_json, array, schema));
    }
    // `len` bytes of shared memory, to fill and send() without a copy.
    Sample loan(size_t len, const char *parameters_json = nullptr) {
        nerve_sample *sample = nullptr;
        detail::check(nerve_publisher_loan(publisher_.get(), parameters_json, len, &sample));
        return Sample(sample);
    }
    // Sends a sample this publisher lent; on failure it stays unsent.
    void send(Sample &&sample) {
        detail::check(nerve_publisher_send_sample(publisher_.get(), sample.get()));
        sample.release();
    }
    // Whether `count` subscribers were reached within `timeout_ms`.
    bool wait_for_subscribers(size_t count, int64_t timeout_ms) {
        return detail::check(nerve_publisher_wait_for_subscribers(publisher_.get(), count, timeout_ms)) ==
               NERVE_STATUS_OK;
    }
    size_t subscriber_count() const {
        size_t n;
        detail::check(nerve_publisher_subscriber_count(publisher_.get(), &n));
        return n;
    }
    nerve_publisher *get() const noexcept { return publisher_.get(); }

   private:
    detail::Handle<nerve_publisher, nerve_publisher_free> publisher_;
};

// A topic subscriber: read with recv(), or handing each message to a callable on nerve's
// threads. Thread-safety: as nerve_subscriber (any thread).
class Subscriber {
   public:
    using Callback = std::function<void(const EventView &)>;

    explicit Subscriber(std::string_view topic, const nerve_subscriber_options *options = nullptr) {
        nerve_subscriber *s = nullptr;
        detail::check(nerve_subscriber_new(detail::c(topic).c_str(), options, &s));
        subscriber_.reset(s);
    }
    // Hands every message to `callback` (serially with `workers` 0, else on that many threads).
    // An exception it throws is dropped with the message: it must not reach nerve's threads.
    Subscriber(std::string_view topic, Callback callback, size_t workers = 0,
               const nerve_subscriber_options *options = nullptr)
        : callback_(std::make_unique<Callback>(std::move(callback))) {
        nerve_subscriber *s = nullptr;
        detail::check(nerve_subscriber_new_callback(detail::c(topic).c_str(), options, workers, &Subscriber::call,
                                                    callback_.get(), &s));
        subscriber_.reset(s);
    }

    // The next message within `timeout_ms` (-1: no limit), or nullopt.
    std::optional<Event> recv(int64_t timeout_ms = -1) {
        nerve_event *event = nullptr;
        if (detail::check(nerve_subscriber_recv(subscriber_.get(), timeout_ms, &event)) != NERVE_STATUS_OK)
            return std::nullopt;
        return Event(event);
    }
    size_t publisher_count() const {
        size_t n;
        detail::check(nerve_subscriber_publisher_count(subscriber_.get(), &n));
        return n;
    }
    nerve_subscriber *get() const noexcept { return subscriber_.get(); }

   private:
    static void call(const nerve_event *event, void *user_data) noexcept {
        try {
            (*static_cast<Callback *>(user_data))(EventView(event));
        } catch (...) {
        }
    }
    // Declared first so it outlives the subscriber, whose destructor waits for calls under way.
    std::unique_ptr<Callback> callback_;
    detail::Handle<nerve_subscriber, nerve_subscriber_free> subscriber_;
};

// A client of one service. Thread-safety: as nerve_client (any thread; calls run side by side).
class Client {
   public:
    explicit Client(std::string_view service, uint32_t domain = 0) {
        nerve_client *c = nullptr;
        detail::check(nerve_client_new(detail::c(service).c_str(), domain, &c));
        client_.reset(c);
    }
    bool wait_for_server(int64_t timeout_ms) {
        return detail::check(nerve_client_wait_for_server(client_.get(), timeout_ms)) == NERVE_STATUS_OK;
    }
    // The reply within `timeout_ms`; throws nerve::Error otherwise, a timeout included (a call
    // that got no answer failed: status NERVE_STATUS_TIMEOUT), a refusal with the handler's reason.
    Event call(Bytes request, int64_t timeout_ms, const char *parameters_json = nullptr) {
        nerve_event *reply = nullptr;
        int status = nerve_client_call_bytes(client_.get(), parameters_json, request.data, request.size, timeout_ms,
                                             &reply);
        if (status != NERVE_STATUS_OK) throw Error(status, nerve_last_error());
        return Event(reply);
    }
    nerve_client *get() const noexcept { return client_.get(); }

   private:
    detail::Handle<nerve_client, nerve_client_free> client_;
};

// The reply a server's handler fills, lent for the call.
class Reply {
   public:
    explicit Reply(nerve_reply *reply) noexcept : reply_(reply) {}
    void bytes(Bytes data, const char *parameters_json = nullptr) {
        detail::check(nerve_reply_bytes(reply_, parameters_json, data.data, data.size));
    }
    void arrow(ArrowArray *array, const ArrowSchema *schema, const char *parameters_json = nullptr) {
        detail::check(nerve_reply_arrow(reply_, parameters_json, array, schema));
    }
    void error(std::string_view reason) { detail::check(nerve_reply_error(reply_, detail::c(reason).c_str())); }

   private:
    nerve_reply *reply_;
};

// A server of one service, answering with a callable on `workers` threads of nerve's until
// destroyed. An exception the handler throws fails the request with its what() as the reason.
// Thread-safety: the destructor only.
class Server {
   public:
    using Handler = std::function<void(const EventView &request, Reply &reply)>;

    Server(std::string_view service, Handler handler, size_t workers = 1, uint32_t domain = 0)
        : handler_(std::make_unique<Handler>(std::move(handler))) {
        nerve_server *s = nullptr;
        detail::check(nerve_server_new(detail::c(service).c_str(), domain, workers, &Server::call, handler_.get(), &s));
        server_.reset(s);
    }

   private:
    static void call(const nerve_event *request, nerve_reply *reply, void *user_data) noexcept {
        Reply r(reply);
        try {
            (*static_cast<Handler *>(user_data))(EventView(request), r);
        } catch (const std::exception &e) {
            nerve_reply_error(reply, e.what());
        } catch (...) {
            nerve_reply_error(reply, "the C++ handler threw");
        }
    }
    std::unique_ptr<Handler> handler_;
    detail::Handle<nerve_server, nerve_server_free> server_;
};

using Transform = nerve_transform;

// Where frames are: the transforms of a domain, kept as they come (moving edges for `cache_ms`,
// 10 s by default), looked up at a time. Thread-safety: any thread.
class TfBuffer {
   public:
    explicit TfBuffer(uint32_t domain = 0, uint64_t cache_ms = 0) {
        nerve_tf_buffer *b = nullptr;
        detail::check(nerve_tf_buffer_new(domain, cache_ms, &b));
        buffer_.reset(b);
    }
    // The pose of `source` in `target` at `time_ns` (NERVE_TF_LATEST: the latest all edges
    // have), waiting up to `timeout_ms` for it to come. Throws nerve::Error naming both frames
    // when the frames are not joined at that time (NERVE_STATUS_NOT_FOUND or, after a wait,
    // NERVE_STATUS_TIMEOUT), as tf2's lookupTransform does; can_transform() asks first.
    Transform lookup(std::string_view target, std::string_view source, int64_t time_ns = NERVE_TF_LATEST,
                     int64_t timeout_ms = 0) const {
        Transform t{};
        int status = nerve_tf_buffer_lookup(buffer_.get(), detail::c(target).c_str(), detail::c(source).c_str(),
                                            time_ns, timeout_ms, &t);
        if (status != NERVE_STATUS_OK) throw Error(status, nerve_last_error());
        return t;
    }
    // Whether lookup() would answer, waiting up to `timeout_ms`; failures other than "not
    // joined" still throw.
    bool can_transform(std::string_view target, std::string_view source, int64_t time_ns = NERVE_TF_LATEST,
                       int64_t timeout_ms = 0) const {
        Transform t{};
        int status = nerve_tf_buffer_lookup(buffer_.get(), detail::c(target).c_str(), detail::c(source).c_str(),
                                            time_ns, timeout_ms, &t);
        if (status == NERVE_STATUS_NOT_FOUND || status == NERVE_STATUS_TIMEOUT) return false;
        detail::check(status);
        return true;
    }
    nerve_tf_buffer *get() const noexcept { return buffer_.get(); }

   private:
    detail::Handle<nerve_tf_buffer, nerve_tf_buffer_free> buffer_;
};

// Sends transforms of a domain: of fixed frames when `is_static` (every buffer gets the last of
// each edge, even one that starts later), else of moving ones. Thread-safety: any thread.
class TfBroadcaster {
   public:
    explicit TfBroadcaster(bool is_static = false, uint32_t domain = 0) {
        nerve_tf_broadcaster *b = nullptr;
        detail::check(nerve_tf_broadcaster_new(domain, is_static, &b));
        broadcaster_.reset(b);
    }
    // The pose of `child` in `parent` at `transform.stamp_ns` (NERVE_TF_NOW: now).
    void send(std::string_view parent, std::string_view child, const Transform &transform) {
        detail::check(
            nerve_tf_broadcaster_send(broadcaster_.get(), detail::c(parent).c_str(), detail::c(child).c_str(), &transform));
    }
    nerve_tf_broadcaster *get() const noexcept { return broadcaster_.get(); }

   private:
    detail::Handle<nerve_tf_broadcaster, nerve_tf_broadcaster_free> broadcaster_;
};

}  // namespace nerve

#endif  // NERVE_HPP
