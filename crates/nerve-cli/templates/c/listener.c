/* listener: prints every message that arrives on its `message` input. */
#include <nerve.h>
#include <stdio.h>

int main(void) {
    nerve_node *node;
    if (nerve_node_init_from_env(&node) != NERVE_STATUS_OK) {
        fprintf(stderr, "listener: %s\n", nerve_last_error());
        return 1;
    }
    int received = 0;
    nerve_event *event;
    /* Events come until STOP or until every input has closed (NERVE_STATUS_END). */
    while (nerve_node_next_event(node, -1, &event) == NERVE_STATUS_OK) {
        nerve_event_type type;
        nerve_event_get_type(event, &type);
        if (type == NERVE_EVENT_TYPE_INPUT) {
            const uint8_t *data;
            size_t len;
            uint64_t sent_at;
            /* In shared memory, valid until the event is freed. */
            if (nerve_event_bytes(event, &data, &len) == NERVE_STATUS_OK) {
                nerve_event_timestamp(event, &sent_at);
                printf("listener got \"%.*s\" (sent at %llu ns)\n", (int)len, (const char *)data,
                       (unsigned long long)sent_at);
                received++;
            } else {
                fprintf(stderr, "listener: %s\n", nerve_last_error());
            }
        }
        nerve_event_free(event);
        if (type == NERVE_EVENT_TYPE_STOP) break;
    }
    printf("listener received %d messages\n", received);
    nerve_node_free(node);
    return 0;
}
