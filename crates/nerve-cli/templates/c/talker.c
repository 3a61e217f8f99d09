/* talker: sends a greeting on `message` at every tick, ten times, then exits. */
#include <nerve.h>
#include <stdio.h>
#include <string.h>

#define MESSAGES 10

int main(void) {
    nerve_node *node;
    if (nerve_node_init_from_env(&node) != NERVE_STATUS_OK) {
        fprintf(stderr, "talker: %s\n", nerve_last_error());
        return 1;
    }
    int sent = 0;
    nerve_event *event;
    while (sent < MESSAGES && nerve_node_next_event(node, -1, &event) == NERVE_STATUS_OK) {
        nerve_event_type type;
        nerve_event_get_type(event, &type);
        nerve_event_free(event);
        if (type == NERVE_EVENT_TYPE_STOP) break;
        if (type != NERVE_EVENT_TYPE_INPUT) continue;
        char text[32];
        int len = snprintf(text, sizeof text, "hello #%d", sent);
        /* Plain bytes, copied once into shared memory; nerve_node_send_arrow sends Arrow arrays. */
        if (nerve_node_send_bytes(node, "message", NULL, (const uint8_t *)text, (size_t)len) != NERVE_STATUS_OK) {
            fprintf(stderr, "talker: %s\n", nerve_last_error());
            nerve_node_free(node);
            return 1;
        }
        sent++;
    }
    printf("talker sent %d messages\n", sent);
    nerve_node_free(node);
    return 0;
}
