/*
 * operator_api.h: dora-rs's C operator API, implemented by nerve's libnerve. A shared-library
 * operator (a node's `operators:` entry with `shared-library:`) defines the three functions
 * below; nerve's operator host loads the library in the node's process and calls them:
 * dora_init_operator once, dora_on_event for each event of the operator's inputs (and the
 * stop), dora_drop_operator at the end. Build the library with
 *   cc -shared -fPIC operator.c -o build/liboperator.so \
 *     $(PKG_CONFIG_PATH="$(nerve --lib-dir)/pkgconfig" pkg-config --cflags --libs nerve)
 */
#ifndef NERVE_OPERATOR_API_H
#define NERVE_OPERATOR_API_H

#include <stddef.h>

#include "operator_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef _WIN32
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

/* Makes the operator's state; its result's error, if any, ends the node. */
EXPORT DoraInitResult_t dora_init_operator(void);

/* Frees the operator's state, after its last event. */
EXPORT DoraResult_t dora_drop_operator(void *operator_context);

/* Handles one event; send_output is valid during the call only. An error in the result ends
 * the node with its text. */
EXPORT OnEventResult_t dora_on_event(RawEvent_t *event, const SendOutput_t *send_output, void *operator_context);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NERVE_OPERATOR_API_H */
