/* Checks every counter (its value and its `frame` parameter) and every blob (each byte), in
 * order, until the producer's outputs close. */
#include <nerve.h>
#include <stdio.h>
#include <string.h>

#define COUNT 50
#define BLOB (64 * 1024)

static int fail(const char *what) {
    fprintf(stderr, "consumer: %s: %s\n", what, nerve_last_error());
    return 1;
}

int main(void) {
    nerve_node *node;
    if (nerve_node_init_from_env(&node) != NERVE_STATUS_OK) return fail("init");
    uint64_t counters = 0, blobs = 0;
    nerve_event *event;
    int status;
    while ((status = nerve_node_next_event(node, -1, &event)) == NERVE_STATUS_OK) {
        nerve_event_type type;
        nerve_event_get_type(event, &type);
        if (type == NERVE_EVENT_TYPE_INPUT) {
            const char *id;
            const uint8_t *data;
            size_t len;
            nerve_event_input_id(event, &id);
            if (nerve_event_bytes(event, &data, &len) != NERVE_STATUS_OK) return fail(id);
            if (strcmp(id, "counter") == 0) {
                uint64_t value;
                int64_t frame;
                if (len != sizeof value) return fail("counter of a wrong size");
                memcpy(&value, data, sizeof value);
                if (nerve_event_parameter_int(event, "frame", &frame) != NERVE_STATUS_OK) return fail("frame");
                if (value != counters || frame != (int64_t)counters) {
                    fprintf(stderr, "consumer: counter %llu (frame %lld), expected %llu\n",
                            (unsigned long long)value, (long long)frame, (unsigned long long)counters);
                    return 1;
                }
                counters++;
            } else {
                if (len != BLOB) return fail("blob of a wrong size");
                for (size_t i = 0; i < len; i++) {
                    if (data[i] != (uint8_t)(blobs + i)) {
                        fprintf(stderr, "consumer: blob %llu differs at byte %zu\n", (unsigned long long)blobs, i);
                        return 1;
                    }
                }
                blobs++;
            }
        }
        nerve_event_free(event);
        if (type == NERVE_EVENT_TYPE_STOP) break;
    }
    if (status < 0) return fail("next event");
    nerve_node_free(node);
    printf("consumer: %llu counters and %llu blobs, all in order\n", (unsigned long long)counters,
           (unsigned long long)blobs);
    return counters == COUNT && blobs == COUNT ? 0 : 1;
}
