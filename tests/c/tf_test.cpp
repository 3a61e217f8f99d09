// Transforms from C, with no dataflow: a C broadcaster in another process (this program run
// again as Peer.Broadcaster) looked up from C, and the lookup's errors. Each run keeps to a
// domain of its own, so the transforms of tests running at once never meet. Waits are the
// lookup's own timeout and nerve's barriers, never sleeps.
#include <cmath>

#include "common.h"

namespace {

constexpr const char *PEER_DOMAIN = "NERVE_TF_TEST_DOMAIN";
constexpr int64_t WAIT_MS = 10000;
constexpr int64_t T0 = 1'000'000'000, T1 = 2'000'000'000;
const double HALF_SQRT2 = std::sqrt(0.5);

uint32_t own_domain() { return 1000 + static_cast<uint32_t>(getpid() % 100000); }

std::string done_topic(uint32_t domain) { return "c/tf_done_" + std::to_string(domain); }

nerve_transform pose(int64_t stamp, double x, double y, double z, nerve_quaternion q = {0, 0, 0, 1}) {
    return nerve_transform{stamp, {x, y, z}, q};
}

// Run by Transforms.CBroadcasterInAnotherProcess only, in a process of its own: the camera is
// bolted to the base (static, turned 90 degrees about z), the base moves along x in the world,
// sent at 100 Hz (as a robot's driver does) until the looking process says it is done.
TEST(Peer, Broadcaster) {
    const char *domain_text = std::getenv(PEER_DOMAIN);
    if (domain_text == nullptr) GTEST_SKIP() << "the broadcasting half of Transforms.CBroadcasterInAnotherProcess";
    auto domain = static_cast<uint32_t>(std::stoul(domain_text));
    nerve_tf_broadcaster *fixed, *moving;
    ASSERT_OK(nerve_tf_broadcaster_new(domain, true, &fixed));
    ASSERT_OK(nerve_tf_broadcaster_new(domain, false, &moving));
    nerve_transform camera = pose(NERVE_TF_NOW, 0.2, 0.0, 0.5, {0, 0, HALF_SQRT2, HALF_SQRT2});
    ASSERT_OK(nerve_tf_broadcaster_send(fixed, "base", "camera", &camera));
    nerve_subscriber *done;
    ASSERT_OK(nerve_subscriber_new(done_topic(domain).c_str(), nullptr, &done));
    nerve_event *event = nullptr;
    int status;
    do {
        nerve_transform at_t0 = pose(T0, 0.0, 0.0, 0.0), at_t1 = pose(T1, 2.0, 0.0, 0.0);
        ASSERT_OK(nerve_tf_broadcaster_send(moving, "world", "base", &at_t0));
        ASSERT_OK(nerve_tf_broadcaster_send(moving, "world", "base", &at_t1));
    } while ((status = nerve_subscriber_recv(done, 10, &event)) == NERVE_STATUS_TIMEOUT);
    ASSERT_OK(status);
    nerve_event_free(event);
    nerve_subscriber_free(done);
    nerve_tf_broadcaster_free(moving);
    nerve_tf_broadcaster_free(fixed);
}

void expect_pose(const nerve_transform &t, double x, double y, double z, nerve_quaternion q) {
    EXPECT_NEAR(t.translation.x, x, 1e-9);
    EXPECT_NEAR(t.translation.y, y, 1e-9);
    EXPECT_NEAR(t.translation.z, z, 1e-9);
    EXPECT_NEAR(t.rotation.x, q.x, 1e-9);
    EXPECT_NEAR(t.rotation.y, q.y, 1e-9);
    EXPECT_NEAR(t.rotation.z, q.z, 1e-9);
    EXPECT_NEAR(t.rotation.w, q.w, 1e-9);
}

TEST(Transforms, CBroadcasterInAnotherProcess) {
    uint32_t domain = own_domain();
    nerve_tf_buffer *buffer;
    ASSERT_OK(nerve_tf_buffer_new(domain, 0, &buffer));
    pid_t peer = spawn_self("Peer.Broadcaster", PEER_DOMAIN, std::to_string(domain));
    ASSERT_GT(peer, 0);

    // Halfway between T0 and T1 the base is at x = 1: the camera is 0.2 further, 0.5 up.
    nerve_transform t{};
    const nerve_quaternion turned{0, 0, HALF_SQRT2, HALF_SQRT2};
    ASSERT_OK(nerve_tf_buffer_lookup(buffer, "world", "camera", (T0 + T1) / 2, WAIT_MS, &t));
    expect_pose(t, 1.2, 0.0, 0.5, turned);
    EXPECT_EQ(t.stamp_ns, (T0 + T1) / 2);
    ASSERT_OK(nerve_tf_buffer_lookup(buffer, "world", "camera", NERVE_TF_LATEST, 0, &t));
    expect_pose(t, 2.2, 0.0, 0.5, turned);
    EXPECT_EQ(t.stamp_ns, T1);
    // The other way round: the world's origin seen from the camera.
    ASSERT_OK(nerve_tf_buffer_lookup(buffer, "camera", "base", NERVE_TF_LATEST, 0, &t));
    expect_pose(t, 0.0, 0.2, -0.5, {0, 0, -HALF_SQRT2, HALF_SQRT2});

    // Past the newest transform: nothing to interpolate, at once or after waiting.
    EXPECT_STATUS(nerve_tf_buffer_lookup(buffer, "world", "camera", 3 * T1, 0, &t), NERVE_STATUS_NOT_FOUND,
                  "nerve_tf_buffer_lookup", "`camera`", "`world`", "extrapolate into the future");

    nerve_publisher *done;
    ASSERT_OK(nerve_publisher_new(done_topic(domain).c_str(), nullptr, &done));
    ASSERT_OK(nerve_publisher_wait_for_subscribers(done, 1, WAIT_MS));
    ASSERT_OK(nerve_publisher_send_bytes(done, nullptr, nullptr, 0));
    EXPECT_TRUE(exited_well(peer)) << "the broadcasting process failed";
    nerve_publisher_free(done);
    nerve_tf_buffer_free(buffer);
}

TEST(Transforms, UnknownFramesAndTimeoutsNameBothFrames) {
    nerve_tf_buffer *buffer;
    ASSERT_OK(nerve_tf_buffer_new(own_domain(), 0, &buffer));
    nerve_transform t = pose(7, 1, 2, 3);
    EXPECT_STATUS(nerve_tf_buffer_lookup(buffer, "map", "laser", NERVE_TF_LATEST, 0, &t), NERVE_STATUS_NOT_FOUND,
                  "nerve_tf_buffer_lookup", "no transform from `laser` to `map`", "unknown frame");
    EXPECT_STATUS(nerve_tf_buffer_lookup(buffer, "map", "laser", NERVE_TF_LATEST, 50, &t), NERVE_STATUS_TIMEOUT,
                  "no transform from `laser` to `map` within 50 ms", "unknown frame");
    EXPECT_EQ(t.stamp_ns, 7) << "written on success only";
    nerve_tf_buffer_free(buffer);
}

TEST(TfMisuse, NullFreedAndInvalid) {
    nerve_tf_buffer *buffer;
    nerve_tf_broadcaster *broadcaster;
    nerve_transform t = pose(NERVE_TF_NOW, 0, 0, 0);
    EXPECT_STATUS(nerve_tf_buffer_new(0, 0, nullptr), NERVE_STATUS_NULL_ARGUMENT, "nerve_tf_buffer_new",
                  "`buffer` is NULL");
    EXPECT_STATUS(nerve_tf_buffer_lookup(nullptr, "a", "b", NERVE_TF_LATEST, 0, &t), NERVE_STATUS_NULL_ARGUMENT,
                  "`buffer` is NULL");
    EXPECT_STATUS(nerve_tf_buffer_lookup(freed_pointer<nerve_tf_buffer>(), "a", "b", NERVE_TF_LATEST, 0, &t),
                  NERVE_STATUS_INVALID_HANDLE, "not a live nerve_tf_buffer");
    EXPECT_STATUS(nerve_tf_broadcaster_send(nullptr, "a", "b", &t), NERVE_STATUS_NULL_ARGUMENT,
                  "nerve_tf_broadcaster_send", "`broadcaster` is NULL");
    EXPECT_EQ(nerve_tf_buffer_free(nullptr), NERVE_STATUS_OK);
    EXPECT_EQ(nerve_tf_broadcaster_free(nullptr), NERVE_STATUS_OK);

    ASSERT_OK(nerve_tf_buffer_new(own_domain(), 0, &buffer));
    EXPECT_STATUS(nerve_tf_buffer_lookup(buffer, nullptr, "b", NERVE_TF_LATEST, 0, &t), NERVE_STATUS_NULL_ARGUMENT,
                  "`target` is NULL");
    EXPECT_STATUS(nerve_tf_buffer_lookup(buffer, "a", "b", NERVE_TF_LATEST, 0, nullptr), NERVE_STATUS_NULL_ARGUMENT,
                  "`transform` is NULL");
    EXPECT_STATUS(nerve_tf_buffer_lookup(buffer, "a", "b", NERVE_TF_LATEST, -1, &t), NERVE_STATUS_INVALID_ARGUMENT,
                  "`timeout_ms` is -1");
    // A buffer is no broadcaster.
    EXPECT_STATUS(nerve_tf_broadcaster_send(reinterpret_cast<nerve_tf_broadcaster *>(buffer), "a", "b", &t),
                  NERVE_STATUS_INVALID_HANDLE, "not a live nerve_tf_broadcaster");
    ASSERT_OK(nerve_tf_buffer_free(buffer));
    EXPECT_STATUS(nerve_tf_buffer_lookup(buffer, "a", "b", NERVE_TF_LATEST, 0, &t), NERVE_STATUS_INVALID_HANDLE,
                  "nerve_tf_buffer_lookup");

    ASSERT_OK(nerve_tf_broadcaster_new(own_domain(), false, &broadcaster));
    EXPECT_STATUS(nerve_tf_broadcaster_send(broadcaster, "a", "b", nullptr), NERVE_STATUS_NULL_ARGUMENT,
                  "`transform` is NULL");
    EXPECT_STATUS(nerve_tf_broadcaster_send(broadcaster, "", "b", &t), NERVE_STATUS_INVALID_ARGUMENT,
                  "invalid transform `` -> `b`", "empty");
    nerve_transform no_rotation = pose(NERVE_TF_NOW, 0, 0, 0, {0, 0, 0, 0});
    EXPECT_STATUS(nerve_tf_broadcaster_send(broadcaster, "a", "b", &no_rotation), NERVE_STATUS_INVALID_ARGUMENT,
                  "invalid transform `a` -> `b`", "quaternion");
    nerve_transform far = pose(NERVE_TF_NOW, INFINITY, 0, 0);
    EXPECT_STATUS(nerve_tf_broadcaster_send(broadcaster, "a", "b", &far), NERVE_STATUS_INVALID_ARGUMENT,
                  "not finite");
    ASSERT_OK(nerve_tf_broadcaster_free(broadcaster));
    EXPECT_STATUS(nerve_tf_broadcaster_send(broadcaster, "a", "b", &t), NERVE_STATUS_INVALID_HANDLE,
                  "not a live nerve_tf_broadcaster");
}

}  // namespace
