/* Checks each message of SIZES from a Python producer: its bytes against the checksum the
 * producer computed, and its Arrow export, which must view the very same shared memory. */
#include <nerve.h>
#include <stdio.h>
#include <stdlib.h>

#include "checksum.h"

static int fail(const char *what) {
    fprintf(stderr, "sizes_consumer: %s: %s\n", what, nerve_last_error());
    return 1;
}

int main(void) {
    nerve_node *node;
    if (nerve_node_init_from_env(&node) != NERVE_STATUS_OK) return fail("init");
    size_t received = 0;
    nerve_event *event;
    while (nerve_node_next_event(node, -1, &event) == NERVE_STATUS_OK) {
        nerve_event_type type;
        if (nerve_event_get_type(event, &type) != NERVE_STATUS_OK) return fail("type");
        if (type == NERVE_EVENT_TYPE_INPUT) {
            const uint8_t *data;
            size_t len;
            const char *sum;
            size_t sum_len;
            int64_t size;
            if (nerve_event_bytes(event, &data, &len) != NERVE_STATUS_OK) return fail("bytes");
            if (nerve_event_parameter_int(event, "size", &size) != NERVE_STATUS_OK) return fail("size");
            if (nerve_event_parameter_string(event, "checksum", &sum, &sum_len) != NERVE_STATUS_OK)
                return fail("checksum");
            char computed[17];
            snprintf(computed, sizeof computed, "%016llx", (unsigned long long)checksum(data, len));
            if (received >= N_SIZES || len != SIZES[received] || (int64_t)len != size || sum_len != 16 ||
                memcmp(sum, computed, 16) != 0) {
                fprintf(stderr, "sizes_consumer: message %zu: %zu bytes (sent %lld), checksum %s (sent %.*s)\n",
                        received, len, (long long)size, computed, (int)sum_len, sum);
                return 1;
            }
            struct ArrowArray array;
            struct ArrowSchema schema;
            if (nerve_event_arrow(event, &array, &schema) != NERVE_STATUS_OK) return fail("arrow");
            const uint8_t *values = (const uint8_t *)array.buffers[1] + array.offset;
            if (strcmp(schema.format, "C") != 0 || array.length != (int64_t)len || values != data) {
                fprintf(stderr, "sizes_consumer: the Arrow export (format %s, %lld values) is not the bytes\n",
                        schema.format, (long long)array.length);
                return 1;
            }
            /* The array holds the shared block by itself: readable after the event is gone. */
            nerve_event_free(event);
            event = NULL;
            if (checksum(values, len) != strtoull(computed, NULL, 16)) return fail("bytes after the event");
            array.release(&array);
            schema.release(&schema);
            received++;
        }
        nerve_event_free(event);
    }
    printf("sizes_consumer: %zu messages, checksums match\n", received);
    nerve_node_free(node);
    return received == N_SIZES ? 0 : 1;
}
