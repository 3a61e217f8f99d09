// A node's parameters from C. ParamMisuse.* run as a plain program (NULL and freed handles);
// InNode.* run in order as node `c-params` of dataflows/params.yml, whose node `param-setter`
// (nodes/param_setter.py) sets a parameter with `nerve param set` once told the callback is in
// place. The waits are a condition variable the callback signals and the setter's message,
// never sleeps.
#include <pthread.h>

#include <cmath>
#include <condition_variable>
#include <mutex>

#include "common.h"

namespace {

constexpr auto WAIT = std::chrono::seconds(30);

TEST(ParamMisuse, NullAndFreedHandles) {
    int64_t i;
    double f;
    bool b;
    char buffer[8];
    size_t len;
    EXPECT_STATUS(nerve_node_param_get_int(nullptr, "k", &i), NERVE_STATUS_NULL_ARGUMENT, "nerve_node_param_get_int",
                  "`node` is NULL");
    EXPECT_STATUS(nerve_node_param_get_float(nullptr, "k", &f), NERVE_STATUS_NULL_ARGUMENT, "`node` is NULL");
    EXPECT_STATUS(nerve_node_param_get_bool(nullptr, "k", &b), NERVE_STATUS_NULL_ARGUMENT, "`node` is NULL");
    EXPECT_STATUS(nerve_node_param_get_string(nullptr, "k", buffer, sizeof buffer, &len), NERVE_STATUS_NULL_ARGUMENT,
                  "nerve_node_param_get_string");
    EXPECT_STATUS(nerve_node_param_get_json(nullptr, "k", buffer, sizeof buffer, &len), NERVE_STATUS_NULL_ARGUMENT,
                  "nerve_node_param_get_json");
    EXPECT_STATUS(nerve_node_param_set_int(nullptr, "k", 1), NERVE_STATUS_NULL_ARGUMENT, "nerve_node_param_set_int");
    EXPECT_STATUS(nerve_node_param_set_json(nullptr, "k", "1"), NERVE_STATUS_NULL_ARGUMENT, "set_json");
    EXPECT_STATUS(nerve_node_param_declare_json(nullptr, "k", "1"), NERVE_STATUS_NULL_ARGUMENT, "declare_json");
    EXPECT_STATUS(nerve_node_param_on_change(nullptr, nullptr, nullptr), NERVE_STATUS_NULL_ARGUMENT,
                  "nerve_node_param_on_change");
    EXPECT_STATUS(nerve_node_param_get_int(freed_pointer<nerve_node>(), "k", &i), NERVE_STATUS_INVALID_HANDLE,
                  "not a live nerve_node");
    // A change handle exists only during an on-change callback's call.
    EXPECT_STATUS(nerve_param_change_refuse(freed_pointer<nerve_param_change>(), "no"), NERVE_STATUS_INVALID_HANDLE,
                  "nerve_param_change_refuse", "not a live nerve_param_change");
    EXPECT_STATUS(nerve_param_change_refuse(nullptr, "no"), NERVE_STATUS_NULL_ARGUMENT, "`change` is NULL");
}

// What the on-change callback saw, and a condition variable it signals.
struct Changes {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<std::pair<std::string, std::string>> seen;  // key, value as JSON
    std::vector<bool> on_caller_thread;
    pthread_t caller = pthread_self();
    std::string old_value;  // what nerve_node_param_get_json gave inside the callback

    bool wait_for(size_t count) {
        std::unique_lock lock(mutex);
        return changed.wait_for(lock, WAIT, [&] { return seen.size() >= count; });
    }
};

nerve_node *node = nullptr;
Changes changes;

// Refuses a negative speed, as a driver guards its hardware; reads the old value meanwhile.
void on_change(const char *key, const char *value_json, nerve_param_change *change, void *user_data) {
    auto *c = static_cast<Changes *>(user_data);
    char old[64];
    size_t len;
    if (nerve_node_param_get_json(node, key, old, sizeof old, &len) != NERVE_STATUS_OK) old[0] = '\0';
    if (value_json[0] == '-') nerve_param_change_refuse(change, "speed must be >= 0");
    std::lock_guard lock(c->mutex);
    c->seen.emplace_back(key, value_json);
    c->on_caller_thread.push_back(pthread_equal(pthread_self(), c->caller) != 0);
    c->old_value = old;
    c->changed.notify_all();
}

TEST(InNode, Init) { ASSERT_OK(nerve_node_init_from_env(&node)); }

TEST(InNode, TypedGettersReadTheDataflowsValues) {
    int64_t ticks;
    double speed;
    bool boost;
    char mode[16];
    size_t len;
    ASSERT_OK(nerve_node_param_get_int(node, "ticks", &ticks));
    EXPECT_EQ(ticks, 150);
    ASSERT_OK(nerve_node_param_get_float(node, "speed", &speed));
    EXPECT_EQ(speed, 0.5);
    ASSERT_OK(nerve_node_param_get_bool(node, "boost", &boost));
    EXPECT_FALSE(boost);
    ASSERT_OK(nerve_node_param_get_string(node, "mode", mode, sizeof mode, &len));
    EXPECT_STREQ(mode, "cruise");
    EXPECT_EQ(len, 6u);
    ASSERT_OK(nerve_node_param_get_json(node, "wheels", mode, sizeof mode, &len));
    EXPECT_STREQ(mode, "[0.3,0.3]");
}

TEST(InNode, WrongTypesUnknownKeysAndSmallBuffersAreNamed) {
    int64_t i;
    double f;
    char small[4];
    size_t len = 0;
    EXPECT_STATUS(nerve_node_param_get_int(node, "speed", &i), NERVE_STATUS_WRONG_TYPE, "nerve_node_param_get_int",
                  "parameter `speed` is a float, not an int");
    EXPECT_STATUS(nerve_node_param_get_float(node, "ticks", &f), NERVE_STATUS_WRONG_TYPE,
                  "parameter `ticks` is an int, not a float");
    EXPECT_STATUS(nerve_node_param_get_string(node, "wheels", small, sizeof small, &len), NERVE_STATUS_WRONG_TYPE,
                  "is a list of float, not a string");
    EXPECT_STATUS(nerve_node_param_get_float(node, "sped", &f), NERVE_STATUS_NOT_FOUND,
                  "node `c-params` has no parameter `sped`", "speed");
    EXPECT_STATUS(nerve_node_param_get_string(node, "mode", small, sizeof small, &len), NERVE_STATUS_BUFFER_TOO_SMALL,
                  "7 bytes");
    EXPECT_EQ(len, 6u);
    EXPECT_STATUS(nerve_node_param_get_int(node, nullptr, &i), NERVE_STATUS_NULL_ARGUMENT, "`key` is NULL");
    EXPECT_STATUS(nerve_node_param_get_int(node, "ticks", nullptr), NERVE_STATUS_NULL_ARGUMENT, "`value` is NULL");
    EXPECT_STATUS(nerve_node_param_set_string(node, "speed", "fast"), NERVE_STATUS_WRONG_TYPE,
                  "parameter `speed` is a float, not a string");
    EXPECT_STATUS(nerve_node_param_set_float(node, "speed", std::nan("")), NERVE_STATUS_INVALID_ARGUMENT,
                  "not a finite number");
    EXPECT_STATUS(nerve_node_param_set_json(node, "wheels", "[1, \"a\"]"), NERVE_STATUS_INVALID_ARGUMENT,
                  "`json`", "one type");
    EXPECT_STATUS(nerve_node_param_set_json(node, "wheels", "[1,"), NERVE_STATUS_INVALID_ARGUMENT, "is not JSON");
    EXPECT_STATUS(nerve_node_param_set_bool(node, "nothing", true), NERVE_STATUS_NOT_FOUND, "no parameter `nothing`");
    EXPECT_STATUS(nerve_node_param_declare_json(node, "bad-key", "1"), NERVE_STATUS_INVALID_ARGUMENT, "bad-key");
    EXPECT_STATUS(nerve_node_param_declare_json(node, "ticks", "true"), NERVE_STATUS_WRONG_TYPE,
                  "parameter `ticks` is an int, not a bool");
    EXPECT_STATUS(nerve_node_param_on_change(node, nullptr, nullptr), NERVE_STATUS_NULL_ARGUMENT,
                  "`callback` is NULL");
}

TEST(InNode, DeclaredAndSetFromC) {
    int64_t gain;
    ASSERT_OK(nerve_node_param_declare_json(node, "gain", "3"));
    ASSERT_OK(nerve_node_param_declare_json(node, "ticks", "100"));  // the dataflow's 150 stays
    ASSERT_OK(nerve_node_param_set_int(node, "gain", 4));
    ASSERT_OK(nerve_node_param_get_int(node, "gain", &gain));
    EXPECT_EQ(gain, 4);
    ASSERT_OK(nerve_node_param_get_int(node, "ticks", &gain));
    EXPECT_EQ(gain, 150);
    ASSERT_OK(nerve_node_param_set_json(node, "wheels", "[1, 2.5]"));  // ints among floats are floats
    char json[32];
    size_t len;
    ASSERT_OK(nerve_node_param_get_json(node, "wheels", json, sizeof json, &len));
    EXPECT_STREQ(json, "[1.0,2.5]");
}

TEST(InNode, CallbackRunsOnTheSettersThreadAndMayRefuse) {
    ASSERT_OK(nerve_node_param_on_change(node, on_change, &changes));
    ASSERT_OK(nerve_node_param_set_int(node, "speed", 2));  // an int set on a float is the float
    ASSERT_TRUE(changes.wait_for(1));
    EXPECT_STATUS(nerve_node_param_set_float(node, "speed", -1.0), NERVE_STATUS_REFUSED,
                  "nerve_node_param_set_float", "rejected speed = -1.0", "speed must be >= 0");
    ASSERT_TRUE(changes.wait_for(2));
    double speed;
    ASSERT_OK(nerve_node_param_get_float(node, "speed", &speed));
    EXPECT_EQ(speed, 2.0);
    std::lock_guard lock(changes.mutex);
    using Seen = std::vector<std::pair<std::string, std::string>>;
    EXPECT_EQ(changes.seen, (Seen{{"speed", "2.0"}, {"speed", "-1.0"}}));
    EXPECT_EQ(changes.on_caller_thread, (std::vector<bool>{true, true}));
    EXPECT_EQ(changes.old_value, "2.0");  // the callback still saw the stored value
}

TEST(InNode, SetFromTheCommandLine) {
    // Tell the setter the callback is in place; it runs `nerve param set c-params speed 1.5`,
    // then `... speed -2` (refused: it checks the command printed the callback's reason), then
    // says so with a message.
    ASSERT_OK(nerve_node_send_bytes(node, "ready", nullptr, nullptr, 0));
    ASSERT_TRUE(changes.wait_for(4)) << "the callback did not see `nerve param set`";
    nerve_event *event = nullptr;
    ASSERT_OK(nerve_node_next_event(node, 30000, &event));
    const char *id;
    ASSERT_OK(nerve_event_input_id(event, &id));
    EXPECT_STREQ(id, "applied");
    nerve_event_free(event);
    double speed;
    ASSERT_OK(nerve_node_param_get_float(node, "speed", &speed));
    EXPECT_EQ(speed, 1.5);
    std::lock_guard lock(changes.mutex);
    EXPECT_EQ(changes.seen[2], (std::pair<std::string, std::string>{"speed", "1.5"}));
    EXPECT_EQ(changes.seen[3], (std::pair<std::string, std::string>{"speed", "-2.0"}));
    // `nerve param set` reaches the node's control thread, not this one.
    EXPECT_FALSE(changes.on_caller_thread[2]);
}

TEST(InNode, Free) {
    ASSERT_OK(nerve_node_free(node));
    double speed;
    EXPECT_STATUS(nerve_node_param_get_float(node, "speed", &speed), NERVE_STATUS_INVALID_HANDLE,
                  "not a live nerve_node");
}

}  // namespace
