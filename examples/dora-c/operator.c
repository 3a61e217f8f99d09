/* An operator written for dora-rs's C operator API: a shared library loaded into its node's
 * process, called once per event. It counts the messages and sends the count with each. */
#include "operator_api.h"
#include <stdio.h>
#include <stdlib.h>

DoraInitResult_t dora_init_operator(void) {
    DoraInitResult_t result = {.operator_context = calloc(1, sizeof(int))};
    return result;
}

DoraResult_t dora_drop_operator(void *operator_context) {
    free(operator_context);
    DoraResult_t result = {0};
    return result;
}

OnEventResult_t dora_on_event(RawEvent_t *event, const SendOutput_t *send_output, void *operator_context) {
    OnEventResult_t result = {.status = DORA_STATUS_CONTINUE};
    int *count = operator_context;
    if (event->input != NULL) {
        Vec_uint8_t data = dora_read_data(event->input);
        if (data.ptr != NULL) {
            char text[64];
            int len = snprintf(text, sizeof text, "%d: %.*s", ++*count, (int)data.len, (const char *)data.ptr);
            result.result = dora_send_operator_output(send_output, "counter", (const uint8_t *)text, (size_t)len);
        }
        dora_free_data(data);
    }
    return result;
}
