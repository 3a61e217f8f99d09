// Services from C, with no dataflow: a C server answering a C client in one process (bytes,
// Arrow, a handler's error), a call with no server, one that times out, and misuse. The server's
// handler is held by a condition variable where a test needs it busy, never by a sleep.
#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>

#include "common.h"

namespace {

constexpr int64_t WAIT_MS = 10000;

// Held while `held` is true: a handler busy for as long as the test wants.
struct Gate {
    std::mutex lock;
    std::condition_variable opened;
    bool held = false;
    std::string thread;
};

// Upper-cases bytes; sums an int64 array; fails a request of "fail"; waits at the gate first.
void handler(const nerve_event *request, nerve_reply *reply, void *user_data) {
    auto *gate = static_cast<Gate *>(user_data);
    {
        std::unique_lock<std::mutex> hold(gate->lock);
        char thread[32] = {};
        pthread_getname_np(pthread_self(), thread, sizeof thread);
        gate->thread = thread;
        gate->opened.wait(hold, [&] { return !gate->held; });
    }
    ArrowArray array;
    ArrowSchema schema;
    if (nerve_event_arrow(request, &array, &schema) != NERVE_STATUS_OK) {
        nerve_reply_error(reply, nerve_last_error());
        return;
    }
    std::string format = schema.format;
    array.release(&array);
    schema.release(&schema);
    const uint8_t *data;
    size_t len;
    nerve_event_bytes(request, &data, &len);
    if (format == "l") {
        int64_t sum = 0;
        for (size_t i = 0; i < len / 8; i++) {
            int64_t v;
            std::memcpy(&v, data + 8 * i, 8);
            sum += v;
        }
        nerve_reply_bytes(reply, "{\"kind\": \"sum\"}", reinterpret_cast<const uint8_t *>(&sum), sizeof sum);
        return;
    }
    std::string text(reinterpret_cast<const char *>(data), len);
    if (text == "fail") {
        nerve_reply_error(reply, "asked to fail");
        return;
    }
    std::transform(text.begin(), text.end(), text.begin(), ::toupper);
    nerve_reply_bytes(reply, nullptr, reinterpret_cast<const uint8_t *>(text.data()), text.size());
}

struct Served {
    Gate gate;
    std::string name = unique("c_upper");
    nerve_server *server = nullptr;
    nerve_client *client = nullptr;

    Served() {
        EXPECT_EQ(nerve_server_new(name.c_str(), 0, 2, handler, &gate, &server), NERVE_STATUS_OK) << last_error();
        EXPECT_EQ(nerve_client_new(name.c_str(), 0, &client), NERVE_STATUS_OK) << last_error();
        EXPECT_EQ(nerve_client_wait_for_server(client, WAIT_MS), NERVE_STATUS_OK) << last_error();
    }
    ~Served() {
        nerve_client_free(client);
        nerve_server_free(server);
    }
};

TEST(Services, BytesArrowAndErrorsInOneProcess) {
    Served s;
    nerve_event *reply = nullptr;
    ASSERT_OK(nerve_client_call_bytes(s.client, nullptr, (const uint8_t *)"hello", 5, WAIT_MS, &reply));
    EXPECT_EQ(event_bytes(reply), "HELLO");
    const char *id;
    ASSERT_OK(nerve_event_input_id(reply, &id));
    EXPECT_EQ(std::string(id), s.name);
    nerve_event_free(reply);
    EXPECT_EQ(s.gate.thread.rfind("nerve-srv", 0), 0u) << s.gate.thread;

    HandMadeInt64 values{{1, 2, 3, 4}};
    ArrowArray array = values.array();
    ArrowSchema schema = HandMadeInt64::schema();
    ASSERT_OK(nerve_client_call_arrow(s.client, nullptr, &array, &schema, WAIT_MS, &reply));
    EXPECT_EQ(values.releases, 1);
    schema.release(&schema);
    int64_t sum;
    std::string bytes = event_bytes(reply);
    ASSERT_EQ(bytes.size(), sizeof sum);
    std::memcpy(&sum, bytes.data(), sizeof sum);
    EXPECT_EQ(sum, 10);
    const char *kind;
    size_t len;
    ASSERT_OK(nerve_event_parameter_string(reply, "kind", &kind, &len));
    EXPECT_EQ(std::string(kind, len), "sum");
    nerve_event_free(reply);

    EXPECT_STATUS(nerve_client_call_bytes(s.client, nullptr, (const uint8_t *)"fail", 4, WAIT_MS, &reply),
                  NERVE_STATUS_REFUSED, "nerve_client_call_bytes", "failed the request: asked to fail");
    EXPECT_EQ(reply, nullptr);
    size_t count;
    ASSERT_OK(nerve_client_server_count(s.client, &count));
    EXPECT_EQ(count, 1u);
}

TEST(Services, NoServerAndTimeout) {
    nerve_client *nobody;
    nerve_event *reply;
    std::string name = unique("c_nobody");
    ASSERT_OK(nerve_client_new(name.c_str(), 0, &nobody));
    EXPECT_EQ(nerve_client_wait_for_server(nobody, 0), NERVE_STATUS_TIMEOUT);
    EXPECT_STATUS(nerve_client_call_bytes(nobody, nullptr, nullptr, 0, WAIT_MS, &reply), NERVE_STATUS_NOT_FOUND,
                  "no server for service", name.c_str());
    nerve_client_free(nobody);

    Served s;
    {
        std::lock_guard<std::mutex> hold(s.gate.lock);
        s.gate.held = true;
    }
    EXPECT_STATUS(nerve_client_call_bytes(s.client, nullptr, (const uint8_t *)"x", 1, 100, &reply), NERVE_STATUS_TIMEOUT,
                  "did not answer within 100ms");
    EXPECT_EQ(reply, nullptr);
    {
        std::lock_guard<std::mutex> hold(s.gate.lock);
        s.gate.held = false;
    }
    s.gate.opened.notify_all();
}

TEST(ServiceMisuse, NullsFreedHandlesAndRepliesOutsideAHandler) {
    nerve_client *client = nullptr;
    nerve_server *server = nullptr;
    nerve_event *reply;
    size_t count;
    EXPECT_STATUS(nerve_client_new(nullptr, 0, &client), NERVE_STATUS_NULL_ARGUMENT, "nerve_client_new",
                  "`service` is NULL");
    EXPECT_STATUS(nerve_client_new("bad name!", 0, &client), NERVE_STATUS_INVALID_ARGUMENT, "bad name!");
    EXPECT_STATUS(nerve_server_new("s", 0, 1, nullptr, nullptr, &server), NERVE_STATUS_NULL_ARGUMENT,
                  "`handler` is NULL");
    EXPECT_STATUS(nerve_server_new("s", 0, 0, handler, nullptr, &server), NERVE_STATUS_INVALID_ARGUMENT,
                  "`workers` is 0");
    EXPECT_STATUS(nerve_client_call_bytes(nullptr, nullptr, nullptr, 0, 0, &reply), NERVE_STATUS_NULL_ARGUMENT,
                  "`client` is NULL");
    EXPECT_STATUS(nerve_client_call_arrow(nullptr, nullptr, nullptr, nullptr, 0, &reply), NERVE_STATUS_NULL_ARGUMENT,
                  "`array` is NULL");
    EXPECT_STATUS(nerve_client_server_count(freed_pointer<nerve_client>(), &count), NERVE_STATUS_INVALID_HANDLE,
                  "not a live nerve_client");
    EXPECT_STATUS(nerve_reply_bytes(freed_pointer<nerve_reply>(), nullptr, nullptr, 0), NERVE_STATUS_INVALID_HANDLE,
                  "nerve_reply_bytes", "not a live nerve_reply");
    EXPECT_STATUS(nerve_reply_error(nullptr, "x"), NERVE_STATUS_NULL_ARGUMENT, "`reply` is NULL");
    HandMadeInt64 values{{1}};
    ArrowArray array = values.array();
    ArrowSchema schema = HandMadeInt64::schema();
    EXPECT_STATUS(nerve_reply_arrow(nullptr, nullptr, &array, &schema), NERVE_STATUS_NULL_ARGUMENT, "`reply` is NULL");
    EXPECT_EQ(values.releases, 1) << "an array refused is released";
    EXPECT_EQ(nerve_client_free(nullptr), NERVE_STATUS_OK);
    EXPECT_EQ(nerve_server_free(nullptr), NERVE_STATUS_OK);
    EXPECT_STATUS(nerve_server_free(freed_pointer<nerve_server>()), NERVE_STATUS_INVALID_HANDLE, "nerve_server_free");

    ASSERT_OK(nerve_client_new(unique("c_misuse").c_str(), 0, &client));
    EXPECT_STATUS(nerve_client_wait_for_server(client, -1), NERVE_STATUS_INVALID_ARGUMENT, "`timeout_ms` is -1");
    EXPECT_STATUS(nerve_client_call_bytes(client, nullptr, nullptr, 0, -5, &reply), NERVE_STATUS_INVALID_ARGUMENT,
                  "`timeout_ms` is -5");
    EXPECT_STATUS(nerve_client_call_bytes(client, "{", nullptr, 0, 0, &reply), NERVE_STATUS_INVALID_ARGUMENT,
                  "`parameters_json` is not JSON");
    ASSERT_OK(nerve_client_free(client));
    EXPECT_STATUS(nerve_client_free(client), NERVE_STATUS_INVALID_HANDLE, "nerve_client_free");
}

}  // namespace
