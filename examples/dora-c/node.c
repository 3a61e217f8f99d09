/* A node written for dora-rs's C API: it includes dora's node_api.h and calls only dora's
 * functions. Built against nerve by pointing the compiler at nerve's headers and library. */
#include "node_api.h"
#include <stdio.h>
#include <string.h>

#define COUNT 20

int main(void) {
    void *dora_context = init_dora_context_from_env();
    if (dora_context == NULL) return 1;
    int sent = 0;
    while (sent < COUNT) {
        void *event = dora_next_event(dora_context);
        if (event == NULL) break; /* the stream ended */
        enum DoraEventType type = read_dora_event_type(event);
        if (type == DoraEventType_Input) {
            char *id;
            size_t id_len;
            read_dora_input_id(event, &id, &id_len);
            if (id_len == 4 && strncmp(id, "tick", 4) == 0) {
                char message[32];
                int len = snprintf(message, sizeof message, "message %d", sent);
                if (dora_send_output(dora_context, "message", 7, message, (size_t)len) != 0) return 1;
                sent++;
            }
        }
        free_dora_event(event);
        if (type == DoraEventType_Stop) break;
    }
    printf("node: sent %d messages\n", sent);
    free_dora_context(dora_context);
    return 0;
}
