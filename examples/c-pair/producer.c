/* Sends COUNT counters, each a one-value UInt64 Arrow array built here and handed over through
 * the Arrow C data interface, and COUNT blocks of BLOB bytes written straight into shared
 * memory (a loan): the consumer reads the very bytes written. Then it returns, which closes
 * its outputs. */
#include <nerve.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT 50
#define BLOB (64 * 1024)

static int fail(const char *what) {
    fprintf(stderr, "producer: %s: %s\n", what, nerve_last_error());
    return 1;
}

/* The array owns its buffers: nerve calls this once it has copied them into shared memory. */
static void release_array(struct ArrowArray *array) {
    free(array->private_data);
    free(array->buffers);
    array->release = NULL;
}

static void release_schema(struct ArrowSchema *schema) { schema->release = NULL; }

static int send_counter(nerve_node *node, uint64_t n) {
    uint64_t *value = malloc(sizeof *value);
    const void **buffers = malloc(2 * sizeof *buffers);
    *value = n;
    buffers[0] = NULL; /* no nulls: no validity bitmap */
    buffers[1] = value;
    struct ArrowArray array = {.length = 1, .n_buffers = 2, .buffers = buffers,
                               .release = release_array, .private_data = value};
    struct ArrowSchema schema = {.format = "L", .name = "", .release = release_schema};
    char parameters[64];
    snprintf(parameters, sizeof parameters, "{\"frame\": %llu}", (unsigned long long)n);
    int status = nerve_node_send_arrow(node, "counter", parameters, &array, &schema);
    schema.release(&schema); /* the schema stays ours; the array was moved into nerve */
    return status;
}

static int send_blob(nerve_node *node, uint64_t n) {
    nerve_sample *sample;
    uint8_t *data;
    size_t len;
    if (nerve_node_loan(node, "blob", NULL, BLOB, &sample) != NERVE_STATUS_OK) return -1;
    nerve_sample_data(sample, &data, &len);
    for (size_t i = 0; i < len; i++) data[i] = (uint8_t)(n + i);
    return nerve_node_send_sample(node, sample);
}

int main(void) {
    nerve_node *node;
    if (nerve_node_init_from_env(&node) != NERVE_STATUS_OK) return fail("init");
    uint64_t sent = 0;
    nerve_event *event;
    while (sent < COUNT && nerve_node_next_event(node, -1, &event) == NERVE_STATUS_OK) {
        nerve_event_type type;
        nerve_event_get_type(event, &type);
        nerve_event_free(event);
        if (type == NERVE_EVENT_TYPE_STOP) break;
        if (type != NERVE_EVENT_TYPE_INPUT) continue;
        if (send_counter(node, sent) != NERVE_STATUS_OK) return fail("send counter");
        if (send_blob(node, sent) != NERVE_STATUS_OK) return fail("send blob");
        sent++;
    }
    printf("producer: sent %llu counters and blobs\n", (unsigned long long)sent);
    nerve_node_free(node);
    return 0;
}
