/*
 * node_api.h: dora-rs's C node API, implemented by nerve's libnerve, so a dora C node builds
 * against nerve by changing its include path and library only. The signatures are dora's.
 *
 * The context is a nerve_node and the events are nerve_events (nerve.h), so a node may use
 * both headers. Where dora reports failure (NULL, -1), the reason is printed to standard
 * error and nerve_last_error() gives it.
 *
 * Thread-safety: as dora's. A context is used by one thread at a time; an event may be read
 * by several threads at once; a context or an event is freed once, when no thread uses it.
 */
#ifndef NERVE_NODE_API_H
#define NERVE_NODE_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum DoraEventType {
    DoraEventType_Stop,
    DoraEventType_Input,
    DoraEventType_InputClosed,
    DoraEventType_Error,
    DoraEventType_Unknown,
};
typedef enum DoraEventType DoraEventType;

/* Connects the node `nerve run` started this process as, and waits until every node of the
 * dataflow is ready. Returns the context (free it with free_dora_context), or NULL. */
void *init_dora_context_from_env(void);

/* Disconnects and frees the context; NULL does nothing. */
void free_dora_context(void *dora_context);

/* Waits for the next event (free it with free_dora_event); NULL once the stream has ended:
 * a stop was delivered, or every input closed. */
void *dora_next_event(void *dora_context);

/* Frees an event: pointers read from it are invalid afterwards. NULL does nothing. */
void free_dora_event(void *dora_event);

/* The event's type; DoraEventType_Unknown for anything that is not a live event. */
enum DoraEventType read_dora_event_type(void *dora_event);

/* The input id of an input event (also NUL-terminated), owned by the event; NULL and 0 for
 * other events. */
void read_dora_input_id(void *dora_event, char **out_ptr, size_t *out_len);

/* The bytes of an input event's value, owned by the event and viewing shared memory (a
 * primitive Arrow array's values as laid out in memory); NULL and 0 for other events or
 * values that are not one buffer. */
void read_dora_input_data(void *dora_event, char **out_ptr, size_t *out_len);

/* The send time of an input event's message: the sender's CLOCK_MONOTONIC in nanoseconds. */
unsigned long long read_dora_input_timestamp(void *dora_event);

/* Sends data_len bytes on output id (id_len bytes, no NUL needed): 0, or -1 on failure. */
int dora_send_output(void *dora_context, const char *id_ptr, size_t id_len, const char *data_ptr, size_t data_len);

/* Prints "level: msg" to standard output, which `nerve run` shows with the node's id. */
int dora_log(void *dora_context, const char *level_ptr, size_t level_len, const char *msg_ptr, size_t msg_len);

#ifdef __cplusplus
}
#endif

#endif /* NERVE_NODE_API_H */
