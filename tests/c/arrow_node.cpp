// A node that reads every value with Arrow C++ (the library inside the pyarrow wheel), through
// the Arrow C data interface that nerve exports: each must import, validate, print as pyarrow
// printed it, and (for bytes) be the very shared memory nerve_event_bytes shows. Each is then
// exported by Arrow C++ and sent back, through nerve_node_send_arrow.
#include <arrow/api.h>
#include <arrow/c/bridge.h>
#include <nerve.h>

#include <cstdio>
#include <string>

static int fail(const std::string &what) {
    std::fprintf(stderr, "arrow_node: %s\n", what.c_str());
    return 1;
}

static std::string parameter(const nerve_event *event, const char *key) {
    const char *text;
    size_t len;
    if (nerve_event_parameter_string(event, key, &text, &len) != NERVE_STATUS_OK) return "";
    return std::string(text, len);
}

int main() {
    nerve_node *node;
    if (nerve_node_init_from_env(&node) != NERVE_STATUS_OK) return fail(nerve_last_error());
    int received = 0;
    nerve_event *event;
    while (nerve_node_next_event(node, -1, &event) == NERVE_STATUS_OK) {
        nerve_event_type type;
        nerve_event_get_type(event, &type);
        if (type != NERVE_EVENT_TYPE_INPUT) {
            nerve_event_free(event);
            continue;
        }
        std::string name = parameter(event, "case"), expected = parameter(event, "expected");
        struct ArrowArray c_array;
        struct ArrowSchema c_schema;
        if (nerve_event_arrow(event, &c_array, &c_schema) != NERVE_STATUS_OK) return fail(nerve_last_error());
        const uint8_t *bytes = nullptr;
        size_t len = 0;
        bool one_buffer = nerve_event_bytes(event, &bytes, &len) == NERVE_STATUS_OK;
        // The imported array owns the shared block now: the event may go first.
        nerve_event_free(event);
        auto imported = arrow::ImportArray(&c_array, &c_schema);
        if (!imported.ok()) return fail(name + ": " + imported.status().ToString());
        std::shared_ptr<arrow::Array> array = *imported;
        if (auto valid = array->ValidateFull(); !valid.ok()) return fail(name + ": " + valid.ToString());
        if (array->ToString() != expected) return fail(name + ": " + array->ToString() + " is not " + expected);
        if (name == "bytes") {
            auto values = array->data()->buffers[1]->data() + array->offset();
            if (!one_buffer || values != bytes || len != static_cast<size_t>(array->length()))
                return fail("bytes: Arrow C++ does not view the shared memory nerve_event_bytes shows");
        }
        struct ArrowArray out_array;
        struct ArrowSchema out_schema;
        if (!arrow::ExportArray(*array, &out_array, &out_schema).ok()) return fail(name + ": export");
        std::string parameters = "{\"case\": \"" + name + "\"}";
        if (nerve_node_send_arrow(node, "echo", parameters.c_str(), &out_array, &out_schema) != NERVE_STATUS_OK)
            return fail(name + ": " + nerve_last_error());
        if (out_array.release != nullptr) return fail(name + ": nerve did not take the array");
        out_schema.release(&out_schema);
        received++;
    }
    std::printf("arrow_node: %d arrays imported by Arrow C++ and sent back\n", received);
    nerve_node_free(node);
    return received == 6 ? 0 : 1;
}
