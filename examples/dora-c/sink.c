/* A dora-rs C sink: checks that the messages and the operator's counts come in order, logs each
 * through dora_log. */
#include "node_api.h"
#include <stdio.h>
#include <string.h>

#define COUNT 20

int main(void) {
    void *dora_context = init_dora_context_from_env();
    if (dora_context == NULL) return 1;
    int received = 0, counted = 0;
    void *event;
    while ((event = dora_next_event(dora_context)) != NULL) {
        enum DoraEventType type = read_dora_event_type(event);
        if (type == DoraEventType_Input) {
            char *id, *data;
            size_t id_len, len;
            char expected[32];
            read_dora_input_id(event, &id, &id_len);
            read_dora_input_data(event, &data, &len);
            int is_count = id_len == 7 && memcmp(id, "counter", 7) == 0;
            int want = is_count ? snprintf(expected, sizeof expected, "%d: message %d", counted + 1, counted)
                                : snprintf(expected, sizeof expected, "message %d", received);
            if (len != (size_t)want || memcmp(data, expected, len) != 0 || read_dora_input_timestamp(event) == 0) {
                fprintf(stderr, "sink: got `%.*s`, expected `%s`\n", (int)len, data, expected);
                return 1;
            }
            dora_log(dora_context, "info", 4, data, len);
            if (is_count)
                counted++;
            else
                received++;
        }
        free_dora_event(event);
        if (type == DoraEventType_Stop) break;
    }
    printf("sink: %d messages in order, %d counted by the operator\n", received, counted);
    free_dora_context(dora_context);
    return received == COUNT && counted == COUNT ? 0 : 1;
}
