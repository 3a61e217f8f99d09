/* {{name}}: a nerve node. It answers every input with the number of bytes that input held, on
 * output `out`. */
#include <nerve.h>
#include <stdio.h>

int main(void) {
    nerve_node *node;
    if (nerve_node_init_from_env(&node) != NERVE_STATUS_OK) {
        fprintf(stderr, "{{name}}: %s\n", nerve_last_error());
        return 1;
    }
    nerve_event *event;
    int status = NERVE_STATUS_OK;
    while (status == NERVE_STATUS_OK && nerve_node_next_event(node, -1, &event) == NERVE_STATUS_OK) {
        nerve_event_type type;
        nerve_event_get_type(event, &type);
        if (type == NERVE_EVENT_TYPE_INPUT) {
            const char *id;
            const uint8_t *data;
            uint64_t len;
            size_t size;
            nerve_event_input_id(event, &id);
            if (nerve_event_bytes(event, &data, &size) != NERVE_STATUS_OK) {
                /* Strings, lists, structs and nulls are read with nerve_event_arrow. */
                fprintf(stderr, "{{name}}: %s\n", nerve_last_error());
            } else {
                printf("%s: %zu bytes\n", id, size);
                /* Replace this with the node's work. Every output it sends must be listed under
                 * the node's `outputs:` in the dataflow. */
                len = size;
                status = nerve_node_send_bytes(node, "out", NULL, (const uint8_t *)&len, sizeof len);
                if (status != NERVE_STATUS_OK) fprintf(stderr, "{{name}}: %s\n", nerve_last_error());
            }
        } else if (type == NERVE_EVENT_TYPE_ERROR) {
            const char *message;
            nerve_event_error(event, &message);
            fprintf(stderr, "{{name}}: %s\n", message);
        }
        nerve_event_free(event);
        if (type == NERVE_EVENT_TYPE_STOP) break;
    }
    nerve_node_free(node);
    return status == NERVE_STATUS_OK ? 0 : 1;
}
