// Topics from C, with no dataflow: a publisher and a subscriber in one process (the subscriber
// gets the publisher's very buffers), a callback subscriber, two processes (this program runs
// itself as the publishing peer), and misuse. Waits are nerve's own barriers
// (nerve_publisher_wait_for_subscribers) and condition variables, never sleeps.
#include <pthread.h>

#include <condition_variable>
#include <cstring>
#include <mutex>

#include "common.h"

namespace {

constexpr int64_t WAIT_MS = 10000;

nerve_publisher *publish(const std::string &topic, const nerve_publisher_options *options = nullptr) {
    nerve_publisher *publisher = nullptr;
    EXPECT_EQ(nerve_publisher_new(topic.c_str(), options, &publisher), NERVE_STATUS_OK) << last_error();
    return publisher;
}

nerve_subscriber *subscribe(const std::string &topic, const nerve_subscriber_options *options = nullptr) {
    nerve_subscriber *subscriber = nullptr;
    EXPECT_EQ(nerve_subscriber_new(topic.c_str(), options, &subscriber), NERVE_STATUS_OK) << last_error();
    return subscriber;
}

TEST(Topics, BytesParametersAndLoansInOneProcess) {
    std::string topic = unique("c/bytes");
    nerve_subscriber *subscriber = subscribe(topic);
    nerve_publisher *publisher = publish(topic);
    ASSERT_OK(nerve_publisher_wait_for_subscribers(publisher, 1, WAIT_MS));

    ASSERT_OK(nerve_publisher_send_bytes(publisher, "{\"n\": 7, \"name\": \"seven\"}", (const uint8_t *)"hello", 5));
    nerve_event *event = nullptr;
    ASSERT_OK(nerve_subscriber_recv(subscriber, WAIT_MS, &event));
    nerve_event_type type;
    const char *id;
    int64_t n;
    uint64_t stamp;
    ASSERT_OK(nerve_event_get_type(event, &type));
    EXPECT_EQ(type, NERVE_EVENT_TYPE_INPUT);
    ASSERT_OK(nerve_event_input_id(event, &id));
    EXPECT_EQ(std::string(id), topic);
    EXPECT_EQ(event_bytes(event), "hello");
    ASSERT_OK(nerve_event_parameter_int(event, "n", &n));
    EXPECT_EQ(n, 7);
    ASSERT_OK(nerve_event_timestamp(event, &stamp));
    EXPECT_GT(stamp, 0u);
    nerve_event_free(event);

    nerve_sample *sample;
    uint8_t *data;
    size_t len;
    ASSERT_OK(nerve_publisher_loan(publisher, nullptr, 4, &sample));
    ASSERT_OK(nerve_sample_data(sample, &data, &len));
    ASSERT_EQ(len, 4u);
    std::memcpy(data, "loan", 4);
    ASSERT_OK(nerve_publisher_send_sample(publisher, sample));
    ASSERT_OK(nerve_subscriber_recv(subscriber, WAIT_MS, &event));
    EXPECT_EQ(event_bytes(event), "loan");
    nerve_event_free(event);

    size_t count;
    ASSERT_OK(nerve_subscriber_publisher_count(subscriber, &count));
    EXPECT_EQ(count, 1u);
    ASSERT_OK(nerve_publisher_subscriber_count(publisher, &count));
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(nerve_subscriber_recv(subscriber, 0, &event), NERVE_STATUS_TIMEOUT);
    EXPECT_EQ(event, nullptr);
    nerve_publisher_free(publisher);
    nerve_subscriber_free(subscriber);
}

TEST(Topics, SameProcessSubscriberGetsTheVeryBuffer) {
    std::string topic = unique("c/arrow");
    nerve_subscriber *subscriber = subscribe(topic);
    nerve_publisher *publisher = publish(topic);
    ASSERT_OK(nerve_publisher_wait_for_subscribers(publisher, 1, WAIT_MS));

    HandMadeInt64 mine{{1, 2, 3, 4}};
    ArrowArray array = mine.array();
    ArrowSchema schema = HandMadeInt64::schema();
    ASSERT_OK(nerve_publisher_send_arrow(publisher, nullptr, &array, &schema));
    EXPECT_EQ(array.release, nullptr);  // moved into nerve
    schema.release(&schema);

    nerve_event *event;
    ASSERT_OK(nerve_subscriber_recv(subscriber, WAIT_MS, &event));
    ArrowArray got;
    ArrowSchema got_schema;
    ASSERT_OK(nerve_event_arrow(event, &got, &got_schema));
    EXPECT_STREQ(got_schema.format, "l");
    EXPECT_EQ(got.length, 4);
    EXPECT_EQ(got.buffers[1], mine.values.data()) << "a subscriber of this process gets the publisher's buffer";
    const uint8_t *bytes;
    size_t len;
    ASSERT_OK(nerve_event_bytes(event, &bytes, &len));
    EXPECT_EQ(static_cast<const void *>(bytes), mine.values.data());
    EXPECT_EQ(len, 4 * sizeof(int64_t));
    nerve_event_free(event);
    EXPECT_EQ(mine.releases, 0) << "the exported array still holds the buffer";
    got.release(&got);
    got_schema.release(&got_schema);
    EXPECT_EQ(mine.releases, 1) << "released once the last holder let go";
    nerve_publisher_free(publisher);
    nerve_subscriber_free(subscriber);
}

struct Received {
    std::mutex lock;
    std::condition_variable changed;
    std::vector<std::string> values;
    std::vector<std::string> threads;
};

void on_message(const nerve_event *event, void *user_data) {
    auto *received = static_cast<Received *>(user_data);
    char thread[32] = {};
    pthread_getname_np(pthread_self(), thread, sizeof thread);
    std::string value = event_bytes(event);
    std::lock_guard<std::mutex> hold(received->lock);
    received->values.push_back(value);
    received->threads.push_back(thread);
    received->changed.notify_all();
}

TEST(Topics, CallbackRunsOnNervesThreadInOrder) {
    std::string topic = unique("c/callback");
    Received received;
    nerve_subscriber *subscriber = nullptr;
    ASSERT_OK(nerve_subscriber_new_callback(topic.c_str(), nullptr, 0, on_message, &received, &subscriber));
    nerve_publisher *publisher = publish(topic);
    ASSERT_OK(nerve_publisher_wait_for_subscribers(publisher, 1, WAIT_MS));
    for (const char *word : {"one", "two", "three"})
        ASSERT_OK(nerve_publisher_send_bytes(publisher, nullptr, (const uint8_t *)word, std::strlen(word)));
    {
        std::unique_lock<std::mutex> hold(received.lock);
        ASSERT_TRUE(received.changed.wait_for(hold, std::chrono::milliseconds(WAIT_MS),
                                              [&] { return received.values.size() == 3; }));
    }
    EXPECT_EQ(received.values, (std::vector<std::string>{"one", "two", "three"}));
    // pthread names hold 15 characters: "nerve-dispatch:" fills them.
    EXPECT_EQ(received.threads[0].rfind("nerve-dispatch", 0), 0u) << received.threads[0];
    nerve_event *event;
    EXPECT_STATUS(nerve_subscriber_recv(subscriber, 0, &event), NERVE_STATUS_INVALID_ARGUMENT,
                  "nerve_subscriber_recv", "hands its messages to its callback");
    ASSERT_OK(nerve_subscriber_free(subscriber));  // waits for a call under way
    nerve_publisher_free(publisher);
}

// --- two processes: this program, run again as the publisher ---

constexpr const char *PEER_TOPIC = "NERVE_TEST_PEER_TOPIC";

uint64_t checksum(const uint8_t *data, size_t len) {
    uint64_t sum = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) sum = (sum ^ data[i]) * 1099511628211ull;
    return sum;
}

const std::vector<size_t> PEER_SIZES = {8, 4096, 1 << 20, 16 << 20};

// Run by Topics.AcrossProcesses only, in a process of its own.
TEST(Peer, Publisher) {
    const char *topic = std::getenv(PEER_TOPIC);
    if (topic == nullptr) GTEST_SKIP() << "the publishing half of Topics.AcrossProcesses";
    nerve_publisher *publisher = publish(topic);
    ASSERT_OK(nerve_publisher_wait_for_subscribers(publisher, 1, WAIT_MS));
    for (size_t size : PEER_SIZES) {
        std::vector<uint8_t> pattern(size);
        for (size_t i = 0; i < size; i++) pattern[i] = static_cast<uint8_t>(i * 31 + size);
        std::string parameters = "{\"checksum\": \"" + std::to_string(checksum(pattern.data(), size)) + "\"}";
        nerve_sample *sample;
        uint8_t *data;
        size_t len;
        ASSERT_OK(nerve_publisher_loan(publisher, parameters.c_str(), size, &sample));
        ASSERT_OK(nerve_sample_data(sample, &data, &len));
        std::memcpy(data, pattern.data(), len);  // written straight into shared memory
        ASSERT_OK(nerve_publisher_send_sample(publisher, sample));
    }
    // The subscriber says it has everything by subscribing to the answer topic.
    nerve_publisher *done = publish(std::string(topic) + "_done");
    ASSERT_OK(nerve_publisher_wait_for_subscribers(done, 1, WAIT_MS));
    nerve_publisher_free(done);
    nerve_publisher_free(publisher);
}

// A run's topic and the shared one of the same name are two topics: each subscriber gets its
// own publisher's message only.
TEST(Topics, ARunsTopicAndTheSharedOneAreTwo) {
    std::string topic = unique("c/scoped");
    nerve_publisher_options shared_pub = nerve_publisher_options_default(), run_pub = shared_pub;
    shared_pub.shared = true;
    run_pub.run = "c-test-run";
    nerve_subscriber_options shared_sub = nerve_subscriber_options_default(), run_sub = shared_sub;
    shared_sub.shared = true;
    run_sub.run = "c-test-run";
    nerve_subscriber *shared_reader = subscribe(topic, &shared_sub), *run_reader = subscribe(topic, &run_sub);
    nerve_publisher *shared = publish(topic, &shared_pub), *run = publish(topic, &run_pub);
    ASSERT_OK(nerve_publisher_wait_for_subscribers(shared, 1, WAIT_MS));
    ASSERT_OK(nerve_publisher_wait_for_subscribers(run, 1, WAIT_MS));
    const uint8_t one = 1, two = 2;
    ASSERT_OK(nerve_publisher_send_bytes(shared, nullptr, &one, 1));
    ASSERT_OK(nerve_publisher_send_bytes(run, nullptr, &two, 1));
    for (auto [reader, expected] : {std::pair{shared_reader, one}, std::pair{run_reader, two}}) {
        nerve_event *event;
        ASSERT_OK(nerve_subscriber_recv(reader, WAIT_MS, &event));
        const uint8_t *data;
        size_t len;
        ASSERT_OK(nerve_event_bytes(event, &data, &len));
        EXPECT_EQ(std::vector<uint8_t>(data, data + len), std::vector<uint8_t>{expected});
        nerve_event_free(event);
    }
    // Nothing else came: the other publisher's message would have been as quick as its own.
    nerve_event *extra = nullptr;
    EXPECT_EQ(nerve_subscriber_recv(shared_reader, 200, &extra), NERVE_STATUS_TIMEOUT);
    EXPECT_EQ(nerve_subscriber_recv(run_reader, 200, &extra), NERVE_STATUS_TIMEOUT);
    for (nerve_publisher *p : {shared, run}) nerve_publisher_free(p);
    for (nerve_subscriber *r : {shared_reader, run_reader}) nerve_subscriber_free(r);
}

TEST(Topics, AcrossProcesses) {
    std::string topic = unique("c/peer");
    nerve_subscriber *subscriber = subscribe(topic);
    pid_t peer = spawn_self("Peer.Publisher", PEER_TOPIC, topic);
    ASSERT_GT(peer, 0);

    for (size_t size : PEER_SIZES) {
        nerve_event *event = nullptr;
        ASSERT_OK(nerve_subscriber_recv(subscriber, WAIT_MS, &event));
        const uint8_t *data;
        size_t len;
        const char *text;
        size_t text_len;
        ASSERT_OK(nerve_event_bytes(event, &data, &len));
        EXPECT_EQ(len, size);
        ASSERT_OK(nerve_event_parameter_string(event, "checksum", &text, &text_len));
        EXPECT_EQ(std::string(text, text_len), std::to_string(checksum(data, len))) << size << " bytes";
        nerve_event_free(event);
    }
    nerve_subscriber *done = subscribe(topic + "_done");
    EXPECT_TRUE(exited_well(peer)) << "the publishing process failed";
    nerve_subscriber_free(done);
    nerve_subscriber_free(subscriber);
}

// --- misuse ---

TEST(TopicMisuse, NullAndFreedHandles) {
    nerve_publisher *publisher = nullptr;
    nerve_subscriber *subscriber = nullptr;
    nerve_event *event;
    nerve_sample *sample;
    size_t count;
    EXPECT_STATUS(nerve_publisher_new(nullptr, nullptr, &publisher), NERVE_STATUS_NULL_ARGUMENT, "nerve_publisher_new",
                  "`topic` is NULL");
    EXPECT_STATUS(nerve_publisher_new("t", nullptr, nullptr), NERVE_STATUS_NULL_ARGUMENT, "`publisher` is NULL");
    EXPECT_STATUS(nerve_publisher_send_bytes(nullptr, nullptr, nullptr, 0), NERVE_STATUS_NULL_ARGUMENT,
                  "nerve_publisher_send_bytes", "`publisher` is NULL");
    EXPECT_STATUS(nerve_publisher_send_arrow(nullptr, nullptr, nullptr, nullptr), NERVE_STATUS_NULL_ARGUMENT,
                  "`array` is NULL");
    EXPECT_STATUS(nerve_publisher_loan(nullptr, nullptr, 8, &sample), NERVE_STATUS_NULL_ARGUMENT, "nerve_publisher_loan");
    EXPECT_STATUS(nerve_publisher_send_sample(nullptr, nullptr), NERVE_STATUS_NULL_ARGUMENT, "nerve_publisher_send_sample");
    EXPECT_STATUS(nerve_publisher_subscriber_count(nullptr, &count), NERVE_STATUS_NULL_ARGUMENT, "subscriber_count");
    EXPECT_STATUS(nerve_publisher_wait_for_subscribers(nullptr, 1, 0), NERVE_STATUS_NULL_ARGUMENT, "wait_for_subscribers");
    EXPECT_STATUS(nerve_subscriber_recv(nullptr, 0, &event), NERVE_STATUS_NULL_ARGUMENT, "nerve_subscriber_recv",
                  "`subscriber` is NULL");
    EXPECT_STATUS(nerve_subscriber_new_callback("t", nullptr, 0, nullptr, nullptr, &subscriber),
                  NERVE_STATUS_NULL_ARGUMENT, "`callback` is NULL");
    EXPECT_EQ(nerve_publisher_free(nullptr), NERVE_STATUS_OK);
    EXPECT_EQ(nerve_subscriber_free(nullptr), NERVE_STATUS_OK);
    EXPECT_STATUS(nerve_subscriber_free(freed_pointer<nerve_subscriber>()), NERVE_STATUS_INVALID_HANDLE,
                  "not a live nerve_subscriber");
    EXPECT_STATUS(nerve_publisher_free(reinterpret_cast<nerve_publisher *>(subscriber = subscribe(unique("c/kind")))),
                  NERVE_STATUS_INVALID_HANDLE, "not a live nerve_publisher");
    ASSERT_OK(nerve_subscriber_free(subscriber));
    EXPECT_STATUS(nerve_subscriber_recv(subscriber, 0, &event), NERVE_STATUS_INVALID_HANDLE, "freed or used up");
}

TEST(TopicMisuse, BadNamesOptionsAndTimeouts) {
    nerve_publisher *publisher = nullptr;
    nerve_subscriber *subscriber = nullptr;
    EXPECT_STATUS(nerve_publisher_new("bad name!", nullptr, &publisher), NERVE_STATUS_INVALID_ARGUMENT,
                  "invalid topic name `bad name!`");
    nerve_publisher_options options = nerve_publisher_options_default();
    options.scope = 9;
    EXPECT_STATUS(nerve_publisher_new("t", &options, &publisher), NERVE_STATUS_INVALID_ARGUMENT, "options->scope",
                  "is 9");
    nerve_subscriber_options sub_options = nerve_subscriber_options_default();
    sub_options.queue_size = 0;
    EXPECT_STATUS(nerve_subscriber_new("t", &sub_options, &subscriber), NERVE_STATUS_INVALID_ARGUMENT, "queue_size");
    sub_options = nerve_subscriber_options_default();
    sub_options.run = "a-run";
    sub_options.shared = true;
    EXPECT_STATUS(nerve_subscriber_new("t", &sub_options, &subscriber), NERVE_STATUS_INVALID_ARGUMENT,
                  "options->run", "a run's or shared, not both");
    sub_options.shared = false;
    sub_options.run = "no spaces";
    EXPECT_STATUS(nerve_subscriber_new("t", &sub_options, &subscriber), NERVE_STATUS_INVALID_ARGUMENT, "no spaces");
    EXPECT_EQ(publisher, nullptr);
    publisher = publish(unique("c/timeouts"));
    EXPECT_STATUS(nerve_publisher_wait_for_subscribers(publisher, 1, -1), NERVE_STATUS_INVALID_ARGUMENT,
                  "`timeout_ms` is -1");
    EXPECT_EQ(nerve_publisher_wait_for_subscribers(publisher, 1, 0), NERVE_STATUS_TIMEOUT);
    nerve_publisher_free(publisher);
}

TEST(TopicMisuse, OversizedBadArrowAndForeignSamples) {
    std::string topic = unique("c/small");
    nerve_publisher_options options = nerve_publisher_options_default();
    options.max_message = 64;
    options.scope = NERVE_SCOPE_HOST;
    nerve_publisher *small = publish(topic, &options);
    std::vector<uint8_t> big(4096, 1);
    nerve_sample *sample = nullptr;
    EXPECT_STATUS(nerve_publisher_loan(small, nullptr, big.size(), &sample), NERVE_STATUS_TOO_LARGE,
                  "nerve_publisher_loan", "exceeds the limit of 64 bytes", topic.c_str());
    EXPECT_EQ(sample, nullptr);

    HandMadeInt64 mine{{1}};
    ArrowArray array = mine.array();
    ArrowSchema schema = HandMadeInt64::schema();
    schema.format = "not a format";
    EXPECT_STATUS(nerve_publisher_send_arrow(small, nullptr, &array, &schema), NERVE_STATUS_INVALID_ARGUMENT,
                  "nerve_publisher_send_arrow", "Arrow C data interface");
    EXPECT_EQ(mine.releases, 1) << "a refused array is released all the same";

    nerve_publisher *other = publish(unique("c/other"));
    ASSERT_OK(nerve_publisher_loan(other, nullptr, 8, &sample));
    EXPECT_STATUS(nerve_publisher_send_sample(small, sample), NERVE_STATUS_INVALID_ARGUMENT,
                  "nerve_publisher_send_sample");
    ASSERT_OK(nerve_publisher_send_sample(other, sample)) << "a refused sample stays the caller's";
    EXPECT_STATUS(nerve_sample_free(sample), NERVE_STATUS_INVALID_HANDLE, "nerve_sample_free");
    EXPECT_STATUS(nerve_publisher_send_bytes(small, "[1]", nullptr, 0), NERVE_STATUS_INVALID_ARGUMENT,
                  "`parameters_json` is not a JSON object");
    nerve_publisher_free(other);
    nerve_publisher_free(small);
}

}  // namespace
