// nerve.hpp, compiled as C++17: RAII handles, lambdas as callbacks, nerve::Error on failures,
// range-for over a node's events. Cpp.* run as a plain program; CppNode.* as the node of
// dataflows/cpp_node.yml, fed one message by nodes/feeder.py. Waits are nerve's barriers and a
// condition variable, never sleeps.
#include <nerve.hpp>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <vector>

#include "common.h"
#include "error_of.hpp"

namespace {

constexpr int64_t WAIT_MS = 10000;

TEST(Cpp, ErrorsCarryStatusAndMessage) {
    unsetenv("NERVE_SOCKET");
    nerve::Error outside = error_of([] { nerve::Node node; });
    EXPECT_EQ(outside.status(), NERVE_STATUS_NOT_STARTED_BY_NERVE);
    EXPECT_NE(std::string(outside.what()).find("nerve_node_init_from_env"), std::string::npos) << outside.what();
    nerve::Error bad_name = error_of([] { nerve::Publisher publisher("no spaces allowed"); });
    EXPECT_EQ(bad_name.status(), NERVE_STATUS_INVALID_ARGUMENT) << bad_name.what();
    nerve::Client client(unique("cpp_nobody"));
    nerve::Error no_server = error_of([&] { client.call({}, 100); });
    EXPECT_EQ(no_server.status(), NERVE_STATUS_NOT_FOUND) << no_server.what();
}

TEST(Cpp, TopicsWithALambdaAndRecv) {
    std::string topic = unique("cpp/numbers");
    std::mutex mutex;
    std::condition_variable seen_all;
    std::vector<int64_t> seen;
    nerve::Subscriber watcher(topic, [&](const nerve::EventView &event) {
        std::lock_guard lock(mutex);
        seen.push_back(event.parameter_int("n"));
        seen_all.notify_all();
    });
    nerve::Subscriber reader(topic);
    nerve::Publisher publisher(topic);
    ASSERT_TRUE(publisher.wait_for_subscribers(2, WAIT_MS));
    const uint8_t payload[] = {1, 2, 3};
    for (int n = 0; n < 3; n++) publisher.send({payload, sizeof payload}, ("{\"n\": " + std::to_string(n) + "}").c_str());
    for (int n = 0; n < 3; n++) {
        std::optional<nerve::Event> event = reader.recv(WAIT_MS);
        ASSERT_TRUE(event);
        EXPECT_EQ(event->id(), topic);
        EXPECT_EQ(event->parameter_int("n"), n);
        nerve::Bytes bytes = event->bytes();
        EXPECT_EQ(std::vector<uint8_t>(bytes.begin(), bytes.end()), std::vector<uint8_t>({1, 2, 3}));
    }
    EXPECT_FALSE(reader.recv(0)) << "a timeout is no exception";
    std::unique_lock lock(mutex);
    ASSERT_TRUE(seen_all.wait_for(lock, std::chrono::milliseconds(WAIT_MS), [&] { return seen.size() == 3; }));
    EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2}));
}

TEST(Cpp, ServicesWithALambdaAndItsExceptions) {
    std::string name = unique("cpp_sum");
    nerve::Server server(name, [](const nerve::EventView &request, nerve::Reply &reply) {
        nerve::Bytes bytes = request.bytes();
        if (bytes.empty()) throw std::invalid_argument("nothing to add");
        int64_t sum = 0;
        for (uint8_t b : bytes) sum += b;
        reply.bytes({reinterpret_cast<const uint8_t *>(&sum), sizeof sum});
    });
    nerve::Client client(name);
    ASSERT_TRUE(client.wait_for_server(WAIT_MS));
    const uint8_t operands[] = {2, 3, 4};
    nerve::Event reply = client.call({operands, sizeof operands}, WAIT_MS);
    int64_t sum;
    ASSERT_EQ(reply.bytes().size, sizeof sum);
    std::memcpy(&sum, reply.bytes().data, sizeof sum);
    EXPECT_EQ(sum, 9);
    nerve::Error refused = error_of([&] { client.call({}, WAIT_MS); });
    EXPECT_EQ(refused.status(), NERVE_STATUS_REFUSED);
    EXPECT_NE(std::string(refused.what()).find("nothing to add"), std::string::npos) << refused.what();
}

TEST(Cpp, HandlesMoveAndFreeOnce) {
    std::string topic = unique("cpp/moved");
    nerve::Publisher first(topic);
    nerve::Publisher second = std::move(first);
    EXPECT_EQ(first.get(), nullptr);
    EXPECT_NE(second.get(), nullptr);
    EXPECT_GT(nerve::monotonic_ns(), 0u);
}

TEST(Cpp, LoansAreFilledInPlaceAndDroppedOnesGoBack) {
    std::string topic = unique("cpp/loaned");
    nerve::Subscriber reader(topic);
    nerve::Publisher publisher(topic);
    ASSERT_TRUE(publisher.wait_for_subscribers(1, WAIT_MS));
    { nerve::Sample dropped = publisher.loan(16); }  // given back, never sent
    nerve::Sample sample = publisher.loan(1 << 20, "{\"frame\": 3}");
    nerve::MutableBytes bytes = sample.data();
    ASSERT_EQ(bytes.size, size_t{1} << 20);
    for (size_t i = 0; i < bytes.size; i++) bytes.data[i] = static_cast<uint8_t>(i * 7);
    publisher.send(std::move(sample));
    EXPECT_EQ(sample.get(), nullptr) << "a sent sample is used up";
    std::optional<nerve::Event> event = reader.recv(WAIT_MS);
    ASSERT_TRUE(event);
    EXPECT_EQ(event->parameter_int("frame"), 3);
    EXPECT_EQ(event->parameter_json("frame"), "3");
    nerve::Bytes got = event->bytes();
    ASSERT_EQ(got.size, size_t{1} << 20);
    size_t wrong = 0;
    for (size_t i = 0; i < got.size; i++) wrong += got.data[i] != static_cast<uint8_t>(i * 7);
    EXPECT_EQ(wrong, 0u);
    EXPECT_FALSE(reader.recv(0)) << "the dropped loan was sent";
}

TEST(Cpp, TransformsLookedUpAndMissingFramesNamed) {
    uint32_t domain = 2000 + static_cast<uint32_t>(getpid() % 100000);
    nerve::TfBuffer buffer(domain);
    nerve::TfBroadcaster fixed(true, domain);
    fixed.send("base", "camera", nerve::Transform{NERVE_TF_NOW, {0.2, 0.0, 0.5}, {0, 0, 0, 1}});
    ASSERT_TRUE(buffer.can_transform("base", "camera", NERVE_TF_LATEST, WAIT_MS));
    nerve::Transform t = buffer.lookup("camera", "base");
    EXPECT_DOUBLE_EQ(t.translation.x, -0.2);
    EXPECT_DOUBLE_EQ(t.translation.z, -0.5);
    EXPECT_FALSE(buffer.can_transform("base", "lidar"));
    nerve::Error missing = error_of([&] { buffer.lookup("base", "lidar"); });
    EXPECT_EQ(missing.status(), NERVE_STATUS_NOT_FOUND);
    EXPECT_NE(std::string(missing.what()).find("lidar"), std::string::npos) << missing.what();
}

// The feeder sends one message with metadata and ends: range-for sees it, then the input
// closing, then the stream's end. The dataflow gives the node parameters.
TEST(CppNode, RangeForOverEvents) {
    nerve::Node node;
    EXPECT_EQ(node.param_float("gain"), 2.5);
    EXPECT_EQ(node.param_string("mode"), std::string(300, 'x')) << "longer than a first guess of room";
    EXPECT_EQ(node.param_json("limits"), "[1,2]");
    EXPECT_EQ(node.param_int("ticks"), 150);
    EXPECT_TRUE(node.param_bool("armed"));
    EXPECT_EQ(error_of([&] { node.param_int("gain"); }).status(), NERVE_STATUS_WRONG_TYPE);
    std::vector<std::string> changes;
    node.on_param_change([&](nerve::ParamChange &change) {
        changes.push_back(std::string(change.key()) + "=" + std::string(change.value_json()));
        if (change.key() == "ticks") throw std::invalid_argument("ticks are fixed");
        if (change.key() == "gain" && change.value_json() == "0.0") change.refuse("gain must not be 0");
    });
    node.set_param("gain", 3.0);
    node.set_param("mode", "slow");
    node.declare_param("fresh", "7");
    EXPECT_EQ(node.param_int("fresh"), 7);
    nerve::Error zero = error_of([&] { node.set_param("gain", 0.0); });
    EXPECT_EQ(zero.status(), NERVE_STATUS_REFUSED);
    EXPECT_NE(std::string(zero.what()).find("gain must not be 0"), std::string::npos) << zero.what();
    nerve::Error thrown = error_of([&] { node.set_param("ticks", 1); });
    EXPECT_NE(std::string(thrown.what()).find("ticks are fixed"), std::string::npos) << thrown.what();
    EXPECT_EQ(node.param_float("gain"), 3.0);
    EXPECT_EQ(node.param_int("ticks"), 150);
    EXPECT_EQ(changes, (std::vector<std::string>{"gain=3.0", "mode=\"slow\"", "gain=0.0", "ticks=1"}));

    std::vector<nerve_event_type> types;
    for (nerve::Event &event : node) {
        types.push_back(event.type());
        if (event.type() == NERVE_EVENT_TYPE_INPUT) {
            EXPECT_EQ(event.id(), "in");
            EXPECT_EQ(event.parameter_int("n"), 7);
            EXPECT_EQ(event.parameter_string("name"), "seven");
            EXPECT_EQ(event.bytes().size, 4 * sizeof(int64_t));
        }
    }
    EXPECT_TRUE(node.ended());
    EXPECT_EQ(types, (std::vector<nerve_event_type>{NERVE_EVENT_TYPE_INPUT, NERVE_EVENT_TYPE_INPUT_CLOSED}));
    EXPECT_FALSE(node.sim_time());
    EXPECT_GT(node.now_ns(), 0u);
}

}  // namespace
