/* A dora-rs C sink: checks that the messages come in order, logs each through dora_log. */
#include "node_api.h"
#include <stdio.h>
#include <string.h>

#define COUNT 20

int main(void) {
    void *dora_context = init_dora_context_from_env();
    if (dora_context == NULL) return 1;
    int received = 0;
    void *event;
    while ((event = dora_next_event(dora_context)) != NULL) {
        enum DoraEventType type = read_dora_event_type(event);
        if (type == DoraEventType_Input) {
            char *data;
            size_t len;
            char expected[32];
            read_dora_input_data(event, &data, &len);
            int want = snprintf(expected, sizeof expected, "message %d", received);
            if (len != (size_t)want || memcmp(data, expected, len) != 0 || read_dora_input_timestamp(event) == 0) {
                fprintf(stderr, "sink: got `%.*s`, expected `%s`\n", (int)len, data, expected);
                return 1;
            }
            dora_log(dora_context, "info", 4, data, len);
            received++;
        }
        free_dora_event(event);
        if (type == DoraEventType_Stop) break;
    }
    printf("sink: %d messages in order\n", received);
    free_dora_context(dora_context);
    return received == COUNT ? 0 : 1;
}
