/* Sends one message of each size of SIZES, written in place into shared memory (a loan),
 * with its size and checksum as metadata parameters. */
#include <nerve.h>
#include <stdio.h>

#include "checksum.h"

static int fail(void) {
    fprintf(stderr, "sizes_producer: %s\n", nerve_last_error());
    return 1;
}

int main(void) {
    nerve_node *node;
    if (nerve_node_init_from_env(&node) != NERVE_STATUS_OK) return fail();
    for (size_t k = 0; k < N_SIZES; k++) {
        char parameters[96];
        snprintf(parameters, sizeof parameters, "{\"size\": %zu, \"checksum\": \"%016llx\"}", SIZES[k],
                 (unsigned long long)checksum_of_seed(SIZES[k], k));
        nerve_sample *sample;
        uint8_t *data;
        size_t len;
        if (nerve_node_loan(node, "data", parameters, SIZES[k], &sample) != NERVE_STATUS_OK) return fail();
        if (nerve_sample_data(sample, &data, &len) != NERVE_STATUS_OK) return fail();
        fill_words(data, len, k);
        if (nerve_node_send_sample(node, sample) != NERVE_STATUS_OK) return fail();
    }
    printf("sizes_producer: sent %zu messages\n", N_SIZES);
    return nerve_node_free(node) == NERVE_STATUS_OK ? 0 : 1;
}
