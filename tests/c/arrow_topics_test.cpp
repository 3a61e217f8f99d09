// Arrow C++ (the library inside the pyarrow wheel) on both ends of a topic: arrays it exports
// are published with nerve_publisher_send_arrow, and what nerve_event_arrow exports, from the
// same process (the publisher's very buffers) and from another one (shared memory), imports,
// validates and equals what was sent. The other process is this program, run again. The last
// test does the same through nerve/arrow.hpp, the C++ bridge.
#include <arrow/api.h>
#include <arrow/c/bridge.h>
#include <arrow/json/from_string.h>
#include <nerve/arrow.hpp>

#include "common.h"

namespace {

constexpr int64_t WAIT_MS = 10000;
constexpr const char *PEER_TOPIC = "NERVE_TEST_ARROW_TOPIC";

// Arrays with nulls, offsets and children: more than one buffer of bytes.
std::vector<std::shared_ptr<arrow::Array>> cases() {
    auto strings = arrow::json::ArrayFromJSONString(arrow::utf8(), R"(["nerve", null, "", "ünïcödé"])");
    auto structs = arrow::json::ArrayFromJSONString(
        arrow::struct_({arrow::field("x", arrow::float64()), arrow::field("tags", arrow::list(arrow::int32()))}),
        R"([{"x": 1.5, "tags": [1, 2]}, null, {"x": -2, "tags": []}])");
    return {*strings, *structs, (*strings)->Slice(1, 2)};
}

void send_all(nerve_publisher *publisher) {
    for (const auto &array : cases()) {
        ArrowArray c_array;
        ArrowSchema c_schema;
        ASSERT_TRUE(arrow::ExportArray(*array, &c_array, &c_schema).ok());
        ASSERT_OK(nerve_publisher_send_arrow(publisher, nullptr, &c_array, &c_schema));
        EXPECT_EQ(c_array.release, nullptr);
        c_schema.release(&c_schema);
    }
}

void receive_all(nerve_subscriber *subscriber) {
    for (const auto &expected : cases()) {
        nerve_event *event;
        ASSERT_OK(nerve_subscriber_recv(subscriber, WAIT_MS, &event));
        ArrowArray c_array;
        ArrowSchema c_schema;
        ASSERT_OK(nerve_event_arrow(event, &c_array, &c_schema));
        nerve_event_free(event);  // the imported array holds the memory by itself
        auto imported = arrow::ImportArray(&c_array, &c_schema);
        ASSERT_TRUE(imported.ok()) << imported.status().ToString();
        ASSERT_TRUE((*imported)->ValidateFull().ok()) << (*imported)->ValidateFull().ToString();
        EXPECT_TRUE((*imported)->Equals(*expected)) << (*imported)->ToString() << " is not " << expected->ToString();
    }
}

TEST(ArrowTopics, SameProcess) {
    std::string topic = unique("c/arrow_cpp");
    nerve_subscriber *subscriber;
    nerve_publisher *publisher;
    ASSERT_OK(nerve_subscriber_new(topic.c_str(), nullptr, &subscriber));
    ASSERT_OK(nerve_publisher_new(topic.c_str(), nullptr, &publisher));
    ASSERT_OK(nerve_publisher_wait_for_subscribers(publisher, 1, WAIT_MS));
    send_all(publisher);
    receive_all(subscriber);
    nerve_publisher_free(publisher);
    nerve_subscriber_free(subscriber);
}

// Run by ArrowTopics.AcrossProcesses only, in a process of its own.
TEST(Peer, ArrowPublisher) {
    const char *topic = std::getenv(PEER_TOPIC);
    if (topic == nullptr) GTEST_SKIP() << "the publishing half of ArrowTopics.AcrossProcesses";
    nerve_publisher *publisher, *done;
    ASSERT_OK(nerve_publisher_new(topic, nullptr, &publisher));
    ASSERT_OK(nerve_publisher_wait_for_subscribers(publisher, 1, WAIT_MS));
    send_all(publisher);
    ASSERT_OK(nerve_publisher_new((std::string(topic) + "_done").c_str(), nullptr, &done));
    ASSERT_OK(nerve_publisher_wait_for_subscribers(done, 1, WAIT_MS));
    nerve_publisher_free(done);
    nerve_publisher_free(publisher);
}

TEST(ArrowTopics, AcrossProcesses) {
    std::string topic = unique("c/arrow_peer");
    nerve_subscriber *subscriber, *done;
    ASSERT_OK(nerve_subscriber_new(topic.c_str(), nullptr, &subscriber));
    pid_t peer = spawn_self("Peer.ArrowPublisher", PEER_TOPIC, topic);
    ASSERT_GT(peer, 0);
    receive_all(subscriber);
    ASSERT_OK(nerve_subscriber_new((topic + "_done").c_str(), nullptr, &done));
    EXPECT_TRUE(exited_well(peer)) << "the publishing process failed";
    nerve_subscriber_free(done);
    nerve_subscriber_free(subscriber);
}

TEST(ArrowTopics, ThroughTheCppBridge) {
    std::string topic = unique("c/arrow_bridge");
    nerve::Subscriber subscriber(topic);
    nerve::Publisher publisher(topic);
    ASSERT_TRUE(publisher.wait_for_subscribers(1, WAIT_MS));
    for (const auto &array : cases()) nerve::arrow::send(publisher, *array, "{\"bridge\": true}");
    for (const auto &expected : cases()) {
        std::shared_ptr<arrow::Array> got;
        {
            std::optional<nerve::Event> event = subscriber.recv(WAIT_MS);
            ASSERT_TRUE(event);
            EXPECT_EQ(event->parameter_json("bridge"), "true");
            got = nerve::arrow::import(*event);
        }
        ASSERT_TRUE(got->ValidateFull().ok()) << got->ValidateFull().ToString();
        EXPECT_TRUE(got->Equals(*expected)) << got->ToString() << " is not " << expected->ToString();
    }
}

}  // namespace
