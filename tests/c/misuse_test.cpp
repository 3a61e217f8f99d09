// Abuse of the C API gets a status and a message naming the function and the problem, never a
// crash. Runs under AddressSanitizer, which checks every access this program makes to what nerve
// hands it (ids, bytes, strings) and that nothing leaks; libnerve itself is Rust, which ASan
// does not instrument, so what keeps it from reading a freed handle is its registry of live ones.
//
// Standalone.* run as a plain program; InNode.* run as a node of dataflows/misuse.yml (a
// feeder sends one message, then ends; the run's message limit is 4096 bytes), in order; Clock.*
// as the node of dataflows/sim_time.yml, under nerve run --sim-time.
#include <node_api.h>
#include <operator_types.h>

#include "common.h"

namespace {

TEST(Standalone, InitOutsideNerveSaysHowToRun) {
    unsetenv("NERVE_SOCKET");
    nerve_node *node = nullptr;
    EXPECT_STATUS(nerve_node_init_from_env(&node), NERVE_STATUS_NOT_STARTED_BY_NERVE, "nerve_node_init_from_env",
                  "nerve run");
    EXPECT_EQ(node, nullptr);
    EXPECT_STATUS(nerve_node_init_from_env(nullptr), NERVE_STATUS_NULL_ARGUMENT, "`node` is NULL");
    EXPECT_STATUS(nerve_node_init(nullptr, &node), NERVE_STATUS_NULL_ARGUMENT, "nerve_node_init", "`id` is NULL");
    EXPECT_EQ(init_dora_context_from_env(), nullptr);
}

TEST(Standalone, NullHandlesAreRefused) {
    nerve_event *event;
    nerve_event_type type;
    const char *text;
    const uint8_t *data;
    size_t len;
    uint64_t stamp;
    int64_t n;
    ArrowArray array;
    ArrowSchema schema;
    nerve_sample *sample;
    EXPECT_STATUS(nerve_node_next_event(nullptr, 0, &event), NERVE_STATUS_NULL_ARGUMENT, "nerve_node_next_event",
                  "`node` is NULL");
    EXPECT_STATUS(nerve_node_send_bytes(nullptr, "out", nullptr, nullptr, 0), NERVE_STATUS_NULL_ARGUMENT,
                  "nerve_node_send_bytes");
    EXPECT_STATUS(nerve_node_send_arrow(nullptr, "out", nullptr, nullptr, nullptr), NERVE_STATUS_NULL_ARGUMENT,
                  "`array` is NULL");
    EXPECT_STATUS(nerve_node_loan(nullptr, "out", nullptr, 8, &sample), NERVE_STATUS_NULL_ARGUMENT, "nerve_node_loan");
    EXPECT_STATUS(nerve_node_log(nullptr, "info", "x"), NERVE_STATUS_NULL_ARGUMENT, "nerve_node_log", "`node` is NULL");
    EXPECT_STATUS(nerve_node_send_sample(nullptr, nullptr), NERVE_STATUS_NULL_ARGUMENT, "nerve_node_send_sample");
    EXPECT_STATUS(nerve_event_get_type(nullptr, &type), NERVE_STATUS_NULL_ARGUMENT, "`event` is NULL");
    EXPECT_STATUS(nerve_event_input_id(nullptr, &text), NERVE_STATUS_NULL_ARGUMENT, "nerve_event_input_id");
    EXPECT_STATUS(nerve_event_bytes(nullptr, &data, &len), NERVE_STATUS_NULL_ARGUMENT, "nerve_event_bytes");
    EXPECT_STATUS(nerve_event_timestamp(nullptr, &stamp), NERVE_STATUS_NULL_ARGUMENT, "nerve_event_timestamp");
    EXPECT_STATUS(nerve_event_parameter_int(nullptr, "k", &n), NERVE_STATUS_NULL_ARGUMENT, "parameter_int");
    EXPECT_STATUS(nerve_event_arrow(nullptr, &array, &schema), NERVE_STATUS_NULL_ARGUMENT, "nerve_event_arrow");
    EXPECT_STATUS(nerve_sample_data(nullptr, nullptr, &len), NERVE_STATUS_NULL_ARGUMENT, "nerve_sample_data");
    // Freeing NULL is no error, as with free().
    EXPECT_EQ(nerve_event_free(nullptr), NERVE_STATUS_OK);
    EXPECT_EQ(nerve_node_free(nullptr), NERVE_STATUS_OK);
    EXPECT_EQ(nerve_sample_free(nullptr), NERVE_STATUS_OK);
}

TEST(Standalone, ForeignPointersAreRefusedUnread) {
    nerve_event_type type;
    EXPECT_STATUS(nerve_event_get_type(freed_pointer<nerve_event>(), &type), NERVE_STATUS_INVALID_HANDLE,
                  "not a live nerve_event");
    EXPECT_STATUS(nerve_event_free(freed_pointer<nerve_event>()), NERVE_STATUS_INVALID_HANDLE, "nerve_event_free");
    EXPECT_STATUS(nerve_node_free(freed_pointer<nerve_node>()), NERVE_STATUS_INVALID_HANDLE, "not a live nerve_node");
    EXPECT_STATUS(nerve_sample_free(freed_pointer<nerve_sample>()), NERVE_STATUS_INVALID_HANDLE, "nerve_sample");
}

TEST(Standalone, DoraFunctionsSurviveNull) {
    char *ptr = reinterpret_cast<char *>(1);
    size_t len = 1;
    EXPECT_EQ(read_dora_event_type(nullptr), DoraEventType_Unknown);
    EXPECT_EQ(read_dora_event_type(freed_pointer<void>()), DoraEventType_Unknown);
    read_dora_input_id(nullptr, &ptr, &len);
    EXPECT_EQ(ptr, nullptr);
    EXPECT_EQ(len, 0u);
    read_dora_input_data(freed_pointer<void>(), &ptr, &len);
    EXPECT_EQ(ptr, nullptr);
    EXPECT_EQ(read_dora_input_timestamp(nullptr), 0u);
    EXPECT_EQ(dora_send_output(nullptr, "out", 3, "x", 1), -1);
    EXPECT_EQ(dora_log(nullptr, "info", 4, "x", 1), -1);
    free_dora_event(freed_pointer<void>());
    free_dora_context(nullptr);
}

TEST(Standalone, DoraOperatorFunctionsSurviveNull) {
    EXPECT_EQ(dora_read_input_id(nullptr), nullptr);
    Vec_uint8_t data = dora_read_data(nullptr);
    EXPECT_EQ(data.ptr, nullptr);
    dora_free_data(data);
    dora_free_input_id(nullptr);
    nerve_dora_free_error(nullptr);
    const uint8_t byte = 1;
    DoraResult_t result = dora_send_operator_output(nullptr, "out", &byte, 1);
    ASSERT_NE(result.error, nullptr);
    std::string text(reinterpret_cast<const char *>(result.error->ptr), result.error->len);
    EXPECT_NE(text.find("dora_send_operator_output: send_output is NULL"), std::string::npos) << text;
    nerve_dora_free_error(result.error);
}

TEST(Standalone, StatusNames) {
    EXPECT_STREQ(nerve_status_name(NERVE_STATUS_TOO_LARGE), "NERVE_STATUS_TOO_LARGE");
    EXPECT_STREQ(nerve_status_name(12345), "unknown status");
}

// --- in a node ---

nerve_node *node = nullptr;

nerve_event *next_of_type(nerve_event_type wanted) {
    nerve_event *event;
    while (nerve_node_next_event(node, -1, &event) == NERVE_STATUS_OK) {
        nerve_event_type type;
        EXPECT_EQ(nerve_event_get_type(event, &type), NERVE_STATUS_OK);
        if (type == wanted) return event;
        nerve_event_free(event);
    }
    return nullptr;
}

TEST(InNode, Init) { ASSERT_EQ(nerve_node_init_from_env(&node), NERVE_STATUS_OK) << last_error(); }

TEST(InNode, AnInputMisread) {
    nerve_event *event = next_of_type(NERVE_EVENT_TYPE_INPUT);
    ASSERT_NE(event, nullptr);
    int64_t n;
    double ratio;
    const char *text;
    size_t len;
    char small[4];
    ASSERT_EQ(nerve_event_parameter_int(event, "n", &n), NERVE_STATUS_OK) << last_error();
    EXPECT_EQ(n, 7);
    ASSERT_EQ(nerve_event_parameter_float(event, "ratio", &ratio), NERVE_STATUS_OK);
    EXPECT_EQ(ratio, 0.5);
    ASSERT_EQ(nerve_event_parameter_string(event, "name", &text, &len), NERVE_STATUS_OK);
    EXPECT_EQ(std::string(text, len), "seven");
    EXPECT_STATUS(nerve_event_parameter_int(event, "missing", &n), NERVE_STATUS_NOT_FOUND, "parameter `missing`");
    EXPECT_STATUS(nerve_event_parameter_int(event, "name", &n), NERVE_STATUS_WRONG_TYPE, "`name`", "not an integer");
    EXPECT_STATUS(nerve_event_parameter_json(event, "name", small, sizeof small, &len), NERVE_STATUS_BUFFER_TOO_SMALL,
                  "8 bytes");
    EXPECT_EQ(len, 7u);  // "seven" with its quotes
    EXPECT_STATUS(nerve_event_error(event, &text), NERVE_STATUS_WRONG_EVENT, "INPUT event has no error message");
    EXPECT_STATUS(nerve_event_get_type(reinterpret_cast<nerve_event *>(node), nullptr), NERVE_STATUS_INVALID_HANDLE,
                  "not a live nerve_event");
    const uint8_t *data;
    ASSERT_EQ(nerve_event_bytes(event, &data, &len), NERVE_STATUS_OK);
    EXPECT_EQ(len, 4 * sizeof(int64_t));

    ASSERT_EQ(nerve_event_free(event), NERVE_STATUS_OK);
    nerve_event_type type;
    EXPECT_STATUS(nerve_event_get_type(event, &type), NERVE_STATUS_INVALID_HANDLE, "nerve_event_get_type",
                  "freed or used up");
    EXPECT_STATUS(nerve_event_bytes(event, &data, &len), NERVE_STATUS_INVALID_HANDLE, "nerve_event_bytes");
    EXPECT_STATUS(nerve_event_free(event), NERVE_STATUS_INVALID_HANDLE, "nerve_event_free");
    EXPECT_EQ(read_dora_event_type(event), DoraEventType_Unknown);
}

TEST(InNode, WrongOutputIsNamed) {
    EXPECT_STATUS(nerve_node_send_bytes(node, "nope", nullptr, nullptr, 0), NERVE_STATUS_UNKNOWN_OUTPUT,
                  "nerve_node_send_bytes", "no output `nope`", "declared outputs: out, typed");
    nerve_sample *sample = nullptr;
    EXPECT_STATUS(nerve_node_loan(node, "nope", nullptr, 8, &sample), NERVE_STATUS_UNKNOWN_OUTPUT, "nerve_node_loan");
    EXPECT_EQ(dora_send_output(node, "nope", 4, "x", 1), -1);
}

TEST(InNode, ALogRecordNeedsAKnownLevel) {
    EXPECT_STATUS(nerve_node_log(node, "loud", "x"), NERVE_STATUS_INVALID_ARGUMENT, "nerve_node_log", "`level` is `loud`");
    EXPECT_STATUS(nerve_node_log(node, "warn", nullptr), NERVE_STATUS_NULL_ARGUMENT, "`message` is NULL");
    EXPECT_EQ(nerve_node_log(node, "warn", "logged from C"), NERVE_STATUS_OK) << last_error();
    EXPECT_EQ(dora_log(node, "error", 5, "from dora_log", 13), 0);
    EXPECT_EQ(dora_log(node, "loud", 4, "x", 1), -1);
}

TEST(InNode, ValueOfAnotherTypeThanDeclaredIsRefused) {
    uint8_t byte = 1;
    EXPECT_STATUS(nerve_node_send_bytes(node, "typed", nullptr, &byte, 1), NERVE_STATUS_WRONG_TYPE,
                  "nerve_node_send_bytes", "output `typed` is declared `std_msgs/msg/Float64`", "nothing was sent");
    nerve_sample *sample = nullptr;
    EXPECT_STATUS(nerve_node_loan(node, "typed", nullptr, 8, &sample), NERVE_STATUS_WRONG_TYPE, "nerve_node_loan");
}

TEST(InNode, OversizedMessageIsRefused) {
    std::vector<uint8_t> big(8192, 1);
    EXPECT_STATUS(nerve_node_send_bytes(node, "out", nullptr, big.data(), big.size()), NERVE_STATUS_TOO_LARGE,
                  "exceeds the limit of 4096 bytes", "`out`");
    nerve_sample *sample = nullptr;
    EXPECT_STATUS(nerve_node_loan(node, "out", nullptr, big.size(), &sample), NERVE_STATUS_TOO_LARGE, "nerve_node_loan");
    EXPECT_EQ(nerve_node_send_bytes(node, "out", nullptr, big.data(), 64), NERVE_STATUS_OK) << last_error();
}

TEST(InNode, ParametersMustBeAJsonObject) {
    EXPECT_STATUS(nerve_node_send_bytes(node, "out", "[1, 2]", nullptr, 0), NERVE_STATUS_INVALID_ARGUMENT,
                  "`parameters_json` is not a JSON object");
    EXPECT_STATUS(nerve_node_send_bytes(node, "out", "{", nullptr, 0), NERVE_STATUS_INVALID_ARGUMENT, "is not JSON");
    EXPECT_EQ(nerve_node_send_bytes(node, "out", "{\"k\": 1}", nullptr, 0), NERVE_STATUS_OK) << last_error();
}

TEST(InNode, SampleIsUsedUpBySending) {
    nerve_sample *sample;
    uint8_t *data;
    size_t len;
    ASSERT_EQ(nerve_node_loan(node, "out", nullptr, 16, &sample), NERVE_STATUS_OK) << last_error();
    ASSERT_EQ(nerve_sample_data(sample, &data, &len), NERVE_STATUS_OK);
    EXPECT_EQ(len, 16u);
    ASSERT_EQ(nerve_node_send_sample(node, sample), NERVE_STATUS_OK) << last_error();
    EXPECT_STATUS(nerve_node_send_sample(node, sample), NERVE_STATUS_INVALID_HANDLE, "not a live nerve_sample");
    EXPECT_STATUS(nerve_sample_data(sample, &data, &len), NERVE_STATUS_INVALID_HANDLE, "nerve_sample_data");
    EXPECT_STATUS(nerve_sample_free(sample), NERVE_STATUS_INVALID_HANDLE, "nerve_sample_free");
}

bool released = false;
void release_array(ArrowArray *array) {
    released = true;
    array->release = nullptr;
}
void release_schema(ArrowSchema *schema) { schema->release = nullptr; }

TEST(InNode, BadArrowIsRefusedAndReleased) {
    int64_t value = 1;
    const void *buffers[2] = {nullptr, &value};
    ArrowArray array{};
    array.length = 1;
    array.n_buffers = 2;
    array.buffers = buffers;
    array.release = release_array;
    ArrowSchema schema{};
    schema.format = "not a format";
    schema.name = "";
    schema.release = release_schema;
    EXPECT_STATUS(nerve_node_send_arrow(node, "out", nullptr, &array, &schema), NERVE_STATUS_INVALID_ARGUMENT,
                  "nerve_node_send_arrow", "Arrow C data interface");
    EXPECT_TRUE(released);
    EXPECT_EQ(array.release, nullptr);
    schema.release(&schema);
}

TEST(InNode, ClockKeepsRealTime) {
    uint64_t now = 0, monotonic = nerve_monotonic_ns();
    bool simulated = true;
    ASSERT_OK(nerve_node_now_ns(node, &now));
    EXPECT_GT(now, 1600000000ull * 1000000000ull) << "the wall clock, in ns since the Unix epoch";
    ASSERT_OK(nerve_node_sim_time(node, &simulated));
    EXPECT_FALSE(simulated);
    EXPECT_STATUS(nerve_node_set_sim_time(node, 5), NERVE_STATUS_REFUSED, "nerve_node_set_sim_time", "--sim-time");
    EXPECT_GE(nerve_monotonic_ns(), monotonic);
    EXPECT_STATUS(nerve_node_now_ns(nullptr, &now), NERVE_STATUS_NULL_ARGUMENT, "`node` is NULL");
    EXPECT_STATUS(nerve_node_add_timer(node, "in", 1000), NERVE_STATUS_INVALID_ARGUMENT, "nerve_node_add_timer", "`in`");
}

TEST(InNode, InputClosedThenEnd) {
    nerve_event *event = next_of_type(NERVE_EVENT_TYPE_INPUT_CLOSED);
    ASSERT_NE(event, nullptr);
    const char *id;
    ASSERT_EQ(nerve_event_input_id(event, &id), NERVE_STATUS_OK);
    EXPECT_STREQ(id, "in");
    uint64_t stamp;
    EXPECT_STATUS(nerve_event_timestamp(event, &stamp), NERVE_STATUS_WRONG_EVENT, "INPUT_CLOSED event has no timestamp");
    nerve_event_free(event);
    EXPECT_EQ(nerve_node_next_event(node, -1, &event), NERVE_STATUS_END);
    EXPECT_EQ(event, nullptr);
    EXPECT_EQ(nerve_node_next_event(node, 0, &event), NERVE_STATUS_END);
}

// --- a node of dataflows/sim_time.yml, run with --sim-time: Clock.* ---

TEST(Clock, SimulatedTimeDrivesTheClockAndTimers) {
    nerve_node *sim;
    ASSERT_OK(nerve_node_init_from_env(&sim));
    bool simulated = false;
    ASSERT_OK(nerve_node_sim_time(sim, &simulated));
    EXPECT_TRUE(simulated);
    ASSERT_OK(nerve_node_add_timer(sim, "tick", 1000000000));
    EXPECT_STATUS(nerve_node_add_timer(sim, "tick", 5), NERVE_STATUS_INVALID_ARGUMENT, "tick");
    ASSERT_OK(nerve_node_set_sim_time(sim, 5000000000));
    uint64_t now = 0;
    ASSERT_OK(nerve_node_now_ns(sim, &now));
    EXPECT_EQ(now, 5000000000u);
    nerve_event *event;
    ASSERT_OK(nerve_node_next_event(sim, 30000, &event));  // the timer, due at 1 s, is past
    const char *id;
    ASSERT_OK(nerve_event_input_id(event, &id));
    EXPECT_STREQ(id, "tick");
    nerve_event_free(event);
    ASSERT_OK(nerve_node_free(sim));
}

TEST(InNode, FreedNodeIsRefused) {
    ASSERT_EQ(nerve_node_free(node), NERVE_STATUS_OK);
    EXPECT_STATUS(nerve_node_send_bytes(node, "out", nullptr, nullptr, 0), NERVE_STATUS_INVALID_HANDLE,
                  "not a live nerve_node");
    EXPECT_STATUS(nerve_node_free(node), NERVE_STATUS_INVALID_HANDLE, "nerve_node_free");
}

}  // namespace
